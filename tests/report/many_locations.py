"""htrace-report on archives of 2,048 locations under `ulimit -n 256`: the events are merged
straight from the event files, each read through a window of a few KiB (format/event_merge.h), so
no file stays open and no file is mapped per location, and peak memory stays far below OTF2's global
reader's (a buffered chunk and an open file per location); the ViTE copy likewise, a few locations'
files at a time. A second archive's files (~80 KB each) are longer than their windows: its peak
memory holds the windows, not the files (160 MB of them).
usage: many_locations.py GEN_ARCHIVE HTRACE_REPORT"""
import json
import os
import shutil
import subprocess
import sys

from htrace_test.check import Expectations

GEN, REPORT = sys.argv[1], sys.argv[2]
WORK = os.path.join(os.environ["HTRACE_BUILD_DIR"], "tests", "report", "out-many-locations")
PROCESSES = 2048
# Peak RSS allowed at 2,048 locations: the tool's own (~12 MB on a small archive), the sinks' state
# per location (the HTML report's overview and timeline: ~60 kB each) and the files' windows (16
# KiB each at most: 32 MiB). Measured: json 30 MB, html 33 MB; OTF2's global reader (given the
# open files) took 555 MB and 696 MB. The ViTE copy (a few locations' files at a time) took 12 MB.
# The long files' json: 53 MB (151 MB when the files were read whole or mapped).
RSS_LIMIT_KB = {"json": 80 * 1024, "html": 300 * 1024, "vite": 40 * 1024, "long json": 90 * 1024}
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
expect = Expectations()


archive, long_archive = os.path.join(WORK, "a"), os.path.join(WORK, "long")
for path, events in ((archive, 1000000), (long_archive, 12000000)):
    subprocess.run([GEN, path, "--processes", str(PROCESSES), "--events", str(events), "--skew",
                    "5000", "--chunk", str(256 * 1024)], check=True, stdout=subprocess.DEVNULL)
long_file = os.path.getsize(os.path.join(long_archive, "traces", "0.evt"))
expect(long_file > 64 * 1024, "the long archive's files are longer than any window: %d bytes" % long_file)

# Under a limit of 256 open files; the child's peak RSS from getrusage, in a wrapper of its own so
# that the generator's does not count.
MEASURE = ("import resource, subprocess, sys\n"
           "rc = subprocess.run(sys.argv[1:]).returncode\n"
           "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
           "sys.exit(rc)\n")
for case, out in (("json", "w.json"), ("html", "r.html"), ("vite", "vite-copy"),
                  ("long json", "long.json")):
    fmt = case.split()[-1]
    src = long_archive if case.startswith("long") else archive
    out = os.path.join(WORK, out)
    p = subprocess.run(["bash", "-c", 'ulimit -n 256; exec "$@"', "bash", sys.executable, "-c", MEASURE,
                        REPORT, "--no-progress", "--format", fmt, src, "-o", out],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = p.stderr.strip().splitlines()
    expect(p.returncode == 0, "%s: exit %d: %s" % (case, p.returncode, p.stderr))
    expect(os.path.getsize(out) > 0 if os.path.exists(out) else False, case + ": output written")
    rss = int(lines[-1]) if lines and lines[-1].isdigit() else -1
    print("%s: peak RSS %d kB (limit %d kB)" % (case, rss, RSS_LIMIT_KB[case]))
    expect(0 < rss <= RSS_LIMIT_KB[case], "%s: peak RSS %d kB over %d kB" % (case, rss, RSS_LIMIT_KB[case]))

if os.path.exists(os.path.join(WORK, "w.json")):
    with open(os.path.join(WORK, "w.json")) as f:
        report = json.load(f)
    expect(len(report["locations"]) == PROCESSES, "every location reported")
    expect(report["events"] > 900000, "every event read: %s" % report["events"])
if os.path.exists(os.path.join(WORK, "long.json")):
    with open(os.path.join(WORK, "long.json")) as f:
        report = json.load(f)
    expect(report["events"] > 11000000, "long: every event read: %s" % report["events"])

copied = os.path.join(WORK, "vite-copy", "traces")
if os.path.isdir(copied):
    expect(sum(1 for f in os.listdir(copied) if f.endswith(".evt")) == PROCESSES, "vite: every location's event file copied")

expect.finish(WORK)
