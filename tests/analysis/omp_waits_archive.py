#!/usr/bin/python3
"""Writes an OTF2 archive of 2 processes of 3 OpenMP threads each with known OpenMP wait states,
and the waits it holds as JSON, computed here from the archive's own timestamps with Scalasca's
definitions (no htrace code).
Usage: omp_waits_archive.py OUT_DIR CASE   (cases: omp_barrier, omp_lock, omp_mixed)
The expected waits go to OUT_DIR.expected.json as waits_archive.py writes them: per pattern the
total, the waits, the longest, and the splits by waiting thread, by the thread waited for, by
region and by communicator (the thread team), all in ns. Locations are numbered process by
process, thread by thread."""
import json
import sys

import otf2
from otf2.enums import GroupType, Paradigm, RegionRole

US = 1000
PROCESSES, THREADS = 2, 3
PATTERNS = ("omp_explicit_barrier", "omp_implicit_barrier", "omp_critical_contention",
            "omp_lock_contention", "omp_idle_threads")
# name -> role of the OpenMP regions, named as libhtrace names them
REGIONS = {"!$omp parallel": RegionRole.PARALLEL, "!$omp barrier": RegionRole.BARRIER,
           "!$omp implicit barrier": RegionRole.IMPLICIT_BARRIER, "!$omp critical": RegionRole.CRITICAL,
           "omp_set_lock": RegionRole.FUNCTION, "!$omp task": RegionRole.TASK,
           "!$omp for": RegionRole.LOOP}


def loc(process, thread):
    return process * THREADS + thread


class Run:
    def __init__(self):
        # per location: [(time, kind, args)] in record order; kinds are the writer's methods
        self.events = [[] for _ in range(PROCESSES * THREADS)]
        self.waits = []  # (pattern, waiting location, ns, location waited for, region, comm)
        self.forks = []  # (process, fork, join) of each parallel region

    def ev(self, location, t, kind, *args):
        self.events[location].append((t, kind, args))

    def parallel(self, p, begin, end, body):
        """One parallel region of process p's team from `begin` to `end`; body(thread) adds each
        thread's events inside it."""
        self.forks.append((p, begin, end))
        self.ev(loc(p, 0), begin, "thread_fork", THREADS)
        for th in range(THREADS):
            self.ev(loc(p, th), begin + 10, "thread_team_begin", p)
            self.ev(loc(p, th), begin + 20, "enter", "!$omp parallel")
            body(th)
            self.ev(loc(p, th), end - 20, "leave", "!$omp parallel")
            self.ev(loc(p, th), end - 10, "thread_team_end", p)
        self.ev(loc(p, 0), end, "thread_join")

    def barrier(self, p, region, enters, leaves, nested=None):
        """Every thread of process p enters `region` at enters[th] and leaves at leaves[th];
        nested: (thread, enter, leave) of a task run inside the barrier. Scalasca: each waits
        until the last one entered, bounded by its own time in the barrier."""
        last = max(range(THREADS), key=lambda th: (enters[th], -th))
        pattern = "omp_explicit_barrier" if region == "!$omp barrier" else "omp_implicit_barrier"
        for th in range(THREADS):
            self.ev(loc(p, th), enters[th], "enter", region)
            if nested and nested[0] == th:
                self.ev(loc(p, th), nested[1], "enter", "!$omp task")
                self.ev(loc(p, th), nested[2], "leave", "!$omp task")
            self.ev(loc(p, th), leaves[th], "leave", region)
            wait = min(enters[last], leaves[th]) - enters[th]
            if wait > 0:
                self.waits.append((pattern, loc(p, th), wait, loc(p, last), region, "team %d" % p))

    def acquire(self, p, th, region, lock, order, enter, acquired, leave, held_by=None, left_first=False):
        """Thread th of process p enters `region` at `enter`, gets the lock (its order-th
        acquisition) at `acquired` and leaves the region at `leave` (a critical region is left
        after the release: pass leave None and call release). held_by: (thread, release time)
        of the previous holder; the wait runs from the enter to that release, bounded by the
        acquisition. left_first: the region is left at the acquisition, just before its record,
        as libhtrace writes omp_set_lock (Score-P records the acquisition inside)."""
        self.ev(loc(p, th), enter, "enter", region)
        if left_first:
            self.ev(loc(p, th), acquired, "leave", region)
        self.ev(loc(p, th), acquired, "thread_acquire_lock", lock, order)
        if leave is not None and not left_first:
            self.ev(loc(p, th), leave, "leave", region)
        if held_by:
            wait = min(held_by[1], acquired) - enter
            if wait > 0:
                pattern = "omp_critical_contention" if region == "!$omp critical" else "omp_lock_contention"
                self.waits.append((pattern, loc(p, th), wait, loc(p, held_by[0]), region, "team %d" % p))

    def release(self, p, th, lock, order, t, leave_region=None):
        self.ev(loc(p, th), t, "thread_release_lock", lock, order)
        if leave_region:
            self.ev(loc(p, th), t + 50, "leave", leave_region)

    def end(self):
        """Where each master leaves main (entered at 0)."""
        return max(t for evs in self.events for t, _, _ in evs) + US

    def idle_threads(self):
        """Scalasca's Idle Threads: each worker thread is idle while its master runs serial code,
        here main from 0 to end() outside its parallel regions (fork to join)."""
        for p in range(PROCESSES):
            serial = self.end() - sum(join - fork for q, fork, join in self.forks if q == p)
            for th in range(1, THREADS):
                self.waits.append(("omp_idle_threads", loc(p, th), serial, loc(p, 0), "main", "(no team)"))

    def expected(self):
        self.idle_threads()
        out = {}
        n = PROCESSES * THREADS
        for pat in PATTERNS:
            mine = [w for w in self.waits if w[0] == pat]
            by_region, by_comm = {}, {}
            for _, _, ns, _, region, comm in mine:
                by_region[region] = by_region.get(region, 0) + ns
                by_comm[comm] = by_comm.get(comm, 0) + ns
            out[pat] = {"total_ns": sum(w[2] for w in mine), "calls": len(mine),
                        "longest_ns": max([w[2] for w in mine], default=0),
                        "by_location": [sum(w[2] for w in mine if w[1] == l) for l in range(n)],
                        "caused_by": [sum(w[2] for w in mine if w[3] == l) for l in range(n)],
                        "by_region": by_region, "by_comm": by_comm}
        return out


