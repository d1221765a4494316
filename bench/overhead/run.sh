#!/usr/bin/env bash
# Measures libhtrace's added cost per MPI call: the overhead program (0-byte ping-pong, 8-byte
# allreduce, 2 ranks) runs ROUNDS times without and ROUNDS times with the preload, interleaved in
# this one invocation so that both see the same machine load. Reports the median of the per-run
# medians, the difference per call, and the archive's bytes per event.
#
# usage: bench/overhead/run.sh [BUILD_DIR]     env: ROUNDS (5), ITERS (20000), REPS (11)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
bench=$build/bench/overhead/overhead-bench
lib=$build/libtrace/libhtrace.so
rounds=${ROUNDS:-5}
iters=${ITERS:-20000}
reps=${REPS:-11}
for f in "$bench" "$lib"; do
  [[ -e $f ]] || { echo "run.sh: error: '$f': not built (cmake --build $build)" >&2; exit 1; }
done
mpirun=(mpirun --allow-run-as-root --oversubscribe -np 2 --bind-to core)
work=$(mktemp -d /tmp/htrace-overhead.XXXXXX)
trap 'rm -rf "$work"' EXIT

: >"$work/plain"
: >"$work/traced"
for ((r = 1; r <= rounds; r++)); do
  "${mpirun[@]}" "$bench" "$iters" "$reps" >>"$work/plain"
  rm -rf "$work/archive"
  "${mpirun[@]}" -x LD_PRELOAD="$lib" -x HTRACE_ARCHIVE_DIR="$work" -x HTRACE_ARCHIVE_NAME=archive \
    -x HTRACE_VERBOSE=0 "$bench" "$iters" "$reps" >>"$work/traced"
done

/usr/bin/python3 - "$work" "$iters" "$reps" <<'PY'
import os, statistics, sys
import otf2

work, iters, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

def medians(name):
    runs = [dict(kv.split("=") for kv in line.split()) for line in open(os.path.join(work, name))]
    return {key: statistics.median(float(run[key]) for run in runs)
            for key in ("pingpong_ns_per_call", "allreduce_ns_per_call")}, len(runs)

plain, n = medians("plain")
traced, _ = medians("traced")
print(f"overhead benchmark: 2 ranks, {n} runs each way (interleaved), {reps} x {iters} iterations per run")
print(f"{'loop':<22}{'plain ns/call':>14}{'traced ns/call':>16}{'added ns/call':>15}")
for key, label in (("pingpong_ns_per_call", "0-byte ping-pong"), ("allreduce_ns_per_call", "8-byte allreduce")):
    print(f"{label:<22}{plain[key]:>14.1f}{traced[key]:>16.1f}{traced[key] - plain[key]:>15.1f}")

archive = os.path.join(work, "archive")
if not os.path.exists(os.path.join(archive, "traces.otf2")):
    sys.exit(f"run.sh: error: '{archive}': the traced run wrote no archive, so it measured nothing")
size = sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(archive) for f in files)
with otf2.reader.open(os.path.join(archive, "traces.otf2")) as trace:
    events = sum(location.number_of_events for location in trace.definitions.locations)
print(f"archive of the last traced run: {size} bytes, {events} events, {size / max(events, 1):.1f} bytes/event")
PY
