#!/usr/bin/env bash
# Polling loops under libhtrace, with runs of unsuccessful polls recorded as one call
# (HTRACE_POLL_RUNS=1, the default) and with every call recorded (HTRACE_POLL_RUNS=0):
#  1. volume: poll-volume-bench (tests/mpi/poll_runs.c: 2 ranks, rank 0 sends MESSAGES messages
#     GAP_MS apart, rank 1 polls for each with MPI_Test) traced both ways; per run the events and
#     bytes the summary line reports, over the polling time (MESSAGES x GAP_MS);
#  2. cost: poll-cost-bench (1 rank, an MPI_Test that never succeeds, CALLS calls per repetition,
#     REPS repetitions) untraced and traced both ways: median ns per call over whole repetitions.
# Every figure is the median over ROUNDS runs, the variants alternated round by round.
#
# usage: bench/polling/run.sh [BUILD_DIR]   (cmake --build BUILD_DIR --target htrace
#        poll-cost-bench poll-volume-bench, with -DHTRACE_BUILD_BENCH=ON)
# env: ROUNDS (5), MESSAGES (20), GAP_MS (20), CALLS (2000000), REPS (11)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
lib=$build/libtrace/libhtrace.so
cost=$build/bench/polling/poll-cost-bench
volume=$build/bench/polling/poll-volume-bench
for f in "$lib" "$cost" "$volume"; do
  [[ -e $f ]] || { echo "run.sh: error: '$f': not built" >&2; exit 1; }
done
rounds=${ROUNDS:-5}
messages=${MESSAGES:-20}
gap_ms=${GAP_MS:-20}
calls=${CALLS:-2000000}
reps=${REPS:-11}
mpirun=(mpirun --allow-run-as-root --oversubscribe --bind-to none)
work=$(mktemp -d /tmp/htrace-polling.XXXXXX)
trap 'rm -rf "$work"' EXIT

median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= rounds; ++r)); do
  for runs in 1 0; do
    rm -rf "$work/archive"
    line=$("${mpirun[@]}" -np 2 -x LD_PRELOAD="$lib" -x HTRACE_POLL_RUNS=$runs \
      -x HTRACE_ARCHIVE_DIR="$work" -x HTRACE_ARCHIVE_NAME=archive \
      "$volume" test "$messages" "$gap_ms" "$work/counts" 2>&1 | grep 'trace written')
    events=$(sed -E 's/.*: ([0-9]+) events, ([0-9]+) bytes.*/\1/' <<<"$line")
    bytes=$(sed -E 's/.*: ([0-9]+) events, ([0-9]+) bytes.*/\2/' <<<"$line")
    polls=$(awk '{s += $2} END {print s}' "$work/counts")
    echo "$events $bytes $polls" >>"$work/volume$runs"
  done
  "${mpirun[@]}" -np 1 "$cost" "$calls" "$reps" | awk '{print $4}' >>"$work/cost-untraced"
  for runs in 1 0; do
    rm -rf "$work/archive"
    "${mpirun[@]}" -np 1 -x LD_PRELOAD="$lib" -x HTRACE_POLL_RUNS=$runs \
      -x HTRACE_ARCHIVE_DIR="$work" -x HTRACE_ARCHIVE_NAME=archive -x HTRACE_VERBOSE=0 \
      "$cost" "$calls" "$reps" | awk '{print $4}' >>"$work/cost$runs"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

seconds=$(awk -v m="$messages" -v g="$gap_ms" 'BEGIN {print m * g / 1000}')
echo
echo "volume: 2 ranks, rank 1 polls MPI_Test for $messages messages ${gap_ms} ms apart" \
  "(${seconds} s); medians of $rounds runs"
printf '%-22s %12s %12s %14s %14s %12s\n' HTRACE_POLL_RUNS events bytes events/s MB/s polls
for runs in 0 1; do
  e=$(cut -d' ' -f1 "$work/volume$runs" | median)
  b=$(cut -d' ' -f2 "$work/volume$runs" | median)
  p=$(cut -d' ' -f3 "$work/volume$runs" | median)
  awk -v n="$runs" -v e="$e" -v b="$b" -v p="$p" -v s="$seconds" \
    'BEGIN {printf "%-22s %12d %12d %14.0f %14.3f %12d\n", n, e, b, e / s, b / s / 1e6, p}'
done
echo
echo "cost: 1 rank, unsuccessful MPI_Test, $reps x $calls calls per run; ns per call, median" \
  "of $rounds runs [min..max]"
for v in untraced 1 0; do
  f=$work/cost$([[ $v == untraced ]] && echo -untraced || echo "$v")
  m=$(median <"$f")
  lo=$(sort -g "$f" | head -1)
  hi=$(sort -g "$f" | tail -1)
  label=$([[ $v == untraced ]] && echo untraced || echo "HTRACE_POLL_RUNS=$v")
  echo "$label: $m [$lo..$hi]"
done
