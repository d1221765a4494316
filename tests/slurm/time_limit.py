#!/usr/bin/python3
"""A traced job that runs past its Slurm time limit leaves an archive htrace-salvage turns into a
readable, correctable one.

usage: time_limit.py MPI_PLUGIN FAIL_APP HTRACE_SALVAGE HTRACE_CORRECT
MPI_PLUGIN: srun's --mpi (pmix for Open MPI, pmi2 for MPICH); FAIL_APP: tests/salvage/fail_app.c
built against the MPI that HTRACE_LIB wraps. Environment (ctest): HTRACE_LIB.

Two jobs of 2 ranks run fail_app's endless barrier loop with --time=1, at the same time, one
untraced and one traced: Slurm ends both at their time limit (SIGTERM to every task, SIGKILL
after KillWait). Slurm keeps time limits in minutes and slurmctld looks at them every 30 s, so
a job ends 60 to 90 s after it started: the test takes that long. Cancelling the job (scancel)
would end it within seconds through the same SIGTERM-then-SIGKILL path, but what is tested here
is the time limit itself, as a batch system ends a run that took too long.

Asserts: Slurm ended both jobs for their time limit (JobState TIMEOUT) while they ran; srun's exit
status and the program's output are the same traced and untraced; htrace-salvage rebuilds the
archive without changing it; every rank's salvaged barriers agree with the program's own counts
(htrace_test.salvage: all of them for a rank that flushed at SIGTERM, a prefix for one that
SIGKILL reached first) and end at a cut-off marker naming the cause; otf2-print reads it; the
archive properties say how each rank ended; htrace-correct leaves 0 clock-condition violations.
The program's output and libhtrace's lines are read from the files the ranks write
(htrace_test.rank_output), not from what srun forwards (which may lose lines at the SIGTERM).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from htrace_test.archive import archive_properties
from htrace_test.check import TestFailure, fail, require
from htrace_test.rank_output import RankOutput
from htrace_test.salvage import MARKER, check_location, counts, located_events
from htrace_test.tree import tree_hash

import slurm_cluster
from slurm_launch import srun_command

NP = 2
TIME_LIMIT = "1"  # minutes: Slurm's smallest
JOB_TIMEOUT = 150  # seconds for a job that should end 60-90 s after its start, plus KillWait
# Each barrier is followed by a 1 ms pause: some 60 000 barriers per rank in 90 s, read back
# in seconds (unpaced, the loop writes millions).
PACE_US = "1000"


def run_jobs(cluster, plugin, app, work):
    """Starts the untraced and the traced job together and waits for both to end: {name: (srun
    exit status, what the ranks said: a RankOutput, srun's own output, count directory,
    seconds)}."""
    jobs = {}
    for name in ("plain", "traced"):
        count_dir = os.path.join(work, "counts-" + name)
        os.mkdir(count_dir)
        output = RankOutput(os.path.join(work, "output-" + name))
        env = {"FAIL_APP_PACE_US": PACE_US}
        preload = None
        if name == "traced":
            env.update(HTRACE_ARCHIVE_DIR=work, HTRACE_ARCHIVE_NAME="trace", HTRACE_LOG_FILE=output.log_file)
            preload = os.environ["HTRACE_LIB"]
        command = srun_command(plugin, NP, output.program([app, "loop", "0", count_dir]), preload=preload,
                               options=["--time=" + TIME_LIMIT, "--job-name=time-limit-" + name])
        jobs[name] = (cluster.start(command, env=env), output, count_dir, time.monotonic())
    results = {}
    for name, (proc, output, count_dir, start) in jobs.items():
        try:
            out, err = proc.communicate(timeout=max(1, JOB_TIMEOUT - (time.monotonic() - start)))
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            fail(f"the {name} job did not end within {JOB_TIMEOUT} s\n{output.describe()}{out}{err}\n" +
                    cluster.logs())
        results[name] = (proc.returncode, output, out + err, count_dir, time.monotonic() - start)
    return results


def check_jobs(cluster, results):
    for name, (status, output, srun_said, count_dir, seconds) in results.items():
        job = cluster.job("time-limit-" + name)
        print(f"{name} job: srun exit {status} after {seconds:.1f} s; JobState "
              f"{job.get('JobState')}, Reason {job.get('Reason')}, "
              f"TimeLimit {job.get('TimeLimit')}, RunTime {job.get('RunTime')}, "
              f"ExitCode {job.get('ExitCode')}")
        # srun's account (slurmstepd's banner "... DUE TO TIME LIMIT" among it) for diagnosis
        # only: srun may lose it at the SIGTERM; the job state is Slurm's own record.
        for line in srun_said.splitlines():
            print(f"{name} srun: {line}")
        require(job.get("JobState") == "TIMEOUT", f"the {name} job did not end for its time "
                f"limit: {job}\n" + cluster.logs())
        entered = [counts(count_dir, r)[0] for r in range(NP)]
        require(all(n > 0 for n in entered), f"the {name} job's ranks made no barrier: {entered}")
    plain, traced = results["plain"], results["traced"]
    require(traced[0] == plain[0], f"srun exit status {traced[0]} traced, {plain[0]} untraced")
    plain_out, traced_out = (
        {r: output.stdout(r) for r in output.ranks()} for output in (plain[1], traced[1]))
    require(traced_out == plain_out, f"output differs:\n{traced_out!r}\n{plain_out!r}")


def salvage(work, archive_dir, salvage_tool, log, count_dir):
    """htrace-salvage, then the salvaged archive against the program's counts (log: libhtrace's
    lines of the traced run); returns its path."""
    before = tree_hash(archive_dir)
    out_dir = os.path.join(work, "salvaged")
    s = subprocess.run([salvage_tool, archive_dir, out_dir], capture_output=True, text=True)
    require(s.returncode == 0, f"htrace-salvage exit {s.returncode}: {s.stdout}{s.stderr}")
    require(tree_hash(archive_dir) == before, "htrace-salvage changed its input")
    print(s.stdout, end="")
    require("were left out" not in s.stdout, "htrace-salvage dropped records: " + s.stdout)
    anchor = os.path.join(out_dir, "traces.otf2")
    p = subprocess.run(["otf2-print", anchor], capture_output=True, text=True)
    require(p.returncode == 0 and "error" not in p.stderr.lower(),
            f"otf2-print failed: {p.stderr[:2000]}")
    events = located_events(anchor)
    causes = {}
    for rank in range(NP):
        # SIGTERM: the rank wrote everything at the signal. SIGKILL first (KillWait passed, or the
        # scheduler did not run the rank in between): a prefix, and the salvage says so.
        killed = re.search(rf"^rank {rank}: killed \(no end recorded\)", s.stdout, re.M)
        cause = "killed (no end recorded)" if killed else "SIGTERM"
        exact = not killed
        if re.search(rf"htrace\[{rank}\]: error: .*some threads were busy", log):
            print(f"rank {rank}: the signal interrupted the thread's own flush")
            exact = False
        one_missing = re.search(rf"htrace\[{rank}\]: error: .*the one event it was recording "
                                r"then is missing", log) is not None
        entered, returned = counts(count_dir, rank)[:2]
        got = check_location(events.get(rank, []), cause, entered, returned, exact, rank,
                             may_be_empty=bool(killed), one_missing=one_missing)
        print(f"rank {rank} ({cause}): {got} barriers in the archive, the program entered "
              f"{entered}, returned {returned}")
        # The tracer's own figure at its flush agrees with what the archive holds before the marker.
        m = re.search(rf"htrace\[{rank}\]: error: [^:]+: wrote (\d+) events of this process", log)
        if m and exact:
            evs = events.get(rank, [])
            marker = [i for i, e in enumerate(evs) if e[1] and e[1].startswith(MARKER)]
            copied = marker[0] if marker else len(evs)
            require(copied == int(m.group(1)), f"rank {rank}: {copied} events copied, the tracer "
                    f"wrote {m.group(1)}")
        causes[rank] = cause
    end = archive_properties(anchor).get("HTRACE::RUN::END", "")
    for rank, cause in causes.items():
        require(f"rank {rank}: {cause}" in end, f"HTRACE::RUN::END '{end}'")
    return out_dir


def correct(work, archive, correct_tool):
    c = subprocess.run([correct_tool, "--json", archive, os.path.join(work, "corrected")],
                       capture_output=True, text=True)
    require(c.returncode == 0, f"htrace-correct exit {c.returncode}: {c.stderr}")
    report = json.loads(c.stdout)
    after = report["violations_after"]
    require(all(v == 0 for v in after.values()), f"violations after correction: {after}")
    print(f"htrace-correct: violations before {report['violations_before']}, after {after}")


def test(plugin, app, salvage_tool, correct_tool, work):
    with slurm_cluster.SlurmCluster(kill_wait=5) as cluster:
        try:
            results = run_jobs(cluster, plugin, app, work)
            check_jobs(cluster, results)
        except TestFailure:
            cluster.keep = True
            raise
    traced = results["traced"]
    archive_dir = os.path.join(work, "trace")
    require(os.path.isdir(os.path.join(archive_dir, "traces")), f"no archive in {work}")
    salvaged = salvage(work, archive_dir, salvage_tool, "\n".join(traced[1].log()), traced[3])
    correct(work, salvaged, correct_tool)


def main():
    if len(sys.argv) != 5:
        print(f"usage: {sys.argv[0]} MPI_PLUGIN FAIL_APP HTRACE_SALVAGE HTRACE_CORRECT",
              file=sys.stderr)
        return 2
    slurm_cluster.skip_unless_possible()
    work = tempfile.mkdtemp(prefix="htrace-time-limit-")
    os.chmod(work, 0o755)
    plugin, *tools = sys.argv[1:]
    try:
        test(plugin, *(os.path.abspath(t) for t in tools), work)
    except TestFailure:
        print(f"kept for inspection: {work}", file=sys.stderr)
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
