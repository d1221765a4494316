"""htrace-correct on 2,048 locations (512 processes x 4 OpenMP threads, bench/correct's generator)
under `ulimit -n 256`, serially or under MPIRUN with 2 correction ranks:

    many_locations.py serial|mpi GEN_ARCHIVE HTRACE_CORRECT

Checks exit 0, the report's (--json) violations before (the skewed clocks' messages) and none
after, point-to-point and OpenMP logical messages (the threads' parallel regions processed), the
output read back by otf2-print with every event of the input, a bound on each correction
process's peak memory (its ru_maxrss, taken by a wrapper of its own), and (serially) a text report
of a screenful that names the locations moved furthest beyond their clock error. Environment from
ctest: HTRACE_BUILD_DIR, MPIRUN, HTRACE_MPI_FLAVOR."""
import collections
import json
import os
import re
import shutil
import subprocess
import sys

from htrace_test.check import Expectations, run_or_exit
from htrace_test.mpi import mpirun_command
from htrace_test.rank_output import RankOutput

MODE, GEN, CORRECT = sys.argv[1], sys.argv[2], sys.argv[3]
WORK = os.path.join(os.environ["HTRACE_BUILD_DIR"], "tests", "correct", "out-many-locations-" + MODE)
PROCESSES, THREADS = 512, 4
FILES_LIMIT = 256
# Peak RSS allowed per correction process: measured 2026-11-28 at 2,048 locations and 100 k events
# (the wrapper's own Python image included, ~10 MB): serial 15.7 MB (Open MPI build) / 16.8 MB
# (MPICH), each of 2 ranks 20.8 MB / 26.7 MB. OTF2's global reader (otf2-print: a chunk buffer per
# location) took 543 MB on the same archive.
RSS_LIMIT_KB = 80 * 1024
# The correction process's peak RSS on its stderr's last line, in a wrapper of its own so that the
# generator's and the launcher's do not count. The launcher's descriptors stay open for it (MPICH's
# PMI_FD).
MEASURE = ("import resource, subprocess, sys\n"
           "rc = subprocess.run(sys.argv[1:], close_fds=False).returncode\n"
           "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
           "sys.exit(rc)\n")
expect = Expectations()


def limited(command):
    """`command` under a limit of FILES_LIMIT open files."""
    return ["bash", "-c", 'ulimit -n %d; exec "$@"' % FILES_LIMIT, "bash", *command]


def last_number(text):
    lines = text.strip().splitlines()
    return int(lines[-1]) if lines and lines[-1].isdigit() else -1


def correct(archive, out):
    """Runs htrace-correct --json ARCHIVE OUT; returns (exit status, report text, [peak RSS kB of
    each correction process], what it said)."""
    command = [sys.executable, "-c", MEASURE, CORRECT, "--json", archive, out]
    if MODE == "serial":
        p = subprocess.run(limited(command), capture_output=True, text=True, timeout=120)
        return p.returncode, p.stdout, [last_number(p.stderr)], p.stderr
    output = RankOutput(os.path.join(WORK, "ranks"))
    p = subprocess.run(limited(mpirun_command(2, command, output=output)), capture_output=True,
                       text=True, timeout=120)
    # The report is rank 0's; each rank's stderr file ends with its own peak.
    ranks = output.ranks()
    said = "\n".join(output.stderr(r) for r in ranks) + p.stdout[-2000:] + p.stderr[-2000:]
    return (p.returncode, output.stdout(0) if 0 in ranks else "",
            [last_number(output.stderr(r)) for r in ranks], said)


def event_counts(archive):
    """Events per record type as otf2-print prints them (one line each: NAME LOCATION TIME ...)."""
    p = run_or_exit(["otf2-print", os.path.join(archive, "traces.otf2")], timeout=120)
    counts = collections.Counter()
    for line in p.stdout.splitlines():
        m = re.match(r"([A-Z_]+)\s+\d+\s+\d+", line)
        if m:
            counts[m.group(1)] += 1
    return counts


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
archive, out = os.path.join(WORK, "in"), os.path.join(WORK, "out")
gen = run_or_exit([GEN, archive, "--processes", str(PROCESSES), "--threads", str(THREADS),
                   "--events", "100000", "--skew", "5000", "--chunk", str(256 * 1024)])
