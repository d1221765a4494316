#!/usr/bin/python3
"""One failure of htrace-correct per ctest (correct_fail_<CASE>). Usage: failure_case.py CASE.

Every case asserts, at each P it runs: the exact exit code (3 bad input, 4 output, 2 usage), that
no signal ended a process, the one error line and its text, that IN is byte-identical afterwards,
that OUT is absent (or the previous OUT intact) and that no temporary is left next to it.
Cases that need a mount (a full or read-only file system) use a small tmpfs when run as root, and
exit 77 (skipped) where mounting is not allowed (a read-only directory serves a non-root user).
Under mpirun, the ranks' stdout and stderr are read from the files they write (htrace_test.
rank_output), not from what mpirun forwards.
Needs HTRACE_BUILD_DIR and MPIRUN; runs under /usr/bin/python3."""
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile

from htrace_test.check import require as expect
from htrace_test.mpi import mpirun_command
from htrace_test.rank_output import RankOutput
from htrace_test.tree import tree_state
from htrace_test.build import tool

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ["HTRACE_BUILD_DIR"]
TOOL = tool("htrace-correct")
PY = "/usr/bin/python3"
SKIP = 77
EXIT_USAGE, EXIT_INPUT, EXIT_OUTPUT = 2, 3, 4
work = tempfile.mkdtemp(prefix="htrace-correct-fail-")


def build(name, *args):
    path = os.path.join(work, name)
    subprocess.run([PY, os.path.join(HERE, "make_archive.py"), path] + list(args), check=True,
                   capture_output=True)
    return path


def build_special(name, kind):
    path = os.path.join(work, name)
    subprocess.run([PY, os.path.join(HERE, "make_special.py"), path, kind], check=True,
                   capture_output=True)
    return path


def command(args, ranks, output=None):
    """htrace-correct ARGS alone or on `ranks` ranks (each writing its output into `output`)."""
    return [TOOL] + args if ranks == 1 else mpirun_command(ranks, [TOOL] + args, output=output)


def leftovers(out):
    parent = os.path.dirname(os.path.abspath(out))
    return [f for f in os.listdir(parent) if ".htrace-correct-" in f] if os.path.isdir(parent) else []


def must_fail(args, code, text, ranks=(1, 2), inp=None, out=None):
    """Runs htrace-correct `args` at each P in `ranks` and checks the failure (see the module
    doc). `inp`/`out` default to the first/second positional argument; an existing OUT must
    come through unchanged."""
    positional = [a for a in args if not a.startswith("-")]
    inp = inp if inp is not None else (positional[0] if positional else None)
    out = out if out is not None else (positional[1] if len(positional) > 1 else None)
    for p in ranks:
        before_in = tree_state(inp) if inp else None
        before_out = tree_state(out) if out else None
        output = RankOutput(tempfile.mkdtemp(dir=work, prefix="output-")) if p > 1 else None
        proc = subprocess.run(command(args, p, output), capture_output=True, text=True, timeout=120)
        what = "%s at P=%d" % (args, p)
        stderr = proc.stderr if output is None else output.stderr()  # every rank's
        detail = "\nstdout:\n%s\nstderr:\n%s" % (proc.stdout[-3000:], proc.stderr[-3000:])
        if output is not None:
            detail = "\n%s--- mpirun%s" % (output.describe()[-3000:], detail)
        # A signal shows as a negative code (serial), as 128+n from a shell, or in mpirun's words.
        expect(proc.returncode >= 0, "%s: killed by signal %d%s" % (what, -proc.returncode, detail))
        expect("signal" not in (proc.stderr + stderr).lower(), "%s: a process ended on a signal%s" % (what, detail))
        expect(proc.returncode == code, "%s: exit %d, expected %d%s" % (what, proc.returncode, code, detail))
        errors = [l for l in stderr.splitlines() if l.startswith("htrace-correct: error:")]
        expect(len(errors) == 1, "%s: one error line (rank 0's), got %s%s" % (what, errors, detail))
        expect(text in errors[0], "%s: message %r not in %r" % (what, text, errors[0]))
        if inp:
            expect(tree_state(inp) == before_in, "%s: the input changed" % what)
        if out:
            expect(tree_state(out) == before_out, "%s: OUT %s" % (
                what, "left behind" if before_out is None else "changed"))
            expect(not leftovers(out), "%s: temporary left behind: %s" % (what, leftovers(out)))


