#!/usr/bin/env bash
# Installs htrace into a temporary prefix and uses it from there only, as a site would:
#  - the module file gives the environment (PATH, LD_LIBRARY_PATH, MANPATH, PKG_CONFIG_PATH,
#    CMAKE_PREFIX_PATH, HTRACE_LIB);
#  - every tool answers --help and --version (the same version as the installed header);
#  - an external C project builds against the prefix with find_package(htrace CONFIG) and with
#    pkg-config, and both programs run under mpirun (their result line read from the file rank 0
#    writes, tests/lib/htrace_test/rank_files.sh: mpirun may drop lines);
#  - an MPI program traced with LD_PRELOAD=$HTRACE_LIB writes an archive that records the
#    version, and the installed htrace-correct corrects it;
#  - the license and Debian's copyright file are installed with the docs.
#   install_and_consume.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mpirun=${MPIRUN:-mpirun --allow-run-as-root --oversubscribe}
work=$(mktemp -d /tmp/htrace-install-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }

# Only the system and the prefix: nothing from the build tree.
export PATH=/usr/local/bin:/usr/bin:/bin
unset LD_LIBRARY_PATH LD_PRELOAD PKG_CONFIG_PATH CMAKE_PREFIX_PATH MANPATH HTRACE_LIB
modulefile=$(find "$prefix/share/modulefiles/htrace" -type f | head -1)
[[ -n $modulefile ]] || fail "no module file under $prefix/share/modulefiles/htrace"
eval "$(tclsh "$here/module_env.tcl" "$modulefile")"
[[ $HTRACE_LIB == "$prefix"/lib*/libhtrace.so && -f $HTRACE_LIB ]] || fail "HTRACE_LIB=$HTRACE_LIB"
[[ $(command -v htrace-correct) == "$prefix/bin/htrace-correct" ]] || fail "PATH does not reach the prefix"
for v in LD_LIBRARY_PATH MANPATH PKG_CONFIG_PATH CMAKE_PREFIX_PATH; do
  [[ ${!v} == "$prefix"* ]] || fail "$v=${!v} does not start with the prefix"
done
man -w htrace-correct >/dev/null 2>&1 || [[ ! -x /usr/bin/man ]] || fail "man htrace-correct: no page on MANPATH"

# The license, and Debian's copyright file (the .deb's /usr/share/doc/htrace/copyright).
cmp -s "$src/LICENSE" "$prefix/share/doc/htrace/LICENSE" || fail "LICENSE is not installed"
grep -q '^License: BSD-3-Clause$' "$prefix/share/doc/htrace/copyright" ||
  fail "share/doc/htrace/copyright names no BSD-3-Clause license"
grep -q '^ Redistribution and use in source and binary forms' "$prefix/share/doc/htrace/copyright" ||
  fail "share/doc/htrace/copyright does not carry the license text"

version=$(sed -n 's/^#define HTRACE_VERSION_STRING "\(.*\)"$/\1/p' "$prefix/include/htrace/version.h")
[[ -n $version ]] || fail "no HTRACE_VERSION_STRING in the installed version.h"
for tool in htrace-correct htrace-config htrace-clockcheck htrace-bench htrace-score; do
  [[ -x $prefix/bin/$tool ]] || fail "$tool is not installed"
  # Resolved from the prefix; RPATH/RUNPATH must not point into the build tree.
  if readelf -d "$prefix/bin/$tool" | grep -E 'R(UN)?PATH' | grep -qF "$build"; then
    fail "$tool has an RPATH into the build tree"
  fi
  out=$("$tool" --help 2>&1) || fail "$tool --help exits $?: $out"
  grep -qi usage <<<"$out" || fail "$tool --help prints no usage"
  out=$("$tool" --version 2>&1) || fail "$tool --version exits $?: $out"
  grep -qF "$version" <<<"$out" || fail "$tool --version says '$out', not $version"
done

# External project, CMake package.
cmake -S "$here/consumer" -B "$work/consumer-cmake" -DCMAKE_BUILD_TYPE=Release >"$work/cmake.log" 2>&1 ||
  { cat "$work/cmake.log"; fail "find_package(htrace CONFIG)"; }
cmake --build "$work/consumer-cmake" >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "consumer build (CMake)"; }
grep -q "HTRACE_LIB=$HTRACE_LIB" "$work/cmake.log" || fail "the package's HTRACE_LIB is not $HTRACE_LIB"
# consume NAME PROGRAM: PROGRAM on 2 ranks, untraced; $out is what its ranks wrote
consume() {
  mkdir "$work/$1-ranks"
  (cd "$work" && HTRACE_ENABLE=0 $mpirun -np 2 sh "$src/tests/lib/htrace_test/rank_files.sh" "$work/$1-ranks" \
    "$2" >"$work/$1.log" 2>&1) || { cat "$work/$1.log" "$work/$1-ranks"/*; fail "consumer ($1) run"; }
  out=$(cat "$work/$1-ranks"/*)
}
consume cmake "$work/consumer-cmake/consumer"
grep -q "consumer: htrace $version (.*) OK" <<<"$out" || fail "consumer (CMake): $out"
# ldd's output first: under pipefail, grep -q ending early can fail the pipe with SIGPIPE.
libs=$(ldd "$work/consumer-cmake/consumer")
grep -q "libhtrace.so => $prefix/" <<<"$libs" || fail "consumer (CMake) does not load the prefix's libhtrace"

# External project, pkg-config (MPI's compiler wrapper supplies MPI's flags).
pkg-config --exists htrace || fail "pkg-config does not find htrace"
[[ $(pkg-config --variable=htrace_lib htrace) == "$HTRACE_LIB" ]] || fail "pkg-config htrace_lib"
mpicc -o "$work/consumer-pc" "$here/consumer/consumer.c" $(pkg-config --cflags --libs htrace) ||
  fail "consumer build (pkg-config)"
consume pkg-config "$work/consumer-pc"
grep -q "consumer: htrace $version (.*) OK" <<<"$out" || fail "consumer (pkg-config): $out"

# A traced program (not linked with htrace: preloaded), corrected by the installed tool.
mpicc -o "$work/pingpong-ring" "$src/examples/pingpong-ring/pingpong-ring.c"
(cd "$work" && HTRACE_ARCHIVE_NAME=trace $mpirun -np 2 -x LD_PRELOAD="$HTRACE_LIB" -x HTRACE_ARCHIVE_NAME \
  ./pingpong-ring >"$work/run.log" 2>&1) || { cat "$work/run.log"; fail "traced run"; }
[[ -f $work/trace/traces.otf2 ]] || { cat "$work/run.log"; fail "the traced run wrote no archive"; }
htrace-correct "$work/trace" "$work/corrected" >"$work/correct.log" 2>&1 || { cat "$work/correct.log"; fail "htrace-correct"; }
if command -v otf2-print >/dev/null; then
  props=$(otf2-print -A "$work/corrected/traces.otf2")
  for p in HTRACE::VERSION HTRACE::CORRECT::VERSION; do
    grep -A1 -x "Property name *$p" <<<"$props" | grep -q "Property value *$version\$" ||
      fail "$p is not $version in the corrected archive"
  done
fi
echo "OK: installed htrace $version into a temporary prefix; tools, CMake package, pkg-config," \
  "module file and a traced run work from there"
