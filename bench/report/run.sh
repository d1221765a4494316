#!/usr/bin/env bash
# htrace-report's time and peak memory on synthetic archives of 1 M, 10 M and 30 M events
# (bench/correct's gen_archive: 16 processes in a ring, sends, receives, allreduces, skewed clocks),
# for the HTML report and the Perfetto export; then the HTML pages' load time in headless Chromium.
# usage: bench/report/run.sh BUILD_DIR [WORK_DIR]     (run on demand, never by ctest)
set -euo pipefail
(($# >= 1)) || { echo "usage: bench/report/run.sh BUILD_DIR [WORK_DIR]" >&2; exit 2; }
build=$(cd "$1" && pwd)
work=${2:-$(mktemp -d)}
mkdir -p "$work"
gen=$build/bench/correct/correct_gen_archive
report=$build/tools/htrace-report/htrace-report
for f in "$gen" "$report"; do [[ -x $f ]] || { echo "run.sh: '$f' not built" >&2; exit 1; }; done
echo "events format wall_s cpu_s peak_rss_MB output_MB"
for n in 1000000 10000000 30000000; do
  a=$work/a$n
  [[ -e $a ]] || "$gen" "$a" --processes 16 --events $n --skew 5000 >/dev/null
  for format in html perfetto; do
    [[ $format == perfetto && $n -gt 10000000 ]] && continue # 1.7 GB of JSON: not worth the disk
    out=$work/a$n.$format
    /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$report" --no-progress --format $format "$a" -o "$out" 2>/dev/null
    read -r secs user sys kb <"$work/time"
    echo "$n $format $secs $(echo "$user + $sys" | bc) $((kb / 1024)) $(($(stat -c %s "$out") / 1048576))"
  done
done
if [[ -x /usr/bin/chromedriver ]]; then
  /usr/bin/python3 - "$work"/a1000000.html "$work"/a10000000.html <<'PY'
import sys, time
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
o = Options()
for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000", "--disable-dev-shm-usage"):
    o.add_argument(a)
d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)
for page in sys.argv[1:]:
    d.get("file://" + page)
    loaded = d.execute_script("return performance.timing.loadEventEnd - performance.timing.navigationStart")
    t = time.time()
    d.execute_script("window.HTRACE_CHARTS['chart-detail'].dispatchAction({type: 'dataZoom', start: 40, end: 45})")
    print("%s: page loaded and drawn in %.1f s, detail zoom %.2f s" % (page, loaded / 1000, time.time() - t))
d.quit()
PY
fi