@contextlib.contextmanager
def tmpfs(path, options):
    """A tmpfs at `path` (yields True), or a plain directory (yields False) where mounting is not
    allowed."""
    os.makedirs(path, exist_ok=True)
    mounted = os.geteuid() == 0 and subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", path], capture_output=True).returncode == 0
    try:
        yield mounted
    finally:
        if mounted:
            subprocess.run(["umount", "-l", path], check=False)


def fill(directory, leave):
    """Fills the file system of `directory` until about `leave` bytes are free."""
    st = os.statvfs(directory)
    free = st.f_bavail * st.f_frsize
    with open(os.path.join(directory, "filler"), "wb") as f:
        f.write(b"\0" * max(0, free - leave))


def case_missing_path():
    must_fail([os.path.join(work, "missing"), os.path.join(work, "out")], EXIT_INPUT, "no such file")


def case_not_an_archive():
    os.makedirs(os.path.join(work, "notarchive"))
    must_fail([os.path.join(work, "notarchive"), os.path.join(work, "out")], EXIT_INPUT,
          "not an OTF2 archive")


def case_damaged_anchor():
    archive = build("anchor")
    anchor = os.path.join(archive, "traces.otf2")
    data = open(anchor, "rb").read()
    open(anchor, "wb").write(data[: len(data) // 2])
    must_fail([archive, os.path.join(work, "out")], EXIT_INPUT, "not an OTF2 archive (the file ends inside its header")


def overwrite_from(path, offset, byte):
    """Overwrites the file from `offset` to its end with `byte` (a damaged file of the same size)."""
    data = bytearray(open(path, "rb").read())
    data[offset:] = byte * (len(data) - offset)
    open(path, "wb").write(bytes(data))


def case_truncated_event_file():
    archive = build("truncated", "--shift", "8000")
    evt = os.path.join(archive, "traces", "1.evt")
    data = open(evt, "rb").read()
    open(evt, "wb").write(data[: len(data) // 2])
    must_fail([archive, os.path.join(work, "out")], EXIT_INPUT, "location 1")


def case_corrupt_event_file():
    archive = build("corrupt", "--shift", "8000")
    evt = os.path.join(archive, "traces", "0.evt")
    overwrite_from(evt, 40, b"\xff")
    must_fail([archive, os.path.join(work, "out")], EXIT_INPUT, "location 0")


def case_missing_event_file():
    archive = build("missing_events", "--shift", "8000")
    os.remove(os.path.join(archive, "traces", "2.evt"))
    must_fail([archive, os.path.join(work, "out")], EXIT_INPUT, "location 2")


def case_deleted_local_definitions():
    """traces/N.def holds the location's id mappings; OTF2 reads a missing one as empty."""
    archive = build("deleted_def", "--shift", "8000")
    os.remove(os.path.join(archive, "traces", "1.def"))
    must_fail([archive, os.path.join(work, "out")], EXIT_INPUT, "1.def': missing local definition file")
    must_fail(["--check", archive], EXIT_INPUT, "missing local definition file")


def case_emptied_local_definitions():
    archive = build("empty_def", "--shift", "8000")
    open(os.path.join(archive, "traces", "2.def"), "wb").close()
    must_fail([archive, os.path.join(work, "out")], EXIT_INPUT, "2.def': empty local definition file")


def case_corrupt_local_definitions():
    archive = build("corrupt_def", "--shift", "8000")
    path = os.path.join(archive, "traces", "0.def")
    overwrite_from(path, 2, b"\x77")
    must_fail([archive, os.path.join(work, "out")], EXIT_INPUT, "location 0")


def case_damaged_local_definitions():
    """A local definition file whose chunk header OTF2 cannot read: no reader for the location's
    id mappings, and a copy of it would be unreadable too."""
    archive = build("damaged_def", "--shift", "8000")
    path = os.path.join(archive, "traces", "2.def")
    data = bytearray(open(path, "rb").read())
    data[0] ^= 0x1F
    open(path, "wb").write(bytes(data))
    must_fail([archive, os.path.join(work, "out")], EXIT_INPUT, "2.def': corrupt local definition file")


def case_unmatched():
    must_fail([build("unmatched", "--unmatched"), os.path.join(work, "out")], EXIT_INPUT, "unmatched")


def case_unreceived():
    must_fail([build_special("unreceived", "unreceived"), os.path.join(work, "out")], EXIT_INPUT,
          "from process 0 to process 1 (sequence 1) is never received")


def case_missing_collective():
    must_fail([build("missing_coll", "--missing-collective"), os.path.join(work, "out")], EXIT_INPUT,
          "entered by 2 of 3 members", ranks=(1, 2, 3))


def case_cycle():
    cycle = build_special("cycle", "cycle")
    out = os.path.join(work, "out")
    must_fail([cycle, out], EXIT_INPUT, "never sent", ranks=(1,))  # each waits for the other
    must_fail([cycle, out], EXIT_INPUT, "cyclic relations across correction ranks", ranks=(2,))


def case_unknown_option():
    archive = build("ok")
    must_fail(["--bogus", archive, os.path.join(work, "out")], EXIT_USAGE, "--bogus")


def case_bad_option_value():
    archive = build("ok")
    out = os.path.join(work, "out")
    must_fail(["--delta", "0", archive, out], EXIT_USAGE, "--delta must be at least 1")
    must_fail(["--gamma", "abc", archive, out], EXIT_USAGE, "--gamma")
    must_fail(["--lmin-intra", "-5", archive, out], EXIT_USAGE, "--lmin-intra")


def case_existing_output():
    archive = build("ok")
    out = os.path.join(work, "out")
    os.makedirs(os.path.join(out, "keep"))
    open(os.path.join(out, "keep", "file"), "w").write("previous")
    must_fail([archive, out], EXIT_OUTPUT, "output exists (use --force to replace it)")
    must_fail([archive, archive], EXIT_OUTPUT, "output exists", inp=archive, out=None)
    must_fail(["--force", archive, archive], EXIT_OUTPUT, "output is the input archive", out=None)
    must_fail([archive, os.path.join(work, "no", "such", "dir")], EXIT_OUTPUT,
          "parent directory does not exist")


def case_force_replaces():
    """--force: the new archive takes OUT's place, the old one is gone, nothing else is left."""
    archive = build("skewed", "--shift", "8000")
    out = os.path.join(work, "out")
    os.makedirs(os.path.join(out, "old"))
    for p in (1, 2):
        before = tree_state(archive)
        proc = subprocess.run(command(["--force", archive, out], p), capture_output=True, text=True,
                              timeout=120)
        expect(proc.returncode == 0, "--force at P=%d: exit %d\n%s" % (p, proc.returncode, proc.stderr))
        expect(tree_state(archive) == before, "input unchanged")
        expect(os.path.exists(os.path.join(out, "traces.otf2")) and not os.path.exists(
            os.path.join(out, "old")), "OUT replaced by the new archive")
        expect(not leftovers(out), "nothing left next to OUT: %s" % leftovers(out))
        shutil.rmtree(out)
        os.makedirs(os.path.join(out, "old"))


def full_disk(force):
    """OUT on a file system that fills up at every point of the write in turn (copied event
    files, local definitions, global definitions, anchor file): exit 4 naming the cause, nothing
    left behind, and with --force the previous OUT intact. The free space grows a page at a time
    until the write succeeds."""
    archive = build("skewed", "--shift", "8000")
    disk = os.path.join(work, "disk")
    with tmpfs(disk, "size=512k") as mounted:
        if not mounted:
            # (ulimit -f is no substitute: Open MPI's own files in MPI_Init exceed it)
            print("SKIP: cannot mount a tmpfs")
            sys.exit(SKIP)
        out = os.path.join(disk, "out")
        args = (["--force"] if force else []) + [archive, out]
        failed = 0
        for leave in range(0, 256 * 1024, 4096):
            if force:
                os.makedirs(os.path.join(out, "old"), exist_ok=True)
                open(os.path.join(out, "old", "data"), "w").write("the previous archive")
            fill(disk, leave)
            probe = subprocess.run([TOOL] + args, capture_output=True, text=True, timeout=120)
            if probe.returncode == 0:
                break
            failed += 1
            must_fail(args, EXIT_OUTPUT, "No space left on device", inp=archive, out=out)
            os.remove(os.path.join(disk, "filler"))
        expect(failed >= 4, "the write failed at %d fill levels only" % failed)
        expect(probe.returncode == 0 and os.path.exists(os.path.join(out, "traces.otf2")) and not
               os.path.exists(os.path.join(out, "old")), "with room, the archive is written")
        expect(not leftovers(out), "nothing left next to OUT: %s" % leftovers(out))
        print("write failed cleanly at %d fill levels" % failed)


def case_full_disk():
    full_disk(force=False)


def case_force_keeps_old_output():
    full_disk(force=True)


def case_unwritable_directory():
    archive = build("ok")
    ro = os.path.join(work, "readonly")
    with tmpfs(ro, "ro,size=64k") as mounted:
        if not mounted:
            os.chmod(ro, 0o555)
            if os.geteuid() == 0:
                print("SKIP: root ignores permissions and may not mount a read-only tmpfs")
                sys.exit(SKIP)
        text = "Read-only file system" if mounted else "Permission denied"
        must_fail([archive, os.path.join(ro, "out")], EXIT_OUTPUT, text)


def interrupt_once(archive, out, sig, ranks):
    """Starts htrace-correct, and signals it while its temporary output exists. Returns None when
    the run finished before the signal could land (the caller tries again), else (code, stderr)."""
    if os.path.lexists(out):
        shutil.rmtree(out)
    proc = subprocess.Popen(command([archive, out], ranks), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    while proc.poll() is None and not leftovers(out):
        pass  # no sleep: the temporary of a small archive exists for milliseconds only
    if proc.poll() is not None:
        proc.communicate()
        return None
    if ranks == 1:
        os.kill(proc.pid, signal.SIGSTOP)  # hold it while checking that the temporary is there
        caught = bool(leftovers(out))
        os.kill(proc.pid, sig)
        os.kill(proc.pid, signal.SIGCONT)
    else:
        caught = True
        proc.send_signal(sig)  # mpirun forwards it to every rank
    _, err = proc.communicate(timeout=120)
    return (proc.returncode, err) if caught else None


def case_interrupted():
    """SIGINT (Ctrl-C), SIGTERM (a batch time limit) and SIGHUP while the output is being
    written: the process ends by that signal, no temporary and no OUT is left, IN is unchanged."""
    archive = build("skewed", "--shift", "8000")
    out = os.path.join(work, "out")
    before = tree_state(archive)
    for sig, ranks in ((signal.SIGINT, 1), (signal.SIGTERM, 1), (signal.SIGHUP, 1),
                       (signal.SIGTERM, 2)):
        for attempt in range(200):
            result = interrupt_once(archive, out, sig, ranks)
            if result is not None:
                break
        expect(result is not None, "%s at P=%d: never caught the run while writing" % (sig.name, ranks))
        code, err = result
        what = "%s at P=%d (attempt %d)" % (sig.name, ranks, attempt + 1)
        if ranks == 1:
            expect(code == -sig, "%s: ended with %d, expected by the signal%s" % (what, code, err))
        else:
            expect(code != 0, "%s: mpirun reported success" % what)
        expect(not leftovers(out), "%s: temporary left behind: %s" % (what, leftovers(out)))
        if ranks == 1 or not os.path.lexists(out):
            expect(not os.path.lexists(out), "%s: OUT left behind" % what)
        else:
            # mpirun forwards the signal late: the ranks may have renamed OUT into place already,
            # which they do only once it is complete, so it must read back whole.
            check = subprocess.run(["otf2-print", os.path.join(out, "traces.otf2")],
                                   capture_output=True, text=True)
            expect(check.returncode == 0, "%s: OUT left behind incomplete:\n%s" % (what, check.stderr))
        expect(tree_state(archive) == before, "%s: the input changed" % what)
        print("%s: clean" % what)


globals()["case_" + sys.argv[1]]()
shutil.rmtree(work, ignore_errors=True)  # kept after a failure, to look at
print("PASS", sys.argv[1])
