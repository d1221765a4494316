"""Blocking collectives convert the buffer ahead, at the same call on every rank.

Runs collective_loop (2 ranks, ITERS MPI_Allreduce calls) traced with the default 64 KiB buffer
(1365 records, 4 records per call): converting at every 32nd collective, no buffer ever fills, so
the only BufferFlush records are the event file's 256 KiB chunk writes. Checks with python3-otf2
that every call is in the archive (Enter, MpiCollectiveBegin, MpiCollectiveEnd, Leave) and that the
BufferFlush records per rank are no more than its event file's full chunks (a buffer filling up
would add ~ITERS * 4 / 1365 of them).

usage: check_collectives.py COLLECTIVE_LOOP_BINARY
"""
import collections
import os
import subprocess
import sys
import tempfile

import otf2
from otf2.events import Enter

from htrace_test.check import fail
from htrace_test.mpi import mpirun_command
from htrace_test.rank_output import RankOutput

ITERS = 20000



def main():
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="htrace-collectives-") as work:
        env = dict(os.environ, HTRACE_ARCHIVE_DIR=work, HTRACE_ARCHIVE_NAME="coll")
        output = RankOutput(os.path.join(work, "output"))
        cmd = mpirun_command(2, [binary, ITERS], bind_none=True, preload=os.environ["HTRACE_LIB"],
                             forward=["HTRACE_ARCHIVE_DIR", "HTRACE_ARCHIVE_NAME"], output=output)
        run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=150)
        if run.returncode != 0 or output.stdout().count(f"allreduces={ITERS}") != 2:
            fail(f"exit {run.returncode}\n{output.describe()}{run.stdout}\n{run.stderr}")
        archive = os.path.join(work, "coll")
        counts = collections.defaultdict(collections.Counter)
        with otf2.reader.open(os.path.join(archive, "traces.otf2")) as trace:
            for location, event in trace.events:
                if isinstance(event, Enter) and event.region.name == "MPI_Allreduce":
                    counts[location._ref]["calls"] += 1
                counts[location._ref][type(event).__name__] += 1
        for ref in (0, 1):
            c = counts[ref]
            chunks = (os.path.getsize(os.path.join(archive, "traces", f"{ref}.evt")) - 1) // (256 << 10)
            if c["calls"] != ITERS or c["MpiCollectiveEnd"] < ITERS:
                fail(f"rank {ref}: {dict(c)}")
            if c["BufferFlush"] > chunks:
                fail(f"rank {ref}: {c['BufferFlush']} BufferFlush records, {chunks} full chunks: "
                     "buffers filled up instead of being converted at collectives")
            print(f"rank {ref}: {ITERS} MPI_Allreduce calls, {c['BufferFlush']} BufferFlush records "
                  f"= chunk writes ({chunks} full chunks)")


main()
