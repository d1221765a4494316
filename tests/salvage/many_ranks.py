"""htrace-salvage's files and memory: two killed runs of fail_app's ring mode (barriers on
MPI_COMM_SELF, a message to the next rank every 64), SIGKILLed once enough is on disk, salvaged
under `ulimit -n NOFILE` with the salvage's own peak RSS measured (/usr/bin/time):

  many ranks   NP ranks (one host), each with an event chunk on disk: NOFILE no more than the
               locations, so that no file may stay open per location; peak RSS <= BASE +
               PER_LOCATION * NP.
  long file    one rank with BIG_FILE_MIB of events: peak RSS <= BASE + PER_LOCATION, however
               long the file (the salvage holds a chunk of it, not the whole file).

Both must exit 0, and python3-otf2 finds every rank's barriers a prefix of what it did.

usage: many_ranks.py FAIL_APP HTRACE_SALVAGE [NP NOFILE]
Environment (ctest): HTRACE_LIB, MPIRUN."""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from htrace_test.check import fail, require
from htrace_test.mpi import mpirun_command
from htrace_test.rank_output import RankOutput
from htrace_test.salvage import check_location, counts, located_events

APP, SALVAGE = sys.argv[1:3]
NP = int(sys.argv[3]) if len(sys.argv) > 3 else 32
NOFILE = int(sys.argv[4]) if len(sys.argv) > 4 else 32
# The process with OTF2, the MPI library it links and one location's reader and writer measured
# 11-13 MiB; a location's definitions and state ~70 KiB (28 MiB at 256 locations). A writer that
# kept its location's chunks, or a file read whole, would hold the file's size.
BASE_MIB = 16
PER_LOCATION_KIB = 128
BIG_FILE_MIB = 24


def killed_run(work, np, enough, timeout=90):
    """fail_app ring on `np` ranks, SIGKILLed once enough(event file sizes) holds; returns the
    archive directory and the program's counts per rank."""
    count_dir = os.path.join(work, "counts")
    os.mkdir(count_dir)
    archive_dir = os.path.join(work, "trace")
    output = RankOutput(os.path.join(work, "output"))
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    forward = ["HTRACE_ARCHIVE_DIR=" + work, "HTRACE_ARCHIVE_NAME=trace", "HTRACE_BUFFER_SIZE=64k"]
    cmd = mpirun_command(np, [APP, "ring", "0", count_dir], bind_none=True, output=output,
                         preload=os.environ["HTRACE_LIB"], forward=forward)
    job = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                           cwd=work, start_new_session=True)
    files = [os.path.join(archive_dir, "traces", "%d.evt" % r) for r in range(np)]
    try:
        deadline = time.time() + timeout
        while True:
            require(job.poll() is None, "the job ended by itself (exit %s)" % job.returncode)
            require(time.time() < deadline, "not enough events on disk after %d s" % timeout)
            try:
                if enough([os.path.getsize(f) for f in files]):
                    break
            except OSError:
                pass
            time.sleep(0.1)
        for r in range(np):
            os.kill(counts(count_dir, r)[2], signal.SIGKILL)
    finally:
        os.killpg(job.pid, signal.SIGKILL)
        job.wait()
    program = [counts(count_dir, r) for r in range(np)]
    print("%d ranks killed after %d-%d barriers, event files %.1f MiB" %
          (np, min(c[0] for c in program), max(c[0] for c in program),
           sum(os.path.getsize(f) for f in files) / 2**20))
    return archive_dir, program


def salvage(work, archive_dir, out):
    """htrace-salvage under `ulimit -n NOFILE`; returns (exit status, stdout, stderr, peak RSS
    KiB). /usr/bin/time forks it: a child forked from this test would start with the pages of
    this Python process (the events read back) in its peak RSS."""
    peak = os.path.join(work, "salvage.peak")
    p = subprocess.run(["/bin/sh", "-c", 'ulimit -n %d && exec /usr/bin/time -f %%M -o "$0" "$@"'
                        % NOFILE, peak, SALVAGE, archive_dir, out], capture_output=True, text=True)
    with open(peak) as f:
        lines = f.read().split()
    require(lines and lines[-1].isdigit(), "/usr/bin/time wrote no peak RSS: %s" % lines)
    return p.returncode, p.stdout, p.stderr, int(lines[-1])


