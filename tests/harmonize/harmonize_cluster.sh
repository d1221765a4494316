#!/usr/bin/env bash
# MPIX_Harmonize from the preloaded libhtrace.so on the emulated cluster (4 nodes x 1 rank with
# known clock offsets, among them -1.5 s and +3 s).
#   skew      ranks leaving with flag = 1 leave within BOUND_US (200) of each other in true time:
#             every rank's median deviation from the round's median exit; the median per-round
#             spread, which on 2 shared cores is the scheduler's, within SPREAD_BOUND_US (20 ms:
#             a wrong clock offset would show as seconds); tracing disabled (HTRACE_ENABLE=0)
#   subcomm   two halves of MPI_COMM_WORLD harmonize independently with a 20 ms expiry, so each
#             half resynchronizes on its own; a resync on MPI_COMM_WORLD would hang (TIMEOUT)
#   traced    tracing enabled: the run works and the archive holds none of MPIX_Harmonize's traffic
# The program's result lines are read from the files its ranks write
# (tests/lib/htrace_test/rank_files.sh), not from what the launcher forwards.
set -euo pipefail
mode=$1
prog=$HTRACE_BUILD_DIR/tests/harmonize/harmonize_exit_skew
offsets=0,0.000250,-1.5,3
bound_us=${BOUND_US:-200}
spread_bound_us=${SPREAD_BOUND_US:-20000}
work=$(mktemp -d /tmp/htrace-harmonize.XXXXXX)
trap 'rm -rf "$work"' EXIT
export HTRACE_VERBOSE=1
extra="-x LD_PRELOAD=$HTRACE_LIB -x HTRACE_ENABLE -x HTRACE_HARMONIZE_EXPIRY_MS -x HTRACE_VERBOSE"
extra+=" -x HTRACE_ARCHIVE_DIR -x HTRACE_ARCHIVE_NAME"
export HTRACE_ARCHIVE_DIR=$work HTRACE_ARCHIVE_NAME=trace
mkdir "$work/ranks"
# run ARG...: the program on the emulated cluster; then $work/out holds its ranks' stdout (shown)
run() {
  local status=0
  MPIRUN_EXTRA=$extra "$HTRACE_CLUSTER_RUN" --offsets $offsets --ranks-per-node 1 -- \
    sh "$HTRACE_SOURCE_DIR/tests/lib/htrace_test/rank_files.sh" "$work/ranks" "$prog" "$@" || status=$?
  cat "$work/ranks"/*.out >"$work/out" 2>/dev/null || true
  cat "$work/out"
  cat "$work/ranks"/*.err >&2 2>/dev/null || true
  return $status
}

case $mode in
skew)
  # One resynchronization at the start (and after a missed deadline), none on expiry.
  export HTRACE_ENABLE=0 HTRACE_HARMONIZE_EXPIRY_MS=600000
  run --method both --rounds 120 --bound-us "$bound_us" --spread-bound-us "$spread_bound_us"
  grep -q '^harmonize ' "$work/out"
  ;;
subcomm)
  export HTRACE_ENABLE=0 HTRACE_HARMONIZE_EXPIRY_MS=20
  run --method harmonize --rounds 4 --subcomm
  grep -q 'subcommunicators: done without deadlock' "$work/out"
  ;;
traced)
  export HTRACE_ENABLE=1 HTRACE_HARMONIZE_EXPIRY_MS=600000
  run --method both --rounds 40
  "$HTRACE_PYTHON" - "$work/trace" <<'PY'
import collections, sys
import otf2
regions = collections.Counter()
with otf2.reader.open(sys.argv[1] + "/traces.otf2") as trace:
    for location, event in trace.events:
        if isinstance(event, otf2.events.Enter):
            regions[event.region.name] += 1
print(dict(regions))
# exit_skew itself calls MPI_Barrier 40 times per rank (4 ranks) and never MPI_Reduce,
# MPI_Allreduce or MPI_Comm_dup; MPIX_Harmonize uses exactly those, through PMPI only.
leaked = [name for name in ("MPI_Reduce", "MPI_Allreduce", "MPI_Comm_dup") if regions[name]]
assert not leaked, "harmonize traffic in the trace: %s" % leaked
assert regions["MPI_Barrier"] == 4 * 40, regions["MPI_Barrier"]
print("traced: no harmonize traffic in the archive")
PY
  ;;
*) echo "usage: harmonize_cluster.sh skew|subcomm|traced" >&2; exit 2 ;;
esac
