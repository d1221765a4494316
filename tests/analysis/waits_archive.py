#!/usr/bin/python3
"""Writes an OTF2 archive of 4 MPI ranks with known wait states, and the waits it holds as JSON,
computed here from the archive's own timestamps with Scalasca's definitions (no htrace code).
Usage: waits_archive.py OUT_DIR CASE [CASE...]   (cases: see CASES; several run one after another)
The expected waits go to OUT_DIR.expected.json: per pattern the total, the calls that waited,
the longest wait, and the splits by waiting rank, by the rank waited for, by region and by
communicator, all in ns."""
import json
import sys

import otf2
from otf2.enums import CollectiveOp, GroupType, Paradigm, RegionRole

US = 1000
RANKS = 4
UNDEFINED_ROOT = 0xFFFFFFFF
PATTERNS = ("late_sender", "late_sender_wrong_order", "late_receiver", "wait_at_barrier", "wait_at_nxn", "late_broadcast",
            "early_reduce", "early_scan")
REGIONS = ("MPI_Send", "MPI_Ssend", "MPI_Bsend", "MPI_Recv", "MPI_Isend", "MPI_Irecv", "MPI_Wait",
           "MPI_Waitall", "MPI_Sendrecv", "MPI_Barrier", "MPI_Allreduce", "MPI_Bcast",
           "MPI_Reduce", "MPI_Scan", "MPI_Iallreduce", "MPI_Ibarrier", "MPI_Ibcast", "MPI_Ireduce")


class Call:
    """One MPI call of one rank: its region, enter and leave (ns), the records inside it and the
    communicator they name (peers and roots are ranks in it)."""

    def __init__(self, rank, region, enter, leave, comm):
        self.rank, self.region, self.enter, self.leave = rank, region, enter, leave
        self.comm = comm
        self.records = []  # (writer method name, arguments after the time and communicator)


class Run:
    def __init__(self):
        self.calls = [[] for _ in range(RANKS)]
        self.waits = []  # (pattern, waiting call, ns, world rank waited for)
        self.next_request = 1

    def call(self, rank, region, enter, leave, *records, comm="MPI_COMM_WORLD"):
        c = Call(rank, region, enter, leave, comm)
        c.records = list(records)
        self.calls[rank].append(c)
        return c

    def request(self):
        self.next_request += 1
        return self.next_request

    def expect(self, pattern, call, partners):
        """Scalasca: the call waits from its enter until the latest partner entered, but never
        longer than it lasted; of partners entering at once, the lowest rank is waited for."""
        partner = max(partners, key=lambda p: (p.enter, -p.rank))
        wait = min(partner.enter - call.enter, call.leave - call.enter)
        if wait > 0:
            self.waits.append((pattern, call, wait, partner.rank))

    def expected(self):
        out = {}
        for p in PATTERNS:
            mine = [w for w in self.waits if w[0] == p]
            by_region, by_comm = {}, {}
            for _, call, ns, _ in mine:
                by_region[call.region] = by_region.get(call.region, 0) + ns
                by_comm[call.comm] = by_comm.get(call.comm, 0) + ns
            out[p] = {
                "total_ns": sum(w[2] for w in mine),
                "calls": len(mine),
                "longest_ns": max([w[2] for w in mine], default=0),
                "by_location": [sum(w[2] for w in mine if w[1].rank == r) for r in range(RANKS)],
                "caused_by": [sum(w[2] for w in mine if w[3] == r) for r in range(RANKS)],
                "by_region": by_region,
                "by_comm": by_comm,
            }
        return out


# ---- the cases: each starts at `t0` and returns the time after it

