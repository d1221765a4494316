#!/bin/bash
# usage: stamp_accuracy_test.sh STAMP_ACCURACY CLOCK_RATE_SHIM
# TSC stamps, converted the way the recorder converts them, stay within BOUND_NS of the node's
# base clock (the default, CLOCK_MONOTONIC and CLOCK_MONOTONIC_RAW): as it is, shifted by a time
# namespace, and running 100 ppm fast under the shim.
# Without an invariant TSC the stamps are clock_gettime readings and the check is trivial (skip).
set -u
accuracy=$1 shim=$2
bound_ns=${HTRACE_STAMP_BOUND_NS:-1000}
fail() { echo "FAIL: $*"; exit 1; }
check() { # label, command...
  local label=$1
  shift
  out=$("$@" 3 500 50) || fail "$label: exit $? ($out)"
  echo "$label: $out"
  [[ $out == stamps=tsc* ]] || { echo "SKIP: no invariant TSC ($out)"; exit 77; }
  local samples max
  samples=$(sed -E 's/.*samples=([0-9]+).*/\1/' <<<"$out")
  max=$(sed -E 's/.*max_ns=([0-9]+).*/\1/' <<<"$out")
  ((samples > 10000)) || fail "$label: only $samples samples"
  ((max <= bound_ns)) || fail "$label: a stamp is ${max} ns off CLOCK_MONOTONIC (bound $bound_ns ns)"
}
check plain env HTRACE_TSC_STAMPS=1 "$accuracy"
check monotonic env HTRACE_TSC_STAMPS=1 HTRACE_CLOCK=monotonic "$accuracy"
check monotonic_raw env HTRACE_TSC_STAMPS=1 HTRACE_CLOCK=monotonic_raw "$accuracy"
if unshare --time --fork true 2>/dev/null; then
  check "namespace +1000 s" unshare --time --monotonic 1000 --fork env HTRACE_TSC_STAMPS=1 "$accuracy"
fi
check "rate shim +100 ppm" env HTRACE_TSC_STAMPS=1 HTRACE_TEST_CLOCK_RATES=1e-4 LD_PRELOAD="$shim" "$accuracy"
# The shim must really change the clock's rate (about +100 ppm against CLOCK_REALTIME), or the
# last check proves nothing.
ppm=$(sed -E 's/.*mono_vs_realtime_ppm=(-?[0-9.]+).*/\1/' <<<"$out")
awk -v p="$ppm" 'BEGIN { exit !(p > 80 && p < 120) }' || fail "the shim did not make the clock 100 ppm fast ($ppm ppm)"
echo ok
