#!/usr/bin/python3
"""MPI_Comm_spawn traced (spawn_app: 2 parents, 1 child). Each MPI world writes its own archive;
a communicator with processes of the other world cannot be named in it, so its messages and
collectives are not recorded (the calls are) and every archive is valid: otf2-print reads both
without a warning, no group has a member outside the archive, the parents' own message is
recorded, and htrace-correct checks both with exit 0. Output and exit status as untraced.
Usage: spawn_case.py APP HTRACE_CORRECT"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

from htrace_test.mpi import mpirun_command

app, correct = sys.argv[1], sys.argv[2]
work = tempfile.mkdtemp(prefix="htrace-spawn-")


def expect(cond, msg):
    if not cond:
        sys.exit("FAIL: " + msg + "\n(work directory kept: %s)" % work)


def run(traced):
    if traced:
        cmd = mpirun_command(2, [app], bind_none=True, preload=os.environ["HTRACE_LIB"],
                             forward=["HTRACE_ARCHIVE_DIR=" + work])
    else:
        cmd = mpirun_command(2, [app], bind_none=True)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=work)
    return p.returncode, sorted(p.stdout.splitlines()), p.stderr


plain = run(False)
traced = run(True)
if plain[0] != 0 and "Error in spawn call" in plain[2] + traced[2]:
    # Debian's MPICH 4.0 (ch4:ucx) cannot spawn under hydra, traced or not. Hydra may kill the
    # ranks before their error stack reaches it, so either run may be the one that shows it.
    print("SKIP: MPI_Comm_spawn fails without the tracer:\n" + (plain[2] or traced[2])[:500])
    shutil.rmtree(work, ignore_errors=True)
    sys.exit(77)
expect(plain[0] == traced[0] == 0, "exit status untraced %d, traced %d\n%s" % (plain[0], traced[0], traced[2]))
expect(plain[1] == traced[1], "output untraced %s, traced %s" % (plain[1], traced[1]))
expect("processes outside MPI_COMM_WORLD" in traced[2], "the warning says what is not recorded:\n" + traced[2])
archives = sorted(glob.glob(os.path.join(work, "htrace-*", "traces.otf2")))
expect(len(archives) == 2, "one archive per MPI world: %s" % archives)
sends = {}
for anchor in archives:
    defs = subprocess.run(["otf2-print", "-G", anchor], capture_output=True, text=True)
    events = subprocess.run(["otf2-print", anchor], capture_output=True, text=True)
    for p in (defs, events):
        expect(p.returncode == 0 and not p.stderr, "%s: otf2-print rc %d: %s" % (anchor, p.returncode, p.stderr[:500]))
    expect("INVALID" not in defs.stdout, "%s: a group member outside the archive" % anchor)
    locations = defs.stdout.count("\nLOCATION ")
    enters = [l for l in events.stdout.splitlines() if l.startswith("ENTER") and "MPI_Send" in l]
    sends[locations] = (sum(1 for l in events.stdout.splitlines() if l.startswith("MPI_SEND")), len(enters))
    check = subprocess.run([correct, "--check", os.path.dirname(anchor)], capture_output=True, text=True)
    expect(check.returncode == 0, "%s: htrace-correct --check exit %d: %s" % (anchor, check.returncode, check.stderr))
# Parents: two MPI_Send calls on rank 0 (in the world and to the child), one message record.
expect(sends.get(2) == (1, 2), "parents archive: (message records, MPI_Send calls) = %s (all: %s)" % (sends.get(2), sends))
expect(sends.get(1) == (0, 0), "child's archive: %s" % (sends.get(1),))
subprocess.run(["rm", "-rf", work])
print("PASS: 2 archives, the parents' own message recorded, the other world's left out")
