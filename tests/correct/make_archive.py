#!/usr/bin/python3
"""Writes a small OTF2 archive with known ground truth: 3 MPI ranks (p2p, Isend/Irecv, a barrier
and a bcast) and an OpenMP team of 2 threads on rank 0 (fork/join, barrier, lock). Clock errors
are injected per process: rank 1 runs `--shift` ns behind the truth.
Usage: make_archive.py OUT_DIR [--shift NS]"""
import sys
import otf2
from otf2.enums import Type, RegionRole, Paradigm, CollectiveOp, LocationType, GroupType

out = sys.argv[1]
shift = int(sys.argv[sys.argv.index("--shift") + 1]) if "--shift" in sys.argv else 0
thread_shift = int(sys.argv[sys.argv.index("--thread-shift") + 1]) if "--thread-shift" in sys.argv else 0
unmatched = "--unmatched" in sys.argv
shift2 = int(sys.argv[sys.argv.index("--shift2") + 1]) if "--shift2" in sys.argv else 0  # rank 2 behind
neighborhood = "--neighborhood" in sys.argv  # a neighbor allgather on the line 0-1-2
barrier_task = "--barrier-task" in sys.argv  # a task completes inside the team's barrier
taskgroup = "--taskgroup" in sys.argv  # a taskgroup whose child creates a grandchild
missing_coll = "--missing-collective" in sys.argv  # rank 2 never enters the scan (truncated run)
process_nodes = "--process-nodes" in sys.argv  # htrace's system tree: node > one node per process
zero_bcast = "--zero-bcast" in sys.argv  # a 0-byte bcast: non-roots may finish before the root begins
# Rank 0 waits for two Irecvs from rank 2 in the opposite order of posting, and rank 2 sends again
# on the channel of its cancelled Isend: matched in posting order, cancelled sends left out.
posting_order = "--posting-order" in sys.argv
pivot = "--pivot" in sys.argv  # rank 1 sends to rank 2 just before its violated receive  # drop a send, as a truncated run would
US = 1000