def omp_barrier(run, t0):
    T = lambda us: t0 + us * US
    # Process 0, first parallel region: an explicit barrier the threads enter at 10, 12 and
    # 15 us (waits 5 and 3 us for thread 2), thread 1 running a task inside it; then the
    # region's implicit barrier, entered at 20, 24.25 and 21 us, thread 0 leaving it (a
    # violated clock condition) at 22 us: its 2 us wait is bounded by its time in the barrier.
    def region0(th):
        run.barrier(0, "!$omp barrier", [T(10), T(12), T(15)], [T(16)] * 3, nested=(1, T(13), T(14)))
        run.barrier(0, "!$omp implicit barrier", [T(20), T(24) + 250, T(21)], [T(22), T(25), T(25)])
    # Collect per thread in record order: run.barrier adds all threads at once, so call it once.
    run.parallel(0, T(1), T(30), lambda th: region0(th) if th == 0 else None)
    # A second parallel region of the same team: its barrier is the first of a new instance.
    run.parallel(0, T(31), T(50), lambda th: run.barrier(
        0, "!$omp barrier", [T(40) + 7, T(33), T(35)], [T(41)] * 3) if th == 0 else None)
    # Process 1 at the same time, the same team numbering: its own instances.
    run.parallel(1, T(1), T(30), lambda th: run.barrier(
        1, "!$omp implicit barrier", [T(5), T(9), T(7)], [T(10)] * 3) if th == 0 else None)
    return T(51)