def late_sender(run, t0):
    T = lambda us: t0 + us * US
    # Blocking: rank 0 receives 3 us before rank 1 sends.
    r = run.call(0, "MPI_Recv", T(1), T(9), ("mpi_recv", 1, 11, 64))
    s = run.call(1, "MPI_Send", T(4), T(5), ("mpi_send", 0, 11, 64))
    run.expect("late_sender", r, [s])
    # Non-blocking: rank 2's MPI_Wait waits 4 us for rank 3's MPI_Isend.
    q = run.request()
    run.call(2, "MPI_Irecv", T(1), T(2), ("mpi_irecv_request", q))
    w = run.call(2, "MPI_Wait", T(3), T(10), ("mpi_irecv", 3, 12, 8, q))
    q3 = run.request()
    s = run.call(3, "MPI_Isend", T(7), T(8), ("mpi_isend", 2, 12, 8, q3))
    run.call(3, "MPI_Wait", T(8) + 100, T(8) + 200, ("mpi_isend_complete", q3))
    run.expect("late_sender", w, [s])
    # The send entered after the receive left (the clock condition violated): bounded by the call.
    r = run.call(0, "MPI_Recv", T(11), T(13), ("mpi_recv", 1, 13, 8))
    s = run.call(1, "MPI_Send", T(16), T(17), ("mpi_send", 0, 13, 8))
    run.expect("late_sender", r, [s])
    # The send came first: no wait.
    run.call(2, "MPI_Send", T(12), T(13), ("mpi_send", 3, 14, 8))
    run.call(3, "MPI_Recv", T(14), T(15), ("mpi_recv", 2, 14, 8))
    # MPI_Waitall completing two receives waits for the later of the two senders (rank 3).
    qa, qb = run.request(), run.request()
    run.call(0, "MPI_Irecv", T(20), T(20) + 100, ("mpi_irecv_request", qa))
    run.call(0, "MPI_Irecv", T(20) + 200, T(20) + 300, ("mpi_irecv_request", qb))
    w = run.call(0, "MPI_Waitall", T(21), T(30), ("mpi_irecv", 2, 15, 8, qa), ("mpi_irecv", 3, 16, 8, qb))
    s2 = run.call(2, "MPI_Send", T(23), T(24), ("mpi_send", 0, 15, 8))
    s3 = run.call(3, "MPI_Send", T(26), T(27), ("mpi_send", 0, 16, 8))
    run.expect("late_sender", w, [s2, s3])
    return T(31)


def late_receiver(run, t0):
    T = lambda us: t0 + us * US
    # MPI_Ssend 4 us before the receive: counted whatever the send's length.
    s = run.call(0, "MPI_Ssend", T(1), T(7), ("mpi_send", 1, 21, 8))
    r = run.call(1, "MPI_Recv", T(5), T(6), ("mpi_recv", 0, 21, 8))
    run.expect("late_receiver", s, [r])
    # MPI_Send that blocks until the receive is posted (rendezvous): 5 us.
    s = run.call(2, "MPI_Send", T(1), T(8), ("mpi_send", 3, 22, 1 << 20))
    r = run.call(3, "MPI_Recv", T(6), T(9), ("mpi_recv", 2, 22, 1 << 20))
    run.expect("late_receiver", s, [r])
    # MPI_Send that returns before the receive is posted (buffered): no wait.
    run.call(2, "MPI_Send", T(10), T(11), ("mpi_send", 3, 23, 8))
    run.call(3, "MPI_Recv", T(13), T(14), ("mpi_recv", 2, 23, 8))
    # MPI_Bsend never waits for its receiver.
    run.call(0, "MPI_Bsend", T(10), T(15), ("mpi_send", 1, 24, 8))
    run.call(1, "MPI_Recv", T(12), T(16), ("mpi_recv", 0, 24, 8))
    # The receive is posted by MPI_Irecv 3 us after the MPI_Ssend, completed in MPI_Wait later.
    q = run.request()
    s = run.call(0, "MPI_Ssend", T(20), T(26), ("mpi_send", 1, 25, 8))
    r = run.call(1, "MPI_Irecv", T(23), T(24), ("mpi_irecv_request", q))
    run.call(1, "MPI_Wait", T(25), T(27), ("mpi_irecv", 0, 25, 8, q))
    run.expect("late_receiver", s, [r])
    return T(28)


