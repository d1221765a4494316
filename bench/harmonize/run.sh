#!/usr/bin/env bash
# Exit-skew distribution of MPIX_Harmonize vs MPI_Barrier in TRUE time on 4 emulated nodes x 2
# ranks (clock offsets 0, +250 us, -1.5 s, +3 s). Methods alternate in blocks of ROUNDS/4 so both
# see the same machine load. Target: median harmonized skew >= 10x smaller than the barrier's.
#
# usage: bench/harmonize/run.sh BUILD_DIR [ROUNDS] [REPEATS]
set -euo pipefail
build=${1:?usage: run.sh BUILD_DIR [ROUNDS] [REPEATS]}
rounds=${2:-400}
repeats=${3:-3}
build=$(cd "$build" && pwd)
prog=$build/bench/harmonize/bench_harmonize_exit_skew
lib=$build/libtrace/libhtrace.so
for f in "$prog" "$lib" "$build/tests/cluster/htrace-cluster-run"; do
  [[ -e $f ]] || { echo "run.sh: error: '$f': not built" >&2; exit 1; }
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Tracing off: the benchmark measures MPIX_Harmonize itself. Expiry long enough that the clocks are
# resynchronized only at the start and after missed deadlines (no drift on one machine).
export HTRACE_ENABLE=0 HTRACE_HARMONIZE_EXPIRY_MS=${HTRACE_HARMONIZE_EXPIRY_MS:-600000}
export MPIRUN_EXTRA="-x LD_PRELOAD=$lib -x HTRACE_ENABLE -x HTRACE_HARMONIZE_EXPIRY_MS -x HTRACE_HARMONIZE_SPIN_US"
export HTRACE_HARMONIZE_SPIN_US=${HTRACE_HARMONIZE_SPIN_US:-200}
echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $rounds rounds x $repeats runs, spin $HTRACE_HARMONIZE_SPIN_US us"
for i in $(seq "$repeats"); do
  echo "## run $i"
  "$build/tests/cluster/htrace-cluster-run" --offsets 0,0.000250,-1.5,3 --ranks-per-node 2 --shm -- \
    "$prog" --method both --rounds "$rounds"
done
