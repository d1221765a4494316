"""The MPI launcher command line of a test run, for the MPI of the build under test.

ctest sets HTRACE_MPI_FLAVOR (openmpi or mpich) and MPIRUN (tests/HtraceTesting.cmake: Open MPI's
mpirun --allow-run-as-root --oversubscribe, or MPICH's hydra mpiexec); outside ctest Open MPI's
defaults apply. Shell scripts use the same rules through the command line:

    python3 -m htrace_test.mpi -np N [--bind-none] [--forward NAME[=VALUE]]... [--preload LIB] -- PROGRAM...
"""
import os
import shlex
import sys

DEFAULT_MPIRUN = {"openmpi": "mpirun --allow-run-as-root --oversubscribe", "mpich": "mpiexec.mpich"}


def flavor():
    """openmpi or mpich: the MPI the build under test is for."""
    return os.environ.get("HTRACE_MPI_FLAVOR", "openmpi")


def mpirun_command(np, program=(), *, bind_none=False, forward=(), preload=None, options=(),
                   output=None):
    """The launcher, NP ranks, then OPTIONS and PROGRAM. forward: names (or NAME=VALUE) passed to
    the ranks; preload: a library the ranks load (only the ranks: the launcher and its daemons do
    not). bind_none keeps the ranks of an oversubscribed 2-core machine from being pinned to one
    core each. output: a RankOutput (htrace_test.rank_output) into which each rank writes its
    stdout and stderr, and libhtrace its diagnostic lines."""
    if output is not None:
        program = output.program(program)
        forward = [*forward, output.log_variable()]
    if flavor() == "mpich":
        return _hydra(np, program, bind_none, forward, preload, options)
    command = shlex.split(os.environ.get("MPIRUN", DEFAULT_MPIRUN["openmpi"])) + ["-np", str(np)]
    if bind_none:
        command += ["--bind-to", "none"]
    for name in forward:
        command += ["-x", name]
    if preload:
        command += ["-x", "LD_PRELOAD=" + preload]
    return command + list(options) + [str(p) for p in program]


def _hydra(np, program, bind_none, forward, preload, options):
    """MPICH's hydra passes the whole environment on by itself; -genv sets a value for the ranks
    only. Hydra binds nothing unless asked."""
    command = shlex.split(os.environ.get("MPIRUN", DEFAULT_MPIRUN["mpich"])) + ["-n", str(np)]
    if bind_none:
        command += ["-bind-to", "none"]
    for item in forward:
        name, has_value, value = item.partition("=")
        if has_value:
            command += ["-genv", name, value]
    if preload:
        command += ["-genv", "LD_PRELOAD", preload]
    return command + list(options) + [str(p) for p in program]


def main(argv):
    np, bind_none, forward, preload = None, False, [], None
    while argv and argv[0] != "--":
        option = argv.pop(0)
        if option == "-np":
            np = int(argv.pop(0))
        elif option == "--bind-none":
            bind_none = True
        elif option == "--forward":
            forward.append(argv.pop(0))
        elif option == "--preload":
            preload = argv.pop(0)
        else:
            sys.exit(f"htrace_test.mpi: unknown option '{option}'")
    if np is None or not argv:
        sys.exit(__doc__)
    command = mpirun_command(np, argv[1:], bind_none=bind_none, forward=forward, preload=preload)
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
