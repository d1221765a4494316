#!/usr/bin/env bash
# The command-line convention every tool shares (tools/common/cli.h):
#   --help / -h: usage on stdout, exit 0      --version: "<tool> <HTRACE_VERSION_STRING>", exit 0
#   usage error: "<tool>: error: ..." and a hint to --help on stderr, exit 2
# An MPI tool runs on 2 ranks and must say each thing once (rank 0 only). Each rank writes its
# stdout and stderr into files itself (tests/lib/htrace_test/rank_files.sh): what the launcher
# forwards may miss lines, so the checks read the files.
#
# usage: tool_conventions.sh NAME TOOL serial|mpi [CASES]
#   CASES: lines "MESSAGE<TAB>ARG ARG ...": a bad command line (split at blanks) and the exact
#   error it must give; '#' starts a comment line.
set -uo pipefail
name=$1 tool=$2 mode=$3 cases=${4:-/dev/null}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

run() { # run ARG...: stdout, stderr (of all ranks, in rank order) and exit code into $work
  if [[ $mode == mpi ]]; then
    rm -rf "$work/ranks" && mkdir "$work/ranks"
    # shellcheck disable=SC2086
    timeout 60 ${MPIRUN:-mpirun} -np 2 sh "${HTRACE_SOURCE_DIR:?}/tests/lib/htrace_test/rank_files.sh" \
      "$work/ranks" "$tool" "$@" >"$work/launcher" 2>&1
    rc=$?
    cat "$work/ranks"/*.out >"$work/out" 2>/dev/null
    cat "$work/ranks"/*.err >"$work/err" 2>/dev/null
  else
    timeout 60 "$tool" "$@" >"$work/out" 2>"$work/err"
    rc=$?
  fi
}
count() { grep -c -- "$1" "$2"; }

version_header=${HTRACE_BUILD_DIR:?}/include/htrace/version.h
version=$(sed -n 's/^#define HTRACE_VERSION_STRING "\(.*\)"$/\1/p' "$version_header")
[[ -n $version ]] || { echo "no HTRACE_VERSION_STRING in $version_header"; exit 1; }

for help in --help -h; do
  run "$help"
  [[ $rc -eq 0 ]] || fail "$help: exit $rc"
  [[ $(count "^Usage: $name" "$work/out") -eq 1 ]] || fail "$help: no single usage line on stdout"
  [[ $(count "$name: error" "$work/err") -eq 0 ]] || fail "$help: error on stderr"
done

run --version
[[ $rc -eq 0 ]] || fail "--version: exit $rc"
[[ $(cat "$work/out") == "$name $version"* ]] || fail "--version printed '$(cat "$work/out")'"
[[ $(grep -c . "$work/out") -eq 1 ]] || fail "--version: not one line: $(cat "$work/out")"
[[ $(head -1 "$work/out") == "$name $version" ]] || fail "--version: '$(head -1 "$work/out")', expected '$name $version'"

expect_usage_error() { # MESSAGE ARG...
  local message=$1
  shift
  run "$@"
  [[ $rc -eq 2 ]] || fail "$*: exit $rc, expected 2"
  [[ $(count "^$name: error: " "$work/err") -eq 1 ]] || fail "$*: not one error line: $(cat "$work/err")"
  grep -qxF -- "$name: error: $message" "$work/err" || fail "$*: expected '$name: error: $message', got: $(cat "$work/err")"
  grep -qF -- "$name --help" "$work/err" || fail "$*: no hint to --help"
  [[ ! -s $work/out ]] || fail "$*: wrote to stdout: $(cat "$work/out")"
}

expect_usage_error "unknown option '--bogus'" --bogus
while IFS=$'\t' read -r message line; do
  [[ -z $message || $message == "#"* ]] && continue
  read -r -a args <<<"$line"
  expect_usage_error "$message" "${args[@]}"
done <"$cases"

[[ $failures -eq 0 ]] || exit 1
echo PASS