def posting_order(run, t0):
    """Two MPI_Irecvs on one channel completed in the opposite order: MPI matches messages in
    posting order, so the second MPI_Wait (first posted receive) gets the first send, and the
    first MPI_Wait, which left before that was known, waits for the second send."""
    T = lambda us: t0 + us * US
    qa, qb = run.request(), run.request()
    run.call(0, "MPI_Irecv", T(1), T(1) + 500, ("mpi_irecv_request", qa))
    run.call(0, "MPI_Irecv", T(2), T(2) + 500, ("mpi_irecv_request", qb))
    wb = run.call(0, "MPI_Wait", T(3), T(25), ("mpi_irecv", 1, 31, 8, qb))
    wa = run.call(0, "MPI_Wait", T(26), T(27), ("mpi_irecv", 1, 31, 8, qa))
    s1 = run.call(1, "MPI_Send", T(10), T(11), ("mpi_send", 0, 31, 8))
    s2 = run.call(1, "MPI_Send", T(20), T(21), ("mpi_send", 0, 31, 8))
    run.expect("late_sender", wb, [s2])
    run.expect("late_sender", wa, [s1])
    # While the first MPI_Wait waited for the second send, the first send (entered earlier) was in
    # flight and is received later: wrong order.
    run.expect("late_sender_wrong_order", wb, [s2])
    return T(28)


def wrong_order(run, t0):
    """Late Sender, wrong order: rank 0 waits for rank 1's message while rank 2's, sent earlier,
    waits to be received after it; rank 3 likewise on another communicator. Controls: Late Sender
    waits in the right order, and one while a message sent earlier is in flight to another rank."""
    T = lambda us: t0 + us * US
    run.call(2, "MPI_Send", T(2), T(3), ("mpi_send", 0, 41, 8))
    r = run.call(0, "MPI_Recv", T(1), T(9), ("mpi_recv", 1, 42, 8))
    s = run.call(1, "MPI_Send", T(6), T(7), ("mpi_send", 0, 42, 8))
    run.call(0, "MPI_Recv", T(10), T(11), ("mpi_recv", 2, 41, 8))
    run.expect("late_sender", r, [s])
    run.expect("late_sender_wrong_order", r, [s])
    # Right order: rank 0 waits for rank 2, then for rank 1, which sends after rank 2; rank 1's
    # earlier message to rank 3 is in flight meanwhile, but not to rank 0.
    run.call(1, "MPI_Send", T(19), T(20), ("mpi_send", 3, 45, 8))
    r = run.call(0, "MPI_Recv", T(20), T(25), ("mpi_recv", 2, 43, 8))
    s = run.call(2, "MPI_Send", T(22), T(23), ("mpi_send", 0, 43, 8))
    run.expect("late_sender", r, [s])
    r = run.call(0, "MPI_Recv", T(26), T(30), ("mpi_recv", 1, 44, 8))
    s = run.call(1, "MPI_Send", T(28), T(29), ("mpi_send", 0, 44, 8))
    run.expect("late_sender", r, [s])
    run.call(3, "MPI_Recv", T(31), T(32), ("mpi_recv", 1, 45, 8))
    # Any communicator: world rank 3 waits on "sub" for world rank 0 while world rank 2's message
    # on MPI_COMM_WORLD, sent earlier, waits; an MPI_Irecv completed by MPI_Wait receives it.
    run.call(2, "MPI_Send", T(40), T(41), ("mpi_send", 3, 46, 8))
    r = run.call(3, "MPI_Recv", T(41), T(46), ("mpi_recv", 1, 47, 8), comm="sub")
    s = run.call(0, "MPI_Send", T(44), T(45), ("mpi_send", 2, 47, 8), comm="sub")
    q = run.request()
    run.call(3, "MPI_Irecv", T(46) + 500, T(47), ("mpi_irecv_request", q))
    run.call(3, "MPI_Wait", T(47) + 500, T(48), ("mpi_irecv", 2, 46, 8, q))
    run.expect("late_sender", r, [s])
    run.expect("late_sender_wrong_order", r, [s])
    return T(49)


