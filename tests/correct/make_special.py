#!/usr/bin/python3
"""Writes small archives for cases make_archive.py does not cover.
Usage: make_special.py OUT_DIR cycle | unreceived | taskwait-in-barrier | clock-offset
  cycle: two processes, each receives the other's message before sending its own (contradictory
         message order: no correction exists, the tool must say so at every P).
  unreceived: rank 0 sends two messages to rank 1, which receives only the first (a run cut
         short): the tool must name the second at every P.
  taskwait-in-barrier: task C runs on thread 1 inside the team's implicit barrier, creates task D
         and waits for it; D runs on the master inside the barrier. Thread 1's timer lags 50 us, so
         C's taskwait appears to end before D completes.
  clock-offset: rank 0 sends to rank 1, whose local definitions hold ClockOffset records (+800 ns,
         applied by OTF2's reader): its receive at 1500 is read as 2300, 300 ns after the send.
  latencies-domain: 20 ping-pongs between two processes of one clock domain (HTRACE::CLOCK::DOMAIN)
         with true latencies of 300 to 870 ns, while the archive's MIN_LATENCY_INTRA_NS says 1000;
         each receive and the Leave after it share a timestamp. Consistent: nothing may move.
  latencies-offset: the same without domains, rank 1's clock 2000 ns ahead: every reply arrives
         before it was sent, but the round trips still show the 300 ns minimum.
  latencies-drifting: the same, one ping-pong every 10 ms, rank 1's clock 2000 ns ahead and
         drifting 10 ppm: over the 190 ms the offset grows by 1.9 us, so the two directions' minima,
         taken 190 ms apart, sum to less than 0; within one ping-pong the offset is constant."""
import sys
import _otf2
import otf2
from otf2.enums import Paradigm, GroupType, RegionRole, Type

out, kind = sys.argv[1], sys.argv[2]
US = 1000


def two_ranks(trace, node):
    """Two single-threaded processes in MPI_COMM_WORLD, and a region "main"."""
    procs = [trace.definitions.location_group("rank %d" % r, system_tree_parent=node) for r in range(2)]
    locs = [trace.definitions.location("master %d" % r, group=procs[r]) for r in range(2)]
    world = trace.definitions.comm("MPI_COMM_WORLD", group=trace.definitions.group(
        "world", members=locs, group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI))
    return locs, world, trace.definitions.region("main")


