#!/usr/bin/env bash
# Clock synchronization benchmark on the emulated cluster (see README.md):
#  1. htrace-clockcheck on 4 nodes x 2 ranks for h2hca, hca3, hca2, hca, jk: sync duration, max and
#     median error against ground truth right after the sync and after WAIT seconds;
#  2. MPI_Init slowdown at 8 ranks: no tracer vs libhtrace with HTRACE_SYNC=none vs the default.
# usage: bench/clocksync/run.sh [BUILD_DIR]
#   env: WAIT (10), REPEAT (5), OUT (results dir), PARTS ("accuracy init")
set -euo pipefail
build=$(cd "${1:-${HTRACE_BUILD_DIR:-build}}" && pwd)
wait_s=${WAIT:-10}
repeat=${REPEAT:-5}
out=${OUT:-$build/bench/clocksync/results}
mkdir -p "$out"
cluster=$build/tests/cluster/htrace-cluster-run
clockcheck=$build/tools/htrace-clockcheck/htrace-clockcheck
timer=$build/bench/clocksync/clocksync_init_timer
lib=$build/libtrace/libhtrace.so
offsets="0,0.000037,2.5,-1.75"
echo "# clocksync benchmark, $(date -u +%FT%TZ), $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# emulated cluster: node offsets $offsets s, 2 ranks per node (8 ranks)"

parts=${PARTS:-accuracy init}
echo "## 0. cost of clock::now()"
"$build/bench/clocksync/clocksync_now_cost"
if [[ $parts == *accuracy* ]]; then
echo "## 1. accuracy vs ground truth (htrace-clockcheck, wait $wait_s s)"
"$cluster" --offsets "$offsets" --ranks-per-node 2 -- "$clockcheck" \
  --algorithms "h2hca;hca3;hca2;hca;jk" --wait "$wait_s" --csv "$out/accuracy.csv" --per-rank "$out/accuracy-ranks.csv"
fi
[[ $parts == *init* ]] || exit 0

echo "## 2. MPI_Init at 8 ranks (median of $repeat runs each, interleaved; ms, slowest rank)"
[[ -f $lib ]] || { echo "libhtrace.so not built ($lib): skipping part 2"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for ((i = 0; i < repeat; i++)); do
  for variant in plain none h2hca; do
    extra=""
    [[ $variant != plain ]] && extra="-x LD_PRELOAD=$lib -x HTRACE_SYNC=$variant -x HTRACE_ARCHIVE_DIR=$tmp -x HTRACE_VERBOSE=0"
    HTRACE_SYNC=$variant MPIRUN_EXTRA="$extra" "$cluster" --offsets "$offsets" --ranks-per-node 2 -- "$timer" \
      | awk -v v="$variant" '/mpi_init_ms/ { print v, $2, $4 }' >>"$tmp/init.txt"
  done
done
python3 - "$tmp/init.txt" <<'PY' | tee "$out/mpi_init.txt"
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    variant, init_ms, _ = line.split()
    runs.setdefault(variant, []).append(float(init_ms))
med = {v: statistics.median(x) for v, x in runs.items()}
for v in ("plain", "none", "h2hca"):
    if v in runs:
        print(f"{v:6s} MPI_Init median {med[v]:8.2f} ms  (runs: {' '.join(f'{x:.1f}' for x in runs[v])})")
if all(v in med for v in ("plain", "none", "h2hca")):
    print(f"sync cost (h2hca - none): {med['h2hca'] - med['none']:.2f} ms; "
          f"tracer total (h2hca - plain): {med['h2hca'] - med['plain']:.2f} ms")
PY