def collective(run, t0, region, op, enters, leave, root=UNDEFINED_ROOT, received=8,
               comm="MPI_COMM_WORLD", ranks=range(RANKS)):
    """enters[r]: the enter of communicator rank r, world rank ranks[r]; calls by communicator
    rank."""
    calls = []
    for rank, enter in enumerate(enters):
        got = 0 if op in (CollectiveOp.REDUCE,) and rank != root else received
        calls.append(run.call(ranks[rank], region, t0 + enter, t0 + leave,
                              ("mpi_collective_begin",),
                              ("mpi_collective_end", op, root, 8, got), comm=comm))
    return calls


def wait_at_barrier(run, t0):
    c = collective(run, t0, "MPI_Barrier", CollectiveOp.BARRIER, [10 * US, 11 * US, 12 * US, 15 * US], 16 * US)
    for call in c:
        run.expect("wait_at_barrier", call, c)
    return t0 + 17 * US


def wait_at_nxn(run, t0):
    c = collective(run, t0, "MPI_Allreduce", CollectiveOp.ALLREDUCE, [20 * US, 22 * US, 21 * US, 23 * US + 7], 24 * US)
    for call in c:
        run.expect("wait_at_nxn", call, c)
    return t0 + 25 * US


def late_broadcast(run, t0):
    root = 2
    c = collective(run, t0, "MPI_Bcast", CollectiveOp.BCAST, [10 * US, 11 * US, 14 * US, 12 * US + 3], 16 * US, root)
    for rank, call in enumerate(c):
        if rank != root:
            run.expect("late_broadcast", call, [c[root]])
    return t0 + 17 * US


def early_reduce(run, t0):
    root = 1
    c = collective(run, t0, "MPI_Reduce", CollectiveOp.REDUCE, [13 * US, 10 * US, 12 * US + 5, 15 * US], 16 * US, root)
    first = min((call for rank, call in enumerate(c) if rank != root), key=lambda x: x.enter)
    # Early Reduce: the root waits until the first non-root entered.
    wait = min(first.enter - c[root].enter, c[root].leave - c[root].enter)
    if wait > 0:
        run.waits.append(("early_reduce", c[root], wait, first.rank))
    return t0 + 17 * US


def early_scan(run, t0):
    c = collective(run, t0, "MPI_Scan", CollectiveOp.SCAN, [10 * US, 14 * US, 12 * US, 13 * US + 1], 16 * US)
    for rank in range(1, RANKS):
        run.expect("early_scan", c[rank], c[:rank])
    return t0 + 17 * US


SUB = [2, 0, 3]  # "sub": communicator rank -> world rank


def sub_communicator(run, t0):
    """Patterns on a communicator of world ranks 2, 0, 3 (world rank 1 is not a member): roots
    and peers are communicator ranks, instances are numbered per communicator."""
    T = lambda us: t0 + us * US
    c = collective(run, t0, "MPI_Bcast", CollectiveOp.BCAST, [14 * US, 10 * US, 11 * US], 16 * US,
                   root=0, comm="sub", ranks=SUB)
    for call in c[1:]:
        run.expect("late_broadcast", call, [c[0]])
    c = collective(run, t0, "MPI_Reduce", CollectiveOp.REDUCE, [23 * US, 22 * US, 20 * US], 25 * US,
                   root=2, comm="sub", ranks=SUB)
    first = min(c[:2], key=lambda x: x.enter)  # the non-roots' first enter
    run.waits.append(("early_reduce", c[2], min(first.enter, c[2].leave) - c[2].enter, first.rank))
    # World rank 3 (sub rank 2) receives from sub rank 1 (world rank 0).
    r = run.call(3, "MPI_Recv", T(30), T(36), ("mpi_recv", 1, 5, 8), comm="sub")
    s = run.call(0, "MPI_Send", T(34), T(35), ("mpi_send", 2, 5, 8), comm="sub")
    run.expect("late_sender", r, [s])
    c = collective(run, t0, "MPI_Barrier", CollectiveOp.BARRIER, [40 * US, 41 * US, 45 * US], 46 * US,
                   comm="sub", ranks=SUB)
    for call in c:
        run.expect("wait_at_barrier", call, c)
    return T(47)