def omp_lock(run, t0):
    T = lambda us: t0 + us * US

    def region0(th):
        if th != 0:
            return
        # Lock 1 by omp_set_lock: thread 0 gets it at once and releases it at 14 us; thread 1
        # waits from 11 us (3 us), thread 2 from 12 us until thread 1's release at 16.5 us.
        run.acquire(0, 0, "omp_set_lock", 1, 1, T(10), T(10) + 100, T(10) + 200)
        run.release(0, 0, 1, 1, T(14))
        run.acquire(0, 1, "omp_set_lock", 1, 2, T(11), T(14) + 200, T(14) + 300, held_by=(0, T(14)))
        run.release(0, 1, 1, 2, T(16) + 500)
        run.acquire(0, 2, "omp_set_lock", 1, 3, T(12), T(17), T(17) + 100, held_by=(1, T(16) + 500))
        run.release(0, 2, 1, 3, T(18))
        # A critical section (lock 2): thread 2 waits 2 us for thread 0; thread 1 comes after
        # the release and waits for nothing.
        run.acquire(0, 0, "!$omp critical", 2, 1, T(20), T(20) + 100, None)
        run.release(0, 0, 2, 1, T(23), "!$omp critical")
        run.acquire(0, 2, "!$omp critical", 2, 2, T(21), T(23) + 200, None, held_by=(0, T(23)))
        run.release(0, 2, 2, 2, T(25), "!$omp critical")
        run.acquire(0, 1, "!$omp critical", 2, 3, T(26), T(26) + 100, None, held_by=(2, T(25)))
        run.release(0, 1, 2, 3, T(27), "!$omp critical")
        # Lock 1 again: thread 0 gets it long after thread 2's release and holds it until
        # 33 us, after thread 1's acquisition at 32 us (a violated clock condition): thread 1's
        # wait from 31 us is bounded by its acquisition, 1 us.
        run.acquire(0, 0, "omp_set_lock", 1, 4, T(30), T(30) + 100, T(30) + 200, held_by=(2, T(18)))
        run.release(0, 0, 1, 4, T(33))
        run.acquire(0, 1, "omp_set_lock", 1, 5, T(31), T(32), T(32) + 100, held_by=(0, T(33)))
        run.release(0, 1, 1, 5, T(34))

    def region1(th):
        if th != 0:
            return
        # Process 1's lock 1 is another lock with its own orders: thread 2 waits 4 us. Here
        # omp_set_lock is left just before the acquisition is recorded, as libhtrace writes it.
        run.acquire(1, 1, "omp_set_lock", 1, 1, T(10), T(10) + 100, None, left_first=True)
        run.release(1, 1, 1, 1, T(15))
        run.acquire(1, 2, "omp_set_lock", 1, 2, T(11), T(15) + 300, None, held_by=(1, T(15)), left_first=True)
        run.release(1, 2, 1, 2, T(16))

    run.parallel(0, T(1), T(40), region0)
    run.parallel(1, T(1), T(40), region1)
    return T(41)


def omp_mixed(run, t0):
    return omp_lock(run, omp_barrier(run, t0) + 10 * US)


CASES = {"omp_barrier": omp_barrier, "omp_lock": omp_lock, "omp_mixed": omp_mixed}


def write(out, run):
    with otf2.writer.open(out, timer_resolution=1000000000) as trace:
        d = trace.definitions
        node = d.system_tree_node("node0", parent=d.system_tree_node("machine"))
        locs = []
        for p in range(PROCESSES):
            group = d.location_group("rank %d" % p, system_tree_parent=node)
            locs += [d.location(("master thread" if th == 0 else "thread %d" % th), group=group)
                     for th in range(THREADS)]
        masters = [locs[loc(p, 0)] for p in range(PROCESSES)]
        d.group("mpi locations", members=masters, group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI)
        d.comm("MPI_COMM_WORLD", group=d.group("world", members=list(range(PROCESSES)),
                                               group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI))
        d.group("omp locations", members=locs, group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.OPENMP)
        teams = [d.comm("team %d" % p, group=d.group("team %d" % p, members=[loc(p, th) for th in range(THREADS)],
                                                      group_type=GroupType.COMM_GROUP, paradigm=Paradigm.OPENMP))
                 for p in range(PROCESSES)]
        main = d.region("main")
        regions = {n: d.region(n, paradigm=Paradigm.OPENMP, region_role=role) for n, role in REGIONS.items()}
        end = run.end()
        for l, evs in enumerate(run.events):
            w = trace.event_writer_from_location(locs[l])
            master = l % THREADS == 0
            if master:
                w.enter(0, main)
            for t, kind, args in sorted(evs, key=lambda e: e[0]):
                if kind in ("enter", "leave"):
                    getattr(w, kind)(t, regions[args[0]])
                elif kind in ("thread_team_begin", "thread_team_end"):
                    getattr(w, kind)(t, teams[args[0]])
                elif kind == "thread_fork":
                    w.thread_fork(t, Paradigm.OPENMP, args[0])
                elif kind == "thread_join":
                    w.thread_join(t, Paradigm.OPENMP)
                else:
                    getattr(w, kind)(t, Paradigm.OPENMP, *args)
            if master:
                w.leave(end, main)


if __name__ == "__main__":
    out, name = sys.argv[1], sys.argv[2]
    run = Run()
    CASES[name](run, 100 * US)
    write(out, run)
    with open(out + ".expected.json", "w") as f:
        json.dump(run.expected(), f, indent=1)
