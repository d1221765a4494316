#!/usr/bin/env bash
# Added cost of libhtrace's OMPT tool per OpenMP event. ompt-events (1 rank, THREADS threads) runs
# ROUNDS times in each of three configurations, interleaved in this one invocation so that all see
# the same machine load:
#   plain      no preload
#   null-tool  a do-nothing OMPT tool (libomp's own cost of dispatching the same callbacks)
#   mpi-only   libhtrace preloaded with HTRACE_OMPT=0 (the OMPT tool is not started)
#   ompt       libhtrace preloaded, OMPT events recorded
# Events are counted from each traced run's archive (OpenMP events = ompt-run events minus
# mpi-only-run events). Reports medians and minima (the minimum is the cost with the least
# interference on a shared machine) and the added ns per OpenMP event against each baseline.
#
# usage: bench/ompt/run.sh [BUILD_DIR]
#   env: ROUNDS (5), REGIONS (20000), REPS (3), THREADS (2), CLOCK (HTRACE_CLOCK of the traced runs,
#        default monotonic; tsc avoids clock_gettime, which costs ~90 ns on a loaded VM)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
bench=$build/bench/ompt/ompt-events
lib=$build/libtrace/libhtrace.so
null_tool=$build/bench/ompt/libompt-null-tool.so
rounds=${ROUNDS:-5}
regions=${REGIONS:-20000}
reps=${REPS:-3}
threads=${THREADS:-2}
clock=${CLOCK:-monotonic}
for f in "$bench" "$lib" "$null_tool"; do
  [[ -e $f ]] || { echo "run.sh: error: '$f': not built (cmake --build $build --target htrace ompt-events ompt-null-tool)" >&2; exit 1; }
done
mpirun=(mpirun --allow-run-as-root --oversubscribe -np 1 -x OMP_NUM_THREADS="$threads" -x OMP_WAIT_POLICY=active)
work=$(mktemp -d /tmp/htrace-ompt-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

traced() { # name, extra mpirun args...
  local name=$1
  shift
  rm -rf "$work/archive-$name"
  "${mpirun[@]}" -x LD_PRELOAD="$lib" -x HTRACE_ARCHIVE_DIR="$work" -x HTRACE_ARCHIVE_NAME="archive-$name" \
    -x HTRACE_SYNC=none -x HTRACE_VERBOSE=0 -x HTRACE_CLOCK="$clock" "$@" "$bench" "$regions" "$reps" >>"$work/$name"
  otf2-print "$work/archive-$name/traces.otf2" 2>/dev/null | grep -c -E '^[A-Z_]+ +[0-9]+ +[0-9]+ ' >>"$work/$name.events"
}

for name in plain null-tool mpi-only ompt; do : >"$work/$name"; : >"$work/$name.events"; done
for ((r = 1; r <= rounds; r++)); do
  "${mpirun[@]}" "$bench" "$regions" "$reps" >>"$work/plain"
  "${mpirun[@]}" -x LD_PRELOAD="$null_tool" "$bench" "$regions" "$reps" >>"$work/null-tool"
  traced mpi-only -x HTRACE_OMPT=0
  traced ompt
done

/usr/bin/python3 - "$work" "$regions" "$reps" "$threads" "$clock" <<'PY'
import os, statistics, sys
work, regions, reps, threads, clock = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]

def seconds(name):
    return [float(line.split()[0].split("=")[1]) for line in open(os.path.join(work, name))]

def events(name):
    return [int(line) for line in open(os.path.join(work, name + ".events"))]

names = ("plain", "null-tool", "mpi-only", "ompt")
median = {n: statistics.median(seconds(n)) for n in names}
minimum = {n: min(seconds(n)) for n in names}
omp_events = statistics.median(events("ompt")) - statistics.median(events("mpi-only"))
per_rep = omp_events / reps  # the archive holds all repetitions; times are per repetition
print(f"ompt-events: {regions} regions x {threads} threads, HTRACE_CLOCK={clock}, {reps} reps, {len(seconds('plain'))} timings each; "
      f"{per_rep:.0f} OpenMP events per rep ({per_rep / regions:.1f} per region)")
print(f"  {'':10s} {'median ms':>10s} {'min ms':>10s}")
for n in names:
    print(f"  {n:10s} {median[n] * 1e3:10.3f} {minimum[n] * 1e3:10.3f}")
for base in ("plain", "null-tool", "mpi-only"):
    print(f"  added per OpenMP event vs {base:9s}: median {(median['ompt'] - median[base]) / per_rep * 1e9:7.1f} ns, "
          f"min {(minimum['ompt'] - minimum[base]) / per_rep * 1e9:7.1f} ns")
print("  (target <= 100 ns, goal 50 ns per event)")
PY
