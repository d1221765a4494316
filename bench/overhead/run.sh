#!/usr/bin/env bash
# What libhtrace adds per MPI call: overhead-bench (0-byte ping-pong, 8-byte allreduce,
# 2 ranks) runs plain and under each given libhtrace.so, alternated round by round in this one
# invocation so that every variant sees the same machine load. Prints, per loop and variant, the
# median over ROUNDS runs (and min..max) of: time per call over whole runs (buffer writes
# included), the median single call (hot path), the slowest single iteration (stall), and the
# added ns against plain; then each variant's archive size per event.
#
# usage: bench/overhead/run.sh [BUILD_DIR] [NAME=LIBHTRACE.so ...]
#   BUILD_DIR defaults to ../../build; without NAME=LIB the variant is BUILD_DIR's libhtrace.so
#   ("new"). To compare with an older build (git rev 9922db9):
#     git worktree add /work/old 9922db9 && cmake -S /work/old -B /work/old/build \
#       -DCMAKE_BUILD_TYPE=Release && cmake --build /work/old/build --target htrace
#     bench/overhead/run.sh build old=/work/old/build/libtrace/libhtrace.so
#   A NAME=LIB:VAR=VALUE,... entry adds environment variables for that variant, e.g.
#     new-nostamps=build/libtrace/libhtrace.so:HTRACE_TSC_STAMPS=0
# env: ROUNDS (5), ITERS (20000), REPS (11), BIND (core: mpirun --bind-to), NP (2; 1 = a send
# to self and a one-rank allreduce, whose CPU times stay meaningful on a loaded machine);
# HTRACE_* of the caller apply to every traced variant; KEEP=DIR keeps the raw figures of every
# run (one line per run, a file per variant) in DIR.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
shift || true
bench=$build/bench/overhead/overhead-bench
rounds=${ROUNDS:-5}
iters=${ITERS:-20000}
reps=${REPS:-11}
variants=("$@")
((${#variants[@]})) || variants=("new=$build/libtrace/libhtrace.so")
[[ -x $bench ]] || { echo "run.sh: error: '$bench': not built (cmake --build $build --target overhead-bench)" >&2; exit 1; }
for v in "${variants[@]}"; do
  lib=${v#*=}
  lib=${lib%%:*}
  [[ $v == *=* && -e $lib ]] || { echo "run.sh: error: '$v': expected NAME=path/to/libhtrace.so" >&2; exit 1; }
done
np=${NP:-2}
mpirun=(mpirun --allow-run-as-root --oversubscribe -np "$np" --bind-to "${BIND:-core}")
work=$(mktemp -d /tmp/htrace-overhead.XXXXXX)
trap '[[ -n ${KEEP:-} ]] && mkdir -p "$KEEP" && cp "$work"/*.out "$KEEP"/; rm -rf "$work"' EXIT

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= rounds; r++)); do
  "${mpirun[@]}" "$bench" "$iters" "$reps" >>"$work/plain.out"
  for v in "${variants[@]}"; do
    name=${v%%=*}
    spec=${v#*=}
    lib=${spec%%:*}
    extra=()
    if [[ $spec == *:* ]]; then
      IFS=, read -r -a kvs <<<"${spec#*:}"
      for kv in "${kvs[@]}"; do extra+=(-x "$kv"); done
    fi
    rm -rf "$work/archive-$name"
    "${mpirun[@]}" -x LD_PRELOAD="$lib" -x HTRACE_ARCHIVE_DIR="$work" -x HTRACE_ARCHIVE_NAME="archive-$name" \
      -x HTRACE_VERBOSE=0 "${extra[@]}" "$bench" "$iters" "$reps" >>"$work/$name.out"
  done
done
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"

names=()
for v in "${variants[@]}"; do names+=("${v%%=*}"); done
/usr/bin/python3 - "$work" "$iters" "$reps" "$rounds" "$np" "${names[@]}" <<'PY'
import os, statistics, subprocess, sys
import otf2

work, iters, reps, rounds, np = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
names = sys.argv[6:]

def runs(name):
    return [dict((k, float(v)) for k, v in (kv.split("=") for kv in line.split()))
            for line in open(os.path.join(work, name + ".out"))]

data = {name: runs(name) for name in ["plain"] + names}
print(f"overhead benchmark: {np} rank(s), {rounds} runs per variant (alternated), "
      f"{reps} x {iters} iterations per loop and phase")
print("whole = ns per call over all repetitions (buffer writes included); cpu = the same in CPU time"
      " of the calling thread;\nhot = median single call; stall = slowest single iteration (us);"
      " +ns = added against plain; median [min..max] of runs")
for loop, label in (("pp", "0-byte ping-pong"), ("ar", "8-byte allreduce")):
    print(f"\n{label}")
    print(f"{'variant':<14}{'whole ns/call':>24}{'+ns':>8}{'cpu ns/call':>24}{'+ns':>8}"
          f"{'hot ns/call':>24}{'+ns':>8}{'stall us':>24}")
    base = {m: statistics.median(r[f"{loop}_{m}"] for r in data["plain"]) for m in ("whole", "cpu", "median")}
    for name in ["plain"] + names:
        row = f"{name:<14}"
        for m in ("whole", "cpu", "median", "max_us"):
            values = [r[f"{loop}_{m}"] for r in data[name]]
            med = statistics.median(values)
            row += f"{med:>10.1f} [{min(values):.0f}..{max(values):.0f}]".rjust(24)
            if m != "max_us":
                row += f"{med - base[m]:>8.1f}"
        print(row)

# This VM runs whole runs, untraced ones included, in a slow mode now and then, in some hours most
# of them: every iteration then takes ~250 ns longer, whatever runs (vCPU wake-up latency on the
# host). A few such runs flip a variant's median over all runs; medians per mode, side by side,
# compare code with code. A run is in the slow mode when its median single iteration is over
# 150 ns above the untraced program's fastest.
print("\nby mode (slow: median single call > 150 ns above plain's fastest); added ns, (runs):")
for loop, label in (("pp", "ping-pong"), ("ar", "allreduce")):
    for mode in ("usual", "slow"):
        row = f"{label + ' ' + mode:<16}"
        for name in ["plain"] + names:
            fastest = min(r[f"{loop}_median"] for r in data["plain"])
            runs_ = [r for r in data[name] if (r[f"{loop}_median"] <= fastest + 150) == (mode == "usual")]
            if not runs_:
                row += f"  {name} -"
                continue
            whole = statistics.median(r[f"{loop}_whole"] for r in runs_)
            hot = statistics.median(r[f"{loop}_median"] for r in runs_)
            if name == "plain":
                plain_whole, plain_hot = whole, hot
                row += f"  plain {whole:.1f} hot {hot:.1f} ({len(runs_)})"
            else:
                row += f"  {name} +{whole - plain_whole:.1f} hot +{hot - plain_hot:.1f} ({len(runs_)})"
        print(row)

print()
for name in names:
    archive = os.path.join(work, "archive-" + name)
    if not os.path.exists(os.path.join(archive, "traces.otf2")):
        sys.exit(f"run.sh: error: '{archive}': the {name} run wrote no archive, so it measured nothing")
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(archive) for f in files)
    with otf2.reader.open(os.path.join(archive, "traces.otf2")) as trace:
        events = sum(location.number_of_events for location in trace.definitions.locations)
    # BufferFlush records span the tracer's own stalls: buffer conversions and OTF2's writes.
    spans = []
    out = subprocess.run(["otf2-print", os.path.join(archive, "traces.otf2")], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("BUFFER_FLUSH"):
            f = line.split()
            spans.append((int(f[-1]) - int(f[2])) / 1e3)
    spans.sort()
    over = sum(1 for d in spans if d > 1000)
    print(f"{name}: archive {size} bytes, {events} events, {size / max(events, 1):.2f} bytes/event; "
          f"{len(spans)} BufferFlush spans (last run): median {spans[len(spans) // 2] if spans else 0:.0f} us, "
          f"max {spans[-1] if spans else 0:.0f} us, {over} over 1 ms")
PY
