"""Ending a test with a message: fail() prints "FAIL: message" and exits with status 1;
Expectations collect failed checks instead; run_or_exit ends the test when a command fails."""
import shutil
import subprocess
import sys


class TestFailure(SystemExit):
    """Raised by fail(): exits the interpreter with status 1 unless a harness catches it."""

    def __init__(self, message):
        super().__init__(1)
        self.message = message

    def __str__(self):
        return self.message


def fail(message):
    """Prints FAIL: message and ends the test (exit status 1)."""
    print(f"FAIL: {message}", flush=True)
    raise TestFailure(message)


def require(condition, message):
    """fail(message) unless condition holds."""
    if not condition:
        fail(message)


class Expectations:
    """Checks that do not end the test: each failed one prints "FAIL: what" and is kept, so that
    one run reports every failure; `failures` lists them."""

    def __init__(self):
        self.failures = []

    def __call__(self, condition, what):
        if not condition:
            self.failures.append(what)
            print("FAIL:", what, flush=True)

    def finish(self, workdir):
        """Ends the test: on failure keeps `workdir` for inspection and exits 1, else removes it
        and prints OK."""
        if self.failures:
            print(f"files kept in {workdir}")
            sys.exit(1)
        shutil.rmtree(workdir, ignore_errors=True)
        print("OK")


def run_or_exit(cmd, ok=(0,), timeout=300, **kw):
    """Runs cmd (output captured as text); ends the test with its output unless its exit status
    is in `ok`."""
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    if p.returncode not in ok:
        raise SystemExit("'%s' exited %d:\n%s\n%s" % (" ".join(cmd), p.returncode,
                                                        p.stdout[-3000:], p.stderr[-3000:]))
    return p