def check(work, np, enough, what):
    archive_dir, program = killed_run(work, np, enough)
    out = os.path.join(work, "salvaged")
    rc, stdout, stderr, rss_kib = salvage(work, archive_dir, out)
    bound_kib = BASE_MIB * 1024 + PER_LOCATION_KIB * np
    print("%s: htrace-salvage under ulimit -n %d: exit %d, peak RSS %.1f MiB (bound %.1f MiB)" %
          (what, NOFILE, rc, rss_kib / 1024, bound_kib / 1024))
    require(rc == 0, "%s: htrace-salvage exit %d: %s" % (what, rc, stderr[-2000:]))
    require(rss_kib <= bound_kib, "%s: htrace-salvage's peak RSS %.1f MiB exceeds %.1f MiB" %
            (what, rss_kib / 1024, bound_kib / 1024))
    if np > 1:
        events = located_events(os.path.join(out, "traces.otf2"))
        for r in range(np):
            entered, returned = program[r][:2]
            got = check_location(events.get(r, []), "killed (no end recorded)", entered,
                                 returned, False, r)
            require(got > 0, "%s: rank %d: no barrier salvaged" % (what, r))
        print("%s: every rank's barriers are a prefix of what it did (%d events)" %
              (what, sum(len(e) for e in events.values())))
        # Beyond 16 ranks the summary groups them by how they ended (every rank killed: one line)
        # and names 8 damaged event files at most (here every rank's: none was finished).
        lines = stdout.splitlines()
        m = re.search(r"^  %d rank\(s\) \(0-%d\): killed \(no end recorded\): (\d+) events, cut off"
                      % (np, np - 1), stdout, re.M)
        more = re.search(r"^  and (\d+) more damaged event file\(s\)", stdout, re.M)
        require(len(lines) <= 12 and more is not None and int(more.group(1)) == np - 8,
                "%s: the summary names 8 damaged files and counts the others: %s" % (what, stdout))
        require(lines[0] == "%d ranks, by how they ended:" % np and m is not None,
                "%s: the summary groups the ranks: %s" % (what, stdout))
        total = re.search(r"^salvaged archive: .* \((\d+) events\)$", stdout, re.M)
        require(total is not None and int(m.group(1)) <= int(total.group(1)),
                "%s: the group's events within the archive's: %s" % (what, stdout))
    else:
        # Millions of events: python3-otf2 would take minutes; the salvage's own count must fit
        # the program's (4 records per barrier, a few per message every 64 barriers).
        m = re.search(r"^rank 0: killed \(no end recorded\): (\d+) events, cut off", stdout, re.M)
        require(m is not None, "%s: summary: %s" % (what, stdout))
        entered = program[0][0]
        require(0 < int(m.group(1)) <= 5 * entered, "%s: %s events salvaged, %d barriers made" %
                (what, m.group(1), entered))
        print("%s: %s events salvaged of %d barriers" % (what, m.group(1), entered))


def main():
    work = tempfile.mkdtemp(prefix="htrace-salvage-many-")
    ok = False
    try:
        os.mkdir(os.path.join(work, "many"))
        check(os.path.join(work, "many"), NP, lambda sizes: min(sizes) > 0,
              "%d ranks" % NP)
        os.mkdir(os.path.join(work, "long"))
        check(os.path.join(work, "long"), 1, lambda sizes: sizes[0] >= BIG_FILE_MIB << 20,
              "one rank, %d MiB" % BIG_FILE_MIB)
        ok = True
        print("PASS")
    finally:
        if ok:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("work directory kept: %s" % work)


main()