with otf2.writer.open(out, timer_resolution=1000000000) as trace:
    root = trace.definitions.system_tree_node("machine")
    node = trace.definitions.system_tree_node("node0", parent=root, class_name="node" if process_nodes else "")
    parents = [trace.definitions.system_tree_node("rank %d" % r, parent=node, class_name="process")
               for r in range(3)] if process_nodes else [node] * 3
    procs = [trace.definitions.location_group("rank %d" % r, system_tree_parent=parents[r]) for r in range(3)]
    locs = [trace.definitions.location("master %d" % r, group=procs[r]) for r in range(3)]
    thread1 = trace.definitions.location("thread 1 of rank 0", group=procs[0])
    thread1b = trace.definitions.location("thread 1 of rank 1", group=procs[1])
    comm_world = trace.definitions.comm("MPI_COMM_WORLD",
        group=trace.definitions.group("world", members=locs, group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI))
    team = trace.definitions.comm("team",
        group=trace.definitions.group("omp team", members=[locs[0], thread1], group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.OPENMP))
    team1 = trace.definitions.comm("team rank 1",
        group=trace.definitions.group("omp team 1", members=[locs[1], thread1b], group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.OPENMP))
    r_main = trace.definitions.region("main")
    r_send = trace.definitions.region("MPI_Send", paradigm=Paradigm.MPI)
    r_recv = trace.definitions.region("MPI_Recv", paradigm=Paradigm.MPI)
    r_bar = trace.definitions.region("MPI_Barrier", paradigm=Paradigm.MPI, region_role=RegionRole.BARRIER)
    r_omp_bar = trace.definitions.region("!$omp barrier", paradigm=Paradigm.OPENMP, region_role=RegionRole.BARRIER)
    r_taskwait = trace.definitions.region("!$omp taskwait", paradigm=Paradigm.OPENMP, region_role=RegionRole.TASK_WAIT)
    r_taskgroup = trace.definitions.region("!$omp taskgroup", paradigm=Paradigm.OPENMP, region_role=RegionRole.TASK_WAIT)

    def T(r, t):  # recorded time: truth plus the injected error of process r
        return t + 100 * US - (shift if r == 1 else shift2 if r == 2 else 0)

    def TT(t):  # thread 1 of rank 0 with its own injected error (a per-thread timer)
        return T(0, t) - thread_shift

    w = [trace.event_writer_from_location(l) for l in locs]
    wt = trace.event_writer_from_location(thread1)
    wb = trace.event_writer_from_location(thread1b)
    # Truth: rank 0 sends at 10 us, rank 1 receives at 15 us (5 us latency).
    for r in range(3):
        w[r].enter(T(r, 1 * US), r_main)
    w[0].enter(T(0, 9 * US), r_send); w[0].mpi_send(T(0, 10 * US), 1, comm_world, 7, 64) if not unmatched else None; w[0].leave(T(0, 11 * US), r_send)
    # Hybrid paper Fig. 2: the receive sits in a parallel region before a barrier, so repairing
    # it moves the master's barrier enter, which must move the other thread's barrier leave too.
    w[1].thread_fork(T(1, 4 * US), Paradigm.OPENMP, 2)
    w[1].thread_team_begin(T(1, 4 * US + 100), team1); wb.thread_team_begin(T(1, 4 * US + 200), team1)
    if pivot:  # the backward ramp of the receive below must stop below this send's bound
        w[1].mpi_send(T(1, 12500), 2, comm_world, 9, 8)
    w[1].enter(T(1, 13500), r_recv); w[1].mpi_recv(T(1, 15 * US), 0, comm_world, 7, 64); w[1].leave(T(1, 16 * US), r_recv)
    wb.enter(T(1, 13 * US), r_omp_bar); w[1].enter(T(1, 16 * US + 500), r_omp_bar)
    wb.leave(T(1, 17 * US), r_omp_bar); w[1].leave(T(1, 17 * US), r_omp_bar)
    wb.thread_team_end(T(1, 17 * US + 100), team1); w[1].thread_team_end(T(1, 17 * US + 100), team1)
    w[1].thread_join(T(1, 17 * US + 300), Paradigm.OPENMP)
    # Rank 1 -> rank 2 non-blocking.
    w[1].mpi_isend(T(1, 20 * US), 2, comm_world, 1, 8, 42); w[1].mpi_isend_complete(T(1, 21 * US), 42)
    w[2].mpi_irecv_request(T(2, 3 * US), 5)
    if pivot:
        w[2].mpi_recv(T(2, 13700), 1, comm_world, 9, 8)
    w[2].mpi_irecv(T(2, 26 * US), 1, comm_world, 1, 8, 5)
    # Barrier on all three: enters at 30/31/32 us, leaves at 40 us.
    for r in range(3):
        w[r].enter(T(r, (30 + r) * US), r_bar)
        w[r].mpi_collective_begin(T(r, (30 + r) * US + 10))
        w[r].mpi_collective_end(T(r, 40 * US), CollectiveOp.BARRIER, comm_world, 0xFFFFFFFF, 0, 0)
        w[r].leave(T(r, 40 * US + 10), r_bar)
    # Bcast from rank 1: begins at 50 us, others end at 60 us.
    for r in range(3):
        w[r].mpi_collective_begin(T(r, 50 * US + r * 100))
        w[r].mpi_collective_end(T(r, 60 * US), CollectiveOp.BCAST, comm_world, 1, 8, 8)
    # Non-blocking allreduce (request at 62-64 us, completion at 68 us) and a scan.
    for r in range(3):
        w[r].non_blocking_collective_request(T(r, 62 * US + r * US), 900 + r)
        w[r].non_blocking_collective_complete(T(r, 68 * US), CollectiveOp.ALLREDUCE, comm_world, 0xFFFFFFFF, 8, 8, 900 + r)
        if missing_coll and r == 2:
            continue
        w[r].mpi_collective_begin(T(r, 68 * US + 100 + r * 200))
        w[r].mpi_collective_end(T(r, 69 * US + 500), CollectiveOp.SCAN, comm_world, 0xFFFFFFFF, 8, 8)
    # A cancelled Isend from rank 2 carries no message.
    w[2].mpi_isend(T(2, 69 * US + 600), 0, comm_world, 5, 8, 77); w[2].mpi_request_cancelled(T(2, 69 * US + 700), 77)
    # OpenMP on rank 0: fork, team, barrier, lock order master then thread, a task.
    w[0].thread_fork(T(0, 70 * US), Paradigm.OPENMP, 2)
    w[0].thread_team_begin(T(0, 71 * US), team); wt.thread_team_begin(TT(72 * US), team)
    if barrier_task:  # created before the barrier, run by the thread while it waits in it
        w[0].thread_task_create(T(0, 72 * US + 500), team, 0, 2)
    w[0].enter(T(0, 73 * US), r_omp_bar); wt.enter(TT(74 * US), r_omp_bar)
    if barrier_task:
        wt.thread_task_switch(TT(74 * US + 100), team, 0, 2)
        wt.thread_task_complete(TT(75 * US + 500), team, 0, 2)
        wt.thread_task_switch(TT(75 * US + 600), team, 2, 0)
    w[0].leave(T(0, 76 * US), r_omp_bar); wt.leave(TT(76 * US), r_omp_bar)
    w[0].thread_acquire_lock(T(0, 77 * US), Paradigm.OPENMP, 3, 0); w[0].thread_release_lock(T(0, 78 * US), Paradigm.OPENMP, 3, 0)
    wt.thread_acquire_lock(TT(79 * US), Paradigm.OPENMP, 3, 1); wt.thread_release_lock(TT(80 * US), Paradigm.OPENMP, 3, 1)
    # A task created by the master, run by the thread, awaited by the master's taskwait.
    w[0].thread_task_create(T(0, 80 * US), team, 0, 1); wt.thread_task_switch(TT(80 * US + 200), team, 0, 1)
    w[0].enter(T(0, 80 * US + 100), r_taskwait)
    wt.thread_task_complete(TT(80 * US + 500), team, 0, 1); wt.thread_task_switch(TT(80 * US + 550), team, 1, 0)
    w[0].leave(T(0, 80 * US + 600), r_taskwait)
    if taskgroup:  # the master's taskgroup: child 3 runs on the thread and creates grandchild (1, 1)
        w[0].enter(T(0, 80 * US + 650), r_taskgroup)
        w[0].thread_task_create(T(0, 80 * US + 660), team, 0, 3)
        wt.thread_task_switch(TT(80 * US + 670), team, 0, 3)
        wt.thread_task_create(TT(80 * US + 680), team, 1, 1)
        wt.thread_task_complete(TT(80 * US + 690), team, 0, 3)
        wt.thread_task_switch(TT(80 * US + 700), team, 1, 1)
        wt.thread_task_complete(TT(80 * US + 800), team, 1, 1)
        wt.thread_task_switch(TT(80 * US + 810), team, 1, 0)
        w[0].leave(T(0, 80 * US + 900), r_taskgroup)
    wt.thread_team_end(TT(81 * US), team); w[0].thread_team_end(T(0, 81 * US), team)
    w[0].thread_join(T(0, 83 * US), Paradigm.OPENMP)
    if neighborhood:
        # MPI_Neighbor_allgather on a non-periodic line 0-1-2: ranks 0 and 2 are not neighbours, so
        # rank 2 may finish (86 us) before rank 0 begins (88 us) in true time.
        r_nb = trace.definitions.region("MPI_Neighbor_allgather", paradigm=Paradigm.MPI,
                                        region_role=RegionRole.COLL_ALL2ALL)
        for r, start, end in ((2, 85, 86), (1, 87, 89), (0, 88, 90)):
            w[r].enter(T(r, start * US), r_nb)
            w[r].mpi_collective_begin(T(r, start * US + 100))
            w[r].mpi_collective_end(T(r, end * US), CollectiveOp.ALLGATHER, comm_world, 0xFFFFFFFF, 8, 16)
            w[r].leave(T(r, end * US + 100), r_nb)
    if zero_bcast:  # count 0: MPI returns at once, ranks 1 and 2 finish before the root enters
        for r, start in ((1, 91), (2, 91), (0, 93)):
            w[r].mpi_collective_begin(T(r, start * US))
            w[r].mpi_collective_end(T(r, start * US + 200), CollectiveOp.BCAST, comm_world, 0, 0, 0)
    if posting_order:
        # Truth: the Irecv posted first (request 11) gets rank 2's first message on tag 3, sent at
        # 94.2 us; the one posted second (12) gets the second, sent at 95.1 us, and completes first.
        w[0].mpi_irecv_request(T(0, 93 * US + 500), 11); w[0].mpi_irecv_request(T(0, 93 * US + 600), 12)
        w[2].mpi_send(T(2, 94 * US), 0, comm_world, 5, 8)  # tag 5: the cancelled Isend's channel
        w[0].mpi_recv(T(0, 94 * US + 100), 2, comm_world, 5, 8)
        w[2].mpi_send(T(2, 94 * US + 200), 0, comm_world, 3, 8)
        w[2].mpi_send(T(2, 95 * US + 100), 0, comm_world, 3, 8)
        w[0].mpi_irecv(T(0, 95 * US + 300), 2, comm_world, 3, 8, 12)
        w[0].mpi_irecv(T(0, 95 * US + 500), 2, comm_world, 3, 8, 11)
    for r in range(3):
        w[r].leave(T(r, 100 * US), r_main)