def non_blocking(run, t0):
    """Non-blocking collectives: each starts where its request's call (MPI_Iallreduce, ...) is
    entered; the call completing it (MPI_Wait, MPI_Waitall) waits from its enter to the start
    of the member it waits for."""
    T = lambda us: t0 + us * US

    def start(rank, region, at):
        """`at`: the request call's enter, in us from t0 (ns if an int above 1000)."""
        q = run.request()
        enter = t0 + at if at > 1000 else T(at)
        return q, run.call(rank, region, enter, enter + 200, ("non_blocking_collective_request", q))

    def complete(op, q, root=UNDEFINED_ROOT, received=8):
        return ("non_blocking_collective_complete", op, root, 8, received, q)

    # MPI_Iallreduce: rank 3 starts at 9 us, the others wait for it in MPI_Wait from 5 us; rank 3
    # completes after its start and waits for nobody. Rank 0 completes it in one MPI_Waitall with
    # an MPI_Ibarrier that rank 3 starts last, at 12.3 us: that waits longer, bounded by the call.
    ar = [start(r, "MPI_Iallreduce", at) for r, at in enumerate((1, 2, 3, 9))]
    br = [start(r, "MPI_Ibarrier", at) for r, at in enumerate((2, 3, 4, 12 * US + 300))]
    w0 = run.call(0, "MPI_Waitall", T(5), T(12), complete(CollectiveOp.ALLREDUCE, ar[0][0]),
                  complete(CollectiveOp.BARRIER, br[0][0]))
    waits_ar = [w0] + [run.call(r, "MPI_Wait", T(5) if r < 3 else T(10), T(12),
                                complete(CollectiveOp.ALLREDUCE, ar[r][0])) for r in range(1, RANKS)]
    for w in waits_ar:
        run.expect("wait_at_nxn", w, [c for _, c in ar])
    waits_br = [w0] + [run.call(r, "MPI_Wait", T(12) + 100 if r < 3 else T(13), T(14),
                                complete(CollectiveOp.BARRIER, br[r][0])) for r in range(1, RANKS)]
    for w in waits_br:
        run.expect("wait_at_barrier", w, [c for _, c in br])
    # MPI_Ibcast from rank 2, which starts at 18 us; ranks 0 and 3 wait for it from 16 us, rank 1
    # only completes from 19 us: no wait.
    bc = [start(r, "MPI_Ibcast", at) for r, at in enumerate((15, 15, 18, 15))]
    for r in range(RANKS):
        w = run.call(r, "MPI_Wait", T(19 if r in (1, 2) else 16), T(20),
                     complete(CollectiveOp.BCAST, bc[r][0], root=2))
        if r != 2:
            run.expect("late_broadcast", w, [bc[2][1]])
    # MPI_Ireduce to rank 0, which waits from 23 us for the first non-root start at 25 us.
    rd = [start(r, "MPI_Ireduce", at) for r, at in enumerate((22, 26, 25, 27))]
    for r in range(RANKS):
        w = run.call(r, "MPI_Wait", T(23 if r == 0 else 28), T(29),
                     complete(CollectiveOp.REDUCE, rd[r][0], root=0, received=8 if r == 0 else 0))
        if r == 0:
            run.waits.append(("early_reduce", w, min(T(25) - w.enter, w.leave - w.enter), 2))
    return T(30)


