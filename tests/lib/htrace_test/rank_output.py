"""What the ranks of an MPI run said, read from files rather than from the launcher's output.

A launcher (mpirun, hydra's mpiexec, tests/cluster/htrace-cluster-run, srun) forwards the ranks'
stdout and stderr and may drop some of it: an aborting rank's last line, a banner after SIGTERM, a
line written during MPI_Init. No test's verdict rests on that forwarding; a test reads

  - libhtrace's diagnostic lines (htrace[RANK]: LEVEL: ..., rank 0's summary among them) from
    the one file HTRACE_LOG_FILE names for all ranks: log();
  - the program's own stdout and stderr from one file per rank that the rank writes itself
    (rank_files.sh redirects them, then execs the program): stdout(), stderr().

What the launcher printed stays for diagnosis only. mpirun_command(..., output=RankOutput(DIR))
(htrace_test.mpi) sets both up; a command line built by hand uses program() and log_variable().
A program that reads stdin gets it from a file: Open MPI's mpirun stops passing its stdin on to a
rank that has closed the stdout and stderr it was started with."""
import os
import re

RANK_FILES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rank_files.sh")
LOG_NAME = "htrace.log"


class RankOutput:
    """The files of one run, in `directory`: created if missing, an earlier run's files removed
    (libhtrace appends to the log)."""

    def __init__(self, directory):
        self.directory = directory
        os.makedirs(directory, exist_ok=True)
        self.log_file = os.path.join(directory, LOG_NAME)
        for name in os.listdir(directory):
            if name == LOG_NAME or re.fullmatch(r"rank-\w+\.(out|err)", name):
                os.remove(os.path.join(directory, name))

    def program(self, program):
        """The command each rank runs instead of `program` (a list): it, with its output in files."""
        return ["/bin/sh", RANK_FILES, self.directory] + [str(p) for p in program]

    def log_variable(self):
        """HTRACE_LOG_FILE=PATH, to pass to the ranks."""
        return "HTRACE_LOG_FILE=" + self.log_file

    def ranks(self):
        """The world ranks that started (have their files), in order."""
        found = (re.fullmatch(r"rank-(\d+)\.out", name) for name in os.listdir(self.directory))
        return sorted(int(m.group(1)) for m in found if m)

    def stdout(self, rank=None):
        """What `rank` wrote on stdout; without a rank, every rank's in rank order."""
        return self._read("out", rank)

    def stderr(self, rank=None):
        """What `rank` wrote on stderr (libhtrace's lines among it; log() has them for certain)."""
        return self._read("err", rank)

    def log(self):
        """libhtrace's diagnostic lines of every rank, in the order they were written."""
        if not os.path.exists(self.log_file):
            return []
        with open(self.log_file, errors="replace") as f:
            return f.read().splitlines()

    def describe(self):
        """Everything the ranks said, for a failure message."""
        parts = ["--- htrace log\n" + "".join(line + "\n" for line in self.log())]
        for rank in self.ranks():
            parts.append(f"--- rank {rank} stdout\n{self.stdout(rank)}"
                         f"--- rank {rank} stderr\n{self.stderr(rank)}")
        return "".join(parts)

    def _read(self, stream, rank):
        text = ""
        for r in self.ranks() if rank is None else [rank]:
            path = os.path.join(self.directory, f"rank-{r}.{stream}")
            if os.path.exists(path):
                with open(path, errors="replace") as f:
                    text += f.read()
        return text
