"""Runs an example program under mpirun with libhtrace preloaded and finds the archive it wrote.

Used by tests/mpi, tests/ompt and tests/rma_io. Environment (set by ctest, see
tests/HtraceTesting.cmake): HTRACE_LIB, HTRACE_BUILD_DIR, MPIRUN, HTRACE_SOURCE_DIR. Every run gets a fresh archive directory under a temporary directory.
What the ranks said is read from files (Run.output, htrace_test.rank_output), never from what
mpirun forwarded: that is kept for failure messages only.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

import trace_check
from htrace_test.check import TestFailure, fail, require  # noqa: F401  (re-exported for the tests)
from htrace_test.mpi import mpirun_command
from htrace_test.rank_output import RankOutput

_workdirs = []  # removed when the test passes, kept for inspection when it fails

RUN_TIMEOUT = 90  # seconds; ctest's TIMEOUT is larger so a hang is reported by us, with output


def example(name):
    """Path of a built example program, e.g. example('pingpong-ring/pingpong-ring')."""
    path = os.path.join(os.environ["HTRACE_BUILD_DIR"], "examples", name)
    require(os.access(path, os.X_OK), f"example not built: {path}")
    return path


class Run:
    """The outcome of one mpirun: exit code, what the ranks said (output: a RankOutput), seconds,
    the archive directory used; launcher_stdout and launcher_stderr for diagnosis only."""

    def __init__(self, returncode, output, launcher_stdout, launcher_stderr, seconds, archive_dir,
                 workdir):
        self.workdir = workdir
        self.returncode = returncode
        self.output = output
        self.launcher_stdout = launcher_stdout
        self.launcher_stderr = launcher_stderr
        self.seconds = seconds
        self.archive_dir = archive_dir

    def archives(self):
        """Archive directories (holding a .otf2 anchor) directly inside archive_dir."""
        found = []
        if os.path.isdir(self.archive_dir):
            for entry in sorted(os.listdir(self.archive_dir)):
                path = os.path.join(self.archive_dir, entry)
                if os.path.isdir(path) and any(f.endswith(".otf2") for f in os.listdir(path)):
                    found.append(path)
        return found

    def archive(self):
        found = self.archives()
        require(len(found) == 1, f"expected one archive in {self.archive_dir}, found {found}\n{self.describe()}")
        return found[0]

    def output_field(self, name):
        """The integer value of `name=` in the program's result line."""
        for word in self.output.stdout().split():
            if word.startswith(name + "="):
                return int(word.split("=", 1)[1])
        fail(f"no '{name}=' in the program output:\n{self.describe()}")

    def describe(self):
        return (f"exit code {self.returncode} after {self.seconds:.1f} s\n{self.output.describe()}"
                f"--- mpirun stdout\n{self.launcher_stdout}--- mpirun stderr\n{self.launcher_stderr}")


def mpirun(program, args=(), np=2, env=None, archive_dir=None, preload="x", timeout=RUN_TIMEOUT,
           mpirun_options=(), files=None):
    """Runs `program` on `np` ranks. preload: "x" passes LD_PRELOAD with mpirun -x, "env" sets it
    in mpirun's own environment, None runs untraced. `env` adds HTRACE_* variables (forwarded with -x).
    `files` ({name: text}) are written into the working directory first. Each rank's stdout and
    stderr, and libhtrace's log (HTRACE_LOG_FILE), go to files under the working directory."""
    workdir = tempfile.mkdtemp(prefix="htrace-e2e-")
    _workdirs.append(workdir)
    for name, text in (files or {}).items():
        with open(os.path.join(workdir, name), "w") as f:
            f.write(text)
    if archive_dir is None:
        archive_dir = os.path.join(workdir, "archives")
        os.makedirs(archive_dir)
    variables = {"HTRACE_ARCHIVE_DIR": archive_dir}
    variables.update(env or {})
    child_env = dict(os.environ)
    child_env.update(variables)
    output = RankOutput(os.path.join(workdir, "output"))
    # preload "x": only the ranks load the tracer, mpirun itself does not
    command = mpirun_command(np, [program, *args], forward=variables,
                             preload=os.environ["HTRACE_LIB"] if preload == "x" else None,
                             options=mpirun_options, output=output)
    if preload == "env":
        child_env["LD_PRELOAD"] = os.environ["HTRACE_LIB"]
    start = time.monotonic()
    try:
        done = subprocess.run(command, env=child_env, cwd=workdir, capture_output=True, text=True,
                              timeout=timeout, start_new_session=True)
    except subprocess.TimeoutExpired as expired:
        fail(f"mpirun did not finish within {timeout} s: {' '.join(command)}\n{output.describe()}"
             f"--- mpirun stdout\n{expired.stdout}\n--- mpirun stderr\n{expired.stderr}")
    return Run(done.returncode, output, done.stdout, done.stderr, time.monotonic() - start, archive_dir,
               workdir)


def check_clean(path, **expect):
    """trace_check on the archive; fails the test with the violations listed."""
    report = trace_check.check(path, **expect)
    require(report.ok, f"trace_check found {len(report.violations)} violation(s) in {path}:\n  " +
            "\n  ".join(report.violations[:30]))
    return report


def main(tests):
    """Runs the test named by argv[1] from the dict `tests` (name -> function)."""
    if len(sys.argv) != 2 or sys.argv[1] not in tests:
        print(f"usage: {sys.argv[0]} {'|'.join(sorted(tests))}", file=sys.stderr)
        return 2
    try:
        tests[sys.argv[1]]()
    except TestFailure:  # fail() printed the message
        print(f"kept for inspection: {' '.join(_workdirs)}", file=sys.stderr)
        return 1
    for workdir in _workdirs:
        shutil.rmtree(workdir, ignore_errors=True)
    print("PASS")
    return 0