generated = int(re.search(r"(\d+) events", gen.stdout).group(1))

rc, text, rss, said = correct(archive, out)
expect(rc == 0, "%s: exit %d: %s" % (MODE, rc, said[-3000:]))
try:
    report = json.loads(text)
except ValueError:
    report = None
expect(report is not None, "%s: a JSON report: %r" % (MODE, text[-500:]))
if report:
    expect(report["locations"] == PROCESSES * THREADS and report["processes"] == PROCESSES,
           "every location: %s locations, %s processes" % (report["locations"], report["processes"]))
    expect(report["correction_ranks"] == (1 if MODE == "serial" else 2),
           "correction ranks: %s" % report["correction_ranks"])
    expect(report["events"] == generated, "events: %s, generated %d" % (report["events"], generated))
    # (Too few iterations for the generator's allreduce, every 50th: no collective messages.)
    expect(report["messages"]["p2p"] > 0 and report["messages"]["OpenMP"] > 0,
           "point-to-point and OpenMP messages: %s" % report["messages"])
    expect(report["violations_before"]["p2p"] > 0, "skewed input: %s" % report["violations_before"])
    expect(sum(report["violations_after"].values()) == 0,
           "no violations after: %s" % report["violations_after"])
print("%s: peak RSS per correction process %s kB (limit %d kB)" % (MODE, rss, RSS_LIMIT_KB))
expect(len(rss) == (1 if MODE == "serial" else 2), "every correction process measured: %s" % rss)
expect(all(0 < r <= RSS_LIMIT_KB for r in rss), "peak RSS %s kB over %d kB" % (rss, RSS_LIMIT_KB))

if rc == 0 and report:
    # Read back with OTF2's own reader (a file per location open: no limit here), record types
    # against those htrace-correct read from the input.
    after = event_counts(out)
    expect(sum(after.values()) == generated, "otf2-print reads every event: %s" % dict(after))
    read = {re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper(): n
            for name, n in report["event_records"].items()}
    expect(dict(after) == read, "the input's records: %s against %s" % (dict(after), read))
    expect(after["THREAD_TEAM_BEGIN"] == after["THREAD_TEAM_END"] > 0,
           "thread team records read back: %s" % dict(after))

if MODE == "serial" and rc == 0 and report:
    # The text report stays a screenful at any scale: the locations the CLC moved furthest beyond
    # their clock error are named, the others counted.
    p = subprocess.run(limited([CORRECT, archive, os.path.join(WORK, "out-text")]),
                       capture_output=True, text=True, timeout=120)
    beyond = {c["location"]: c["max_clc_move_ns"] for c in report["location_clocks"]
              if c["events_moved_beyond_error"] > 0}
    named = [int(n) for n in re.findall(r"^    location (\d+): \d+ events moved", p.stdout, re.M)]
    more = re.search(r"^    and (\d+) more location\(s\) moved beyond", p.stdout, re.M)
    expect(p.returncode == 0 and len(beyond) > 8, "text report: exit %d, %d locations moved beyond"
           % (p.returncode, len(beyond)))
    expect(len(named) == 8 and more is not None and int(more.group(1)) == len(beyond) - 8,
           "text report names 8 locations and counts the other %d: %r" % (len(beyond) - 8, p.stdout[-3000:]))
    expect(all(n in beyond for n in named) and
           min((beyond.get(n, -1) for n in named), default=-1) >= max(
               (m for l, m in beyond.items() if l not in named), default=0),
           "the named locations are those moved furthest: %s" % named)
    expect(len(p.stdout.splitlines()) < 40, "text report of %d lines" % len(p.stdout.splitlines()))

if expect.failures:
    sys.exit(1)
print("ok")
