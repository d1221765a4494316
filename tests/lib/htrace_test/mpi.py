"""The mpirun command line of a test run. ctest sets MPIRUN (tests/HtraceTesting.cmake: mpirun
--allow-run-as-root --oversubscribe); outside ctest the same default applies."""
import os
import shlex

DEFAULT_MPIRUN = "mpirun --allow-run-as-root --oversubscribe"


def mpirun_command(np, program=(), *, bind_none=False, forward=(), preload=None, options=()):
    """[mpirun..., -np NP, (--bind-to none), (-x NAME)..., (-x LD_PRELOAD=PRELOAD), OPTIONS...,
    PROGRAM...]. forward: names (or NAME=VALUE) passed to the ranks with -x; preload: a library
    the ranks load (only the ranks: mpirun and its daemons do not). bind_none keeps the ranks of
    an oversubscribed 2-core machine from being pinned to one core each."""
    command = shlex.split(os.environ.get("MPIRUN", DEFAULT_MPIRUN)) + ["-np", str(np)]
    if bind_none:
        command += ["--bind-to", "none"]
    for name in forward:
        command += ["-x", name]
    if preload:
        command += ["-x", "LD_PRELOAD=" + preload]
    return command + list(options) + [str(p) for p in program]