with otf2.writer.open(out, timer_resolution=1000000000) as trace:
    root = trace.definitions.system_tree_node("machine")
    node = trace.definitions.system_tree_node("node0", parent=root)
    if kind == "cycle":
        locs, world, main = two_ranks(trace, node)
        for r in range(2):
            w = trace.event_writer_from_location(locs[r])
            w.enter(1 * US, main)
            w.mpi_recv(5 * US, 1 - r, world, 0, 8)
            w.mpi_send(6 * US, 1 - r, world, 0, 8)
            w.leave(9 * US, main)
    elif kind == "unreceived":
        locs, world, main = two_ranks(trace, node)
        w0, w1 = (trace.event_writer_from_location(l) for l in locs)
        w0.enter(1 * US, main); w1.enter(1 * US, main)
        w0.mpi_send(2 * US, 1, world, 3, 8); w0.mpi_send(3 * US, 1, world, 3, 8)
        w1.mpi_recv(4 * US, 0, world, 3, 8)
        w0.leave(9 * US, main); w1.leave(9 * US, main)
    elif kind == "taskwait-in-barrier":
        proc = trace.definitions.location_group("rank 0", system_tree_parent=node)
        lm = trace.definitions.location("master 0", group=proc)
        lt = trace.definitions.location("thread 1", group=proc)
        team = trace.definitions.comm("team", group=trace.definitions.group(
            "omp team", members=[lm, lt], group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.OPENMP))
        main = trace.definitions.region("main")
        bar = trace.definitions.region("!$omp implicit barrier", paradigm=Paradigm.OPENMP,
                                       region_role=RegionRole.IMPLICIT_BARRIER)
        tw = trace.definitions.region("!$omp taskwait", paradigm=Paradigm.OPENMP, region_role=RegionRole.TASK_WAIT)
        m, t = trace.event_writer_from_location(lm), trace.event_writer_from_location(lt)
        M = lambda x: 100 * US + x
        T = lambda x: 100 * US + x - 50 * US
        m.enter(M(1 * US), main); m.thread_fork(M(2 * US), Paradigm.OPENMP, 2); m.thread_team_begin(M(3 * US), team)
        m.thread_task_create(M(4 * US), team, 0, 1)  # task C
        m.enter(M(5 * US), bar)
        t.thread_team_begin(T(3500), team); t.enter(T(5 * US), bar)
        t.thread_task_switch(T(6 * US), team, 0, 1)  # C runs on thread 1 inside the barrier
        t.thread_task_create(T(7 * US), team, 1, 1)  # C creates D
        t.enter(T(8 * US), tw)  # C waits for D
        m.thread_task_switch(M(9 * US), team, 1, 1)  # D runs on the master inside the barrier
        m.thread_task_complete(M(10 * US), team, 1, 1)
        m.thread_task_switch(M(10500), team, 0, 0)
        t.leave(T(11 * US), tw)
        t.thread_task_complete(T(12 * US), team, 0, 1)
        t.thread_task_switch(T(12500), team, 0, 0)
        t.leave(T(30 * US), bar); t.thread_team_end(T(31 * US), team)
        m.leave(M(30 * US), bar); m.thread_team_end(M(31 * US), team)
        m.thread_join(M(32 * US), Paradigm.OPENMP); m.leave(M(33 * US), main)
    elif kind == "clock-offset":
        locs, world, main = two_ranks(trace, node)
        w0, w1 = (trace.event_writer_from_location(l) for l in locs)
        w0.enter(1 * US, main); w0.mpi_send(2 * US, 1, world, 0, 8); w0.leave(9 * US, main)
        w1.enter(1 * US, main); w1.mpi_recv(1500, 0, world, 0, 8); w1.leave(9 * US, main)
        _otf2.Archive_OpenDefFiles(trace.handle)
        dw = _otf2.Archive_GetDefWriter(trace.handle, 1)
        _otf2.DefWriter_WriteClockOffset(dw, 0, 800, 0.0)
        _otf2.DefWriter_WriteClockOffset(dw, 10 * US, 800, 0.0)
    elif kind.startswith("latencies-"):
        locs, world, main = two_ranks(trace, node)
        send, recv = (trace.definitions.region(n, paradigm=Paradigm.MPI) for n in ("MPI_Send", "MPI_Recv"))
        w = [trace.event_writer_from_location(l) for l in locs]
        drifting = kind == "latencies-drifting"
        ahead = [0, 2000 if kind != "latencies-domain" else 0]
        drift = [0, 1e-5 if drifting else 0]

        def R(r, t):  # recorded time of process r at true time t
            return 100 * US + t + ahead[r] + round(drift[r] * t)
        for r in range(2):
            w[r].enter(R(r, 0), main)
        t = 1 * US
        for i in range(20):
            for src in (0, 1):  # a message src -> 1 - src with latency 300 + 30 i
                dst, lat = 1 - src, 300 + 30 * i
                w[src].enter(R(src, t), send); w[src].mpi_send(R(src, t + 10), dst, world, 0, 8)
                w[src].leave(R(src, t + 20), send)
                w[dst].enter(R(dst, t - 500), recv); w[dst].mpi_recv(R(dst, t + 10 + lat), src, world, 0, 8)
                w[dst].leave(R(dst, t + 10 + lat), recv)
                t += 2 * US
            if drifting:
                t += 10_000 * US
        for r in range(2):
            w[r].leave(R(r, t), main)
        _otf2.Archive_SetProperty(trace.handle, "HTRACE::CLOCK::TIMEBASE", "global", False)
        _otf2.Archive_SetProperty(trace.handle, "HTRACE::CLOCK::MIN_LATENCY_INTRA_NS", "1000", False)
        if kind == "latencies-domain":
            for l in locs:
                trace.definitions.location_property(l, "HTRACE::CLOCK::DOMAIN", type_id=Type.INT64, value=0)
    else:
        sys.exit("unknown kind " + kind)