def no_waits(run, t0):
    """What waits for nothing: a non-blocking allreduce all members started before any waited, a
    0-byte bcast's non-roots, a send to a rank the communicator lacks."""
    for rank in range(RANKS):
        q = run.request()
        run.call(rank, "MPI_Iallreduce", t0 + rank * US, t0 + rank * US + 100,
                 ("non_blocking_collective_request", q))
        run.call(rank, "MPI_Wait", t0 + 5 * US, t0 + 9 * US,
                 ("non_blocking_collective_complete", CollectiveOp.ALLREDUCE, UNDEFINED_ROOT, 8, 8, q))
    collective(run, t0 + 10 * US, "MPI_Bcast", CollectiveOp.BCAST, [0, 1 * US, 2 * US, 3 * US], 5 * US,
               root=3, received=0)
    return t0 + 16 * US


def mixed(run, t0):
    """Every case above, one after another: each pattern's waits are the sum of its own."""
    for name in CASES:
        if name != "mixed":
            t0 = CASES[name](run, t0)
    return t0


CASES = {"late_sender": late_sender, "posting_order": posting_order, "late_receiver": late_receiver,
         "wait_at_barrier": wait_at_barrier, "wait_at_nxn": wait_at_nxn,
         "late_broadcast": late_broadcast, "early_reduce": early_reduce,
         "early_scan": early_scan, "sub_communicator": sub_communicator,
         "non_blocking": non_blocking, "no_waits": no_waits, "wrong_order": wrong_order,
         "mixed": mixed}


def write(out, run):
    with otf2.writer.open(out, timer_resolution=1000000000) as trace:
        d = trace.definitions
        node = d.system_tree_node("node0", parent=d.system_tree_node("machine"))
        locs = [d.location("master %d" % r, group=d.location_group("rank %d" % r, system_tree_parent=node))
                for r in range(RANKS)]
        # As htrace and Score-P define communicators: groups of world ranks, which index the
        # MPI COMM_LOCATIONS group.
        d.group("locations", members=locs, group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI)
        world = d.comm("MPI_COMM_WORLD", group=d.group("world", members=list(range(RANKS)),
                       group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI))
        comms = {"MPI_COMM_WORLD": world,
                 "sub": d.comm("sub", parent=world, group=d.group("sub", members=SUB,
                               group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI))}
        main = d.region("main")
        regions = {n: d.region(n, paradigm=Paradigm.MPI, region_role=RegionRole.BARRIER
                               if n == "MPI_Barrier" else RegionRole.FUNCTION) for n in REGIONS}
        end = max(c.leave for calls in run.calls for c in calls) + US
        for rank, calls in enumerate(run.calls):
            w = trace.event_writer_from_location(locs[rank])
            w.enter(0, main)
            for c in sorted(calls, key=lambda c: c.enter):
                w.enter(c.enter, regions[c.region])
                for i, (method, *args) in enumerate(c.records):
                    t = c.leave - 10 * (len(c.records) - i)  # inside the call, in order
                    if method in ("mpi_send", "mpi_recv", "mpi_isend", "mpi_irecv", "mpi_collective_end",
                                  "non_blocking_collective_complete"):
                        args = [args[0], comms[c.comm]] + list(args[1:])
                    getattr(w, method)(t, *args)
                w.leave(c.leave, regions[c.region])
            w.leave(end, main)


if __name__ == "__main__":
    out, names = sys.argv[1], sys.argv[2:]
    run, t0 = Run(), 100 * US
    for name in names:
        t0 = CASES[name](run, t0) + 10 * US
    write(out, run)
    with open(out + ".expected.json", "w") as f:
        json.dump(run.expected(), f, indent=1)
