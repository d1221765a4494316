"""Many flushes on several threads keep every event, in order.

Runs flush_threads (3 threads per rank, MPI_THREAD_MULTIPLE) traced with a small event buffer,
then reads the archive with python3-otf2 and checks, per worker thread location, that the events are
exactly the program's calls in program order: for every iteration i, Enter MPI_Isend, MpiIsend
(tag i, 8 bytes, request r), Leave, Enter MPI_Recv, MpiRecv (tag i, 8 bytes), Leave, Enter
MPI_Wait, MpiIsendComplete (request r), Leave, with only BufferFlush records in between;
timestamps never decrease; the counts equal what the program printed; the tracer reports nothing
dropped.

BUFFER 4k (85 records): the recorder converts ahead at MPI_Recv and MPI_Wait once 32 records
wait, so no buffer ever fills and BufferFlush records mark only the event file's chunk writes.
BUFFER 1k (21 records, fewer than 32): every conversion is at a full buffer, each one marked.

usage: check_flush.py FLUSH_THREADS_BINARY TSC_STAMPS(0|1) BUFFER(4k|1k)
"""
import collections
import os
import re
import subprocess
import sys
import tempfile

import otf2
from otf2.events import BufferFlush, Enter, Leave, MpiIsend, MpiIsendComplete, MpiRecv

from htrace_test.check import fail
from htrace_test.mpi import mpirun_command
from htrace_test.rank_output import RankOutput

THREADS, ITERS, PER_ITER = 3, 3000, 9



def main():
    binary, stamps, buffer = sys.argv[1], sys.argv[2], sys.argv[3]
    records = {"4k": 85, "1k": 21}[buffer]
    with tempfile.TemporaryDirectory(prefix="htrace-flush-") as work:
        env = dict(os.environ, HTRACE_BUFFER_SIZE=buffer, HTRACE_ARCHIVE_DIR=work,
                   HTRACE_ARCHIVE_NAME="flush", HTRACE_TSC_STAMPS=stamps, HTRACE_VERBOSE="1")
        output = RankOutput(os.path.join(work, "output"))
        cmd = mpirun_command(2, [binary, THREADS, ITERS], bind_none=True, preload=os.environ["HTRACE_LIB"],
                             forward=["HTRACE_BUFFER_SIZE", "HTRACE_ARCHIVE_DIR", "HTRACE_ARCHIVE_NAME",
                                      "HTRACE_TSC_STAMPS", "HTRACE_VERBOSE"], output=output)
        run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=150)
        if run.returncode != 0:
            fail(f"exit {run.returncode}\n{output.describe()}{run.stdout}\n{run.stderr}")
        did = re.findall(r"THREAD rank=(\d) thread=(\d+) sends=(\d+) recvs=(\d+)", output.stdout())
        if len(did) != 2 * THREADS or any(int(s) != ITERS or int(r) != ITERS for _, _, s, r in did):
            fail(f"the program did not report {ITERS} sends and receives per thread: {did}")
        # libhtrace's lines (the summary's "N dropped" among them) and the program's own stderr.
        said = "\n".join(output.log()) + "\n" + output.stderr()
        if re.search(r"[1-9]\d* dropped", said) or re.search(r"warning|error|recording stopped", said):
            fail(f"the tracer reports lost events or trouble:\n{said}")

        per_location = collections.defaultdict(list)
        with otf2.reader.open(os.path.join(work, "flush", "traces.otf2")) as trace:
            defs = trace.definitions
            for location, event in trace.events:
                per_location[location._ref].append(event)
            declared = {loc._ref: loc.number_of_events for loc in defs.locations}

    workers = collections.Counter()
    flushes = 0
    for ref, events in per_location.items():
        if declared.get(ref) != len(events):
            fail(f"location {ref:#x}: {len(events)} events read, {declared.get(ref)} declared")
        times = [e.time for e in events]
        if any(a > b for a, b in zip(times, times[1:])):
            fail(f"location {ref:#x}: timestamps decrease")
        calls = [e for e in events if not isinstance(e, BufferFlush)]
        flushes_here = len(events) - len(calls)
        if not any(isinstance(e, MpiIsend) for e in calls):
            continue  # the main thread: MPI_Init, MPI_Comm_dup, MPI_Comm_free, MPI_Finalize
        rank = ref & 0xffffffff
        workers[rank] += 1
        flushes += flushes_here
        if len(calls) != PER_ITER * ITERS:
            fail(f"location {ref:#x}: {len(calls)} events, expected {PER_ITER * ITERS}")
        for i in range(ITERS):
            block = calls[PER_ITER * i:PER_ITER * (i + 1)]
            names = [e.region.name for e in block if isinstance(e, (Enter, Leave))]
            send, recv, done = block[1], block[4], block[7]
            if not (names == ["MPI_Isend"] * 2 + ["MPI_Recv"] * 2 + ["MPI_Wait"] * 2
                    and [type(e) for e in block[0::3]] == [Enter] * 3
                    and [type(e) for e in block[2::3]] == [Leave] * 3
                    and isinstance(send, MpiIsend) and send.msg_tag == i % 30000 and send.msg_length == 8
                    and isinstance(recv, MpiRecv) and recv.msg_tag == i % 30000 and recv.msg_length == 8
                    and isinstance(done, MpiIsendComplete) and done.request_id == send.request_id):
                fail(f"location {ref:#x}, iteration {i}: {[type(e).__name__ for e in block]} "
                     f"{[getattr(e, 'msg_tag', None) for e in block]}")
        if records < 32:  # 9 records per iteration: a full buffer every 2-3 iterations
            if flushes_here < PER_ITER * ITERS // records - 2:
                fail(f"location {ref:#x}: only {flushes_here} BufferFlush records")
        elif flushes_here > 2:  # ~270 KB of events: one 256 KiB chunk write, not ~300 buffers
            fail(f"location {ref:#x}: {flushes_here} BufferFlush records: buffers filled up")
    if workers != {0: THREADS, 1: THREADS}:
        fail(f"expected {THREADS} worker locations per rank, found {dict(workers)}")
    print(f"ok: {2 * THREADS} threads x {PER_ITER * ITERS} events in program order, {flushes} flushes, "
          f"TSC stamps {stamps}, buffer {buffer}")


main()
