#!/usr/bin/env bash
# Clock synchronization benchmark on the emulated cluster (see README.md):
#  1. htrace-clockcheck on 4 nodes x 2 ranks for h2hca, hca3, hca2, hca, jk: sync duration, max and
#     median error against ground truth right after the sync and after WAIT seconds;
#  2. MPI_Init slowdown at 8 ranks: no tracer vs libhtrace with HTRACE_SYNC=none vs the default;
#  3. the cost of the clock measurements during the run at 2, 8 and 32 ranks: an allreduce loop
#     traced with HTRACE_SYNC_INTERVAL_MS=0 (none), =INTERVAL_MS, and one day (the ranks vote
#     whether a measurement is due, but none is), alternated.
# usage: bench/clocksync/run.sh [BUILD_DIR]
#   env: WAIT (10), REPEAT (5), OUT (results dir), PARTS ("accuracy init remeasure"),
#        INTERVAL_MS (100), ITERS_2 / ITERS_8 / ITERS_32 (1000000 / 100000 / 20000: about a second
#        or more of allreduces at each size on 2 cores)
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

parts=${PARTS:-accuracy init remeasure}
echo "## 0. cost of clock::now()"
"$build/bench/clocksync/clocksync_now_cost"
if [[ $parts == *accuracy* ]]; then
echo "## 1. accuracy vs ground truth (htrace-clockcheck, wait $wait_s s)"
"$cluster" --offsets "$offsets" --ranks-per-node 2 -- "$clockcheck" \
  --algorithms "h2hca;hca3;hca2;hca;jk" --wait "$wait_s" --csv "$out/accuracy.csv" --per-rank "$out/accuracy-ranks.csv"
fi
if [[ $parts == *init* ]]; then

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
fi

[[ $parts == *remeasure* ]] || exit 0
echo "## 3. clock measurements during the run (median of $repeat runs each, interleaved)"
interval=${INTERVAL_MS:-100}
declare -A iters=([2]=${ITERS_2:-1000000} [8]=${ITERS_8:-100000} [32]=${ITERS_32:-20000})
loop=$build/bench/clocksync/clocksync_collective_timer
tmp3=$(mktemp -d)
trap 'rm -rf "$tmp3" ${tmp:+"$tmp"}' EXIT
for ranks in 2 8 32; do
  for ((i = 0; i < repeat; i++)); do
    for ms in 0 "$interval" 86400000; do
      name=r$ranks-i$ms-$i
      # Waiting ranks yield: 32 spinning ranks on few cores measure the scheduler, not htrace.
      loop_ms=$(OMPI_MCA_mpi_yield_when_idle=1 HTRACE_SYNC_INTERVAL_MS=$ms HTRACE_ARCHIVE_DIR=$tmp3 \
        HTRACE_ARCHIVE_NAME=$name HTRACE_VERBOSE=0 mpirun --allow-run-as-root --oversubscribe \
        --bind-to none -np "$ranks" -x OMPI_MCA_mpi_yield_when_idle -x LD_PRELOAD="$lib" \
        -x HTRACE_SYNC_INTERVAL_MS -x HTRACE_ARCHIVE_DIR -x HTRACE_ARCHIVE_NAME -x HTRACE_VERBOSE \
        "$loop" "${iters[$ranks]}" | awk '/loop_ms/ { print $2 }')
      # Measurements stored by rank 0's location (every rank stores the same number).
      taken=$(otf2-print -G "$tmp3/$name/traces.otf2" 2>/dev/null |
        grep -c 'HTRACE::CLOCK::MID_[0-9]*_TIME' || true)
      echo "$ranks $ms $loop_ms $((taken / ranks))" >>"$tmp3/remeasure.txt"
      rm -rf "${tmp3:?}/$name"
    done
  done
done
python3 - "$tmp3/remeasure.txt" "$interval" <<'PY' | tee "$out/remeasure.txt"
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    ranks, ms, loop_ms, taken = line.split()
    runs.setdefault((int(ranks), int(ms)), []).append((float(loop_ms), int(taken)))
interval = int(sys.argv[2])
print(f"ranks | loop, no measurements (ms) | loop, votes only (ms) | loop, every {interval} ms (ms) | "
      f"measurements | added per measurement (ms)")
for ranks in sorted({r for r, _ in runs}):
    off = [x for x, _ in runs.get((ranks, 0), [])]
    on = runs.get((ranks, interval), [])
    votes = [x for x, _ in runs.get((ranks, 86400000), [])]
    if not off or not on or not votes:
        continue
    taken = statistics.median(n for _, n in on)
    m_off, m_on = statistics.median(off), statistics.median(x for x, _ in on)
    per = (m_on - m_off) / taken if taken else float("nan")
    print(f"{ranks:5d} | {m_off:.1f} ({min(off):.1f}-{max(off):.1f}) | {statistics.median(votes):.1f} "
          f"({min(votes):.1f}-{max(votes):.1f}) | {m_on:.1f} "
          f"({min(x for x, _ in on):.1f}-{max(x for x, _ in on):.1f}) | {taken:g} | {per:.2f}")
PY
