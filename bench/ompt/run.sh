#!/usr/bin/env bash
# Added cost of libhtrace's OMPT tool per OpenMP event, buffer writes included (every repetition
# is timed as a whole). ompt-events (1 rank, THREADS threads) runs ROUNDS times in each
# configuration, alternated in this one invocation so that all see the same machine load:
#   plain           no preload
#   null-tool       a do-nothing OMPT tool (libomp's own cost of dispatching the same callbacks)
#   NAME-mpi-only   that libhtrace preloaded with HTRACE_OMPT=0 (the OMPT tool is not started)
#   NAME            that libhtrace preloaded, OMPT events recorded
# for every NAME=LIBHTRACE.so given (default: new=BUILD_DIR's), e.g. an older build (9922db9):
#   bench/ompt/run.sh build old=/work/old/build/libtrace/libhtrace.so
# Events are counted from each traced run's archive (OpenMP events = NAME's events minus
# NAME-mpi-only's). Reports medians and minima (the minimum is the cost with the least
# interference on a shared machine) and the added ns per OpenMP event against each baseline.
#
# usage: bench/ompt/run.sh [BUILD_DIR] [NAME=LIBHTRACE.so ...]
#   env: ROUNDS (5), REGIONS (20000), REPS (3), THREADS (2), CLOCK (HTRACE_CLOCK of the traced
#        runs, default monotonic)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
shift || true
bench=$build/bench/ompt/ompt-events
null_tool=$build/bench/ompt/libompt-null-tool.so
rounds=${ROUNDS:-5}
regions=${REGIONS:-20000}
reps=${REPS:-3}
threads=${THREADS:-2}
clock=${CLOCK:-monotonic}
variants=("$@")
((${#variants[@]})) || variants=("new=$build/libtrace/libhtrace.so")
for f in "$bench" "$null_tool"; do
  [[ -e $f ]] || { echo "run.sh: error: '$f': not built (cmake --build $build --target htrace ompt-events ompt-null-tool)" >&2; exit 1; }
done
for v in "${variants[@]}"; do
  [[ $v == *=* && -e ${v#*=} ]] || { echo "run.sh: error: '$v': expected NAME=path/to/libhtrace.so" >&2; exit 1; }
done
mpirun=(mpirun --allow-run-as-root --oversubscribe -np 1 -x OMP_NUM_THREADS="$threads" -x OMP_WAIT_POLICY=active)
work=$(mktemp -d /tmp/htrace-ompt-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

traced() { # name, lib, extra mpirun args...
  local name=$1 lib=$2
  shift 2
  rm -rf "$work/archive-$name"
  "${mpirun[@]}" -x LD_PRELOAD="$lib" -x HTRACE_ARCHIVE_DIR="$work" -x HTRACE_ARCHIVE_NAME="archive-$name" \
    -x HTRACE_SYNC=none -x HTRACE_VERBOSE=0 -x HTRACE_CLOCK="$clock" "$@" "$bench" "$regions" "$reps" >>"$work/$name"
  otf2-print "$work/archive-$name/traces.otf2" 2>/dev/null | grep -c -E '^[A-Z_]+ +[0-9]+ +[0-9]+ ' >>"$work/$name.events"
}

names=(plain null-tool)
for v in "${variants[@]}"; do names+=("${v%%=*}-mpi-only" "${v%%=*}"); done
for name in "${names[@]}"; do : >"$work/$name"; : >"$work/$name.events"; done
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= rounds; r++)); do
  "${mpirun[@]}" "$bench" "$regions" "$reps" >>"$work/plain"
  "${mpirun[@]}" -x LD_PRELOAD="$null_tool" "$bench" "$regions" "$reps" >>"$work/null-tool"
  for v in "${variants[@]}"; do
    traced "${v%%=*}-mpi-only" "${v#*=}" -x HTRACE_OMPT=0
    traced "${v%%=*}" "${v#*=}"
  done
done
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"

/usr/bin/python3 - "$work" "$regions" "$reps" "$threads" "$clock" "${variants[@]%%=*}" <<'PY'
import os, statistics, sys
work, regions, reps, threads, clock = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
libs = sys.argv[6:]

def seconds(name):
    return [float(line.split()[0].split("=")[1]) for line in open(os.path.join(work, name))]

def events(name):
    return [int(line) for line in open(os.path.join(work, name + ".events"))]

names = ["plain", "null-tool"] + [n for lib in libs for n in (lib + "-mpi-only", lib)]
median = {n: statistics.median(seconds(n)) for n in names}
minimum = {n: min(seconds(n)) for n in names}
spread = {n: max(seconds(n)) for n in names}
print(f"ompt-events: {regions} regions x {threads} threads, HTRACE_CLOCK={clock}, {reps} reps, "
      f"{len(seconds('plain'))} timings each (alternated)")
print(f"  {'':16s} {'median ms':>10s} {'min ms':>10s} {'max ms':>10s}")
for n in names:
    print(f"  {n:16s} {median[n] * 1e3:10.3f} {minimum[n] * 1e3:10.3f} {spread[n] * 1e3:10.3f}")
for lib in libs:
    omp_events = statistics.median(events(lib)) - statistics.median(events(lib + "-mpi-only"))
    per_rep = omp_events / reps  # the archive holds all repetitions; times are per repetition
    print(f"{lib}: {per_rep:.0f} OpenMP events per rep ({per_rep / regions:.1f} per region)")
    for base in ("plain", "null-tool", lib + "-mpi-only"):
        print(f"  added per OpenMP event vs {base:16s}: median {(median[lib] - median[base]) / per_rep * 1e9:7.1f} ns, "
              f"min {(minimum[lib] - minimum[base]) / per_rep * 1e9:7.1f} ns")
print("  (target 50 ns per event, buffer writes included)")
PY
