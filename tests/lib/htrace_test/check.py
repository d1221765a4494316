"""Ending a test with a message: fail() prints "FAIL: message" and exits with status 1."""


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
