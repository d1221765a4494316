#!/usr/bin/env bash
# Remakes docs/vite-hybrid-jacobi.png: examples/hybrid-jacobi (2 ranks x 2 OpenMP threads; the
# clang build, whose LLVM libomp reports OpenMP events, else the gcc one) traced with libhtrace, corrected with htrace-correct, turned into ViTE's layout by htrace-report
# --format vite, and shown in ViTE 1.2 under Xvfb; the screen is captured with ImageMagick's
# import. ViTE's own messages are kept in docs/vite-hybrid-jacobi.log (no warning expected).
#
# usage: docs/vite-screenshot.sh BUILD_DIR     (needs vite, xvfb, xauth, imagemagick)
set -euo pipefail
(($# == 1)) || { echo "usage: docs/vite-screenshot.sh BUILD_DIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
docs=$(cd "$(dirname "$0")" && pwd)
for tool in vite xvfb-run import; do
  command -v $tool >/dev/null || { echo "vite-screenshot: error: '$tool' not found (apt-get install vite xvfb xauth imagemagick)" >&2; exit 1; }
done
program=$build/examples/hybrid-jacobi/hybrid-jacobi
[[ -x $program ]] || program=$build/examples/hybrid-jacobi/hybrid-jacobi-gcc
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
OMP_NUM_THREADS=2 mpirun --allow-run-as-root --oversubscribe -np 2 -x OMP_NUM_THREADS \
  -x LD_PRELOAD="$build/libtrace/libhtrace.so" -x HTRACE_ARCHIVE_DIR="$work" -x HTRACE_ARCHIVE_NAME=jacobi \
  "$program" >/dev/null
"$build/tools/htrace-correct/htrace-correct" --no-progress "$work/jacobi" "$work/corrected" >/dev/null
"$build/tools/htrace-report/htrace-report" --format vite "$work/corrected" -o "$work/vite" >/dev/null
# The window between the end of the last MPI_Init and the start of the first MPI_Finalize
# (seconds from the trace start): MPI_Init alone lasts longer than this short run's computation.
window=$(/usr/bin/python3 - "$work/vite/traces.otf2" <<'PY'
import sys, otf2
with otf2.reader.open(sys.argv[1]) as t:
    t0, init_end, fin = t.definitions.clock_properties.global_offset, 0, None
    for loc, ev in t.events:
        name = getattr(getattr(ev, "region", None), "name", "")
        if type(ev).__name__ == "Leave" and name.startswith("MPI_Init"): init_end = max(init_end, ev.time)
        if type(ev).__name__ == "Enter" and name == "MPI_Finalize" and fin is None: fin = ev.time
    print("%.6f:%.6f" % ((init_end - t0) / 1e9, ((fin or init_end) - t0) / 1e9))
PY
)
# ViTE draws, then the screen is captured; ViTE is then stopped (it has no quit-after-drawing
# option besides its SVG export, which leaves the states out).
xvfb-run -a -s "-screen 0 1280x800x24" bash -c '
  vite -t "$3" "$1/vite/traces.otf2" >"$1/vite.log" 2>&1 & pid=$!
  sleep 6
  import -window root "$2/vite-hybrid-jacobi.png"
  kill $pid; wait $pid 2>/dev/null || true' _ "$work" "$docs" "$window"
grep -v -E "^QStandardPaths|^$" "$work/vite.log" >"$docs/vite-hybrid-jacobi.log" || true
echo "vite-screenshot: wrote $docs/vite-hybrid-jacobi.png (window $window s)"
if grep -i -E "warning|error" "$docs/vite-hybrid-jacobi.log" | grep -q -v "0 errors and 0 warnings"; then
  echo "vite-screenshot: ViTE printed warnings, see $docs/vite-hybrid-jacobi.log" >&2
fi
