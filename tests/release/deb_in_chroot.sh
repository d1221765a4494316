#!/usr/bin/env bash
# Installs the .deb into a clean Debian 12 (debootstrap --variant=minbase bookworm) and uses it
# there: apt resolves the package's dependencies from Debian's archive, then htrace-correct and
# htrace-config answer --help/--version, pkg-config and the CMake package files are in place, and
# an MPI program traced with the installed libhtrace writes an archive that htrace-correct corrects.
# Needs root and access to a Debian mirror; takes a few minutes. Not run by ctest unless the build
# is configured with -DHTRACE_TEST_DEB=ON.
#   deb_in_chroot.sh PACKAGE.deb MPI_PROGRAM [CHROOT_DIR]
# MPI_PROGRAM: a dynamically linked MPI program printing " OK" (the build's pingpong-ring).
set -euo pipefail
deb=$(realpath "$1")
program=$(realpath "$2")
root=${3:-/tmp/htrace-deb-chroot}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
fail() { echo "FAIL: $*"; exit 1; }
[[ $(id -u) -eq 0 ]] || { echo "SKIP: needs root (debootstrap, chroot)"; exit 77; }
command -v debootstrap >/dev/null || { echo "SKIP: debootstrap is not installed"; exit 77; }

if [[ ! -x $root/usr/bin/apt-get ]]; then
  rm -rf "$root"
  debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.log" 2>&1 ||
    { tail -20 "$root.log"; echo "SKIP: debootstrap failed (no mirror reachable?)"; exit 77; }
fi
mounted=()
cleanup() { for m in "${mounted[@]}"; do umount -l "$m" || true; done; }
trap cleanup EXIT
# Open MPI needs /proc and a shared-memory directory; hwloc reads the topology from /sys.
for fs in proc sys dev/shm; do
  mkdir -p "$root/$fs"
  if ! mountpoint -q "$root/$fs"; then
    case $fs in
      proc) mount -t proc proc "$root/proc" ;;
      sys) mount -t sysfs sysfs "$root/sys" ;;
      *) mount -t tmpfs tmpfs "$root/$fs" ;;
    esac
    mounted=("$root/$fs" "${mounted[@]}")
  fi
done

cp "$deb" "$root/tmp/htrace.deb"
cp "$program" "$root/tmp/mpi-program"
# Each rank writes its output into a file itself: mpirun may drop lines it forwards.
cp "$(dirname "${BASH_SOURCE[0]}")/../lib/htrace_test/rank_files.sh" "$root/tmp/rank_files.sh"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"; }
in_root apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive in_root apt-get install -y -qq /tmp/htrace.deb >"$root/tmp/apt.log" 2>&1 ||
  { tail -20 "$root/tmp/apt.log"; fail "apt-get install htrace.deb"; }
in_root dpkg -s htrace | grep -E '^(Version|Depends):'

in_root grep -q '^License: BSD-3-Clause$' /usr/share/doc/htrace/copyright || fail "no copyright file"
in_root htrace-correct --help >/dev/null || fail "htrace-correct --help"
in_root htrace-correct --version || fail "htrace-correct --version"
in_root htrace-config >/dev/null || fail "htrace-config"
lib=$(in_root sh -c 'ls /usr/lib/libhtrace.so /usr/lib/*/libhtrace.so 2>/dev/null | head -1')
[[ -n $lib ]] || fail "libhtrace.so is not installed"
in_root sh -c 'ls /usr/lib/pkgconfig/htrace.pc /usr/lib/*/pkgconfig/htrace.pc 2>/dev/null | grep -q .' ||
  fail "htrace.pc is not installed"
in_root sh -c 'ls /usr/lib/cmake/htrace/htraceConfig.cmake /usr/lib/*/cmake/htrace/htraceConfig.cmake 2>/dev/null | grep -q .' ||
  fail "htraceConfig.cmake is not installed"
in_root man -w htrace-correct >/dev/null 2>&1 || in_root test -f /usr/share/man/man1/htrace-correct.1.gz ||
  in_root test -f /usr/share/man/man1/htrace-correct.1 || fail "no man page"

in_root sh -c "cd /tmp && rm -rf trace corrected ranks && mkdir ranks && OMPI_ALLOW_RUN_AS_ROOT=1 \
  OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 HTRACE_ARCHIVE_NAME=trace mpirun --oversubscribe -np 2 -x LD_PRELOAD=$lib \
  -x HTRACE_ARCHIVE_NAME sh /tmp/rank_files.sh /tmp/ranks /tmp/mpi-program" >/dev/null ||
  fail "traced run in the chroot"
said=$(in_root sh -c "cat /tmp/ranks/*.out")
grep -q " OK" <<<"$said" || fail "traced run in the chroot: $said"
in_root test -f /tmp/trace/traces.otf2 || fail "the traced run wrote no archive"
in_root htrace-correct /tmp/trace /tmp/corrected >/dev/null || fail "htrace-correct in the chroot"
echo "OK: $(basename "$deb") installs and runs on a clean Debian 12 ($root)"
