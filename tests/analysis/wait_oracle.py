"""The wait states of an OTF2 archive computed with the otf2 Python reader and the test library's
matcher (htrace_test.messages), sharing no code with htrace: what htrace-report --format json must
give on a real trace. Scalasca's definitions (analysis/README.md): a wait runs from the waiting MPI
call's enter to the enter of the call it waits for, bounded by the waiting call; per pattern each
call waits at most once, for its latest partner. Late Sender, wrong order: a Late Sender wait whose
receiving process receives, later than this message (a later receive record), another message
whose send was entered before this one's (from any sender, on any communicator). Non-blocking collectives as htrace extends them:
the call completing one waits for the partner's request call. OpenMP (omp_waits): a thread in a
barrier waits until the last thread of its team entered that barrier instance, bounded by its own
time in the barrier; a thread acquiring a lock (in omp_set_lock, omp_set_nest_lock or a critical
construct) waits from that region's enter until the previous holder released it, bounded by the
acquisition. Times are in ns, as htrace-report gives them."""
import collections
import functools
import os

import otf2
from otf2.enums import CollectiveOp, Paradigm, RegionRole

from htrace_test.archive import Topology, events_in_ns
from htrace_test.messages import CollectiveLog, MessageLog

ALL_TO_ALL = {CollectiveOp.ALLGATHER, CollectiveOp.ALLGATHERV, CollectiveOp.ALLTOALL,
              CollectiveOp.ALLTOALLV, CollectiveOp.ALLTOALLW, CollectiveOp.ALLREDUCE,
              CollectiveOp.REDUCE_SCATTER, CollectiveOp.REDUCE_SCATTER_BLOCK}
ONE_TO_ALL = {CollectiveOp.BCAST, CollectiveOp.SCATTER, CollectiveOp.SCATTERV}
ALL_TO_ONE = {CollectiveOp.REDUCE, CollectiveOp.GATHER, CollectiveOp.GATHERV}
PREFIX = {CollectiveOp.SCAN, CollectiveOp.EXSCAN}
SYNCHRONOUS_SENDS = {"mpi_ssend"}
STANDARD_SENDS = {"mpi_send", "mpi_sendrecv", "mpi_sendrecv_replace"}


class Call:
    def __init__(self, location, region, enter):
        self.location, self.region, self.enter, self.leave = location, region, enter, None
        # pattern -> [(partner's enter, location waited for, comm, only if blocked)]: the
        # proposals with the latest partner's enter
        self.partners = {}

    def propose(self, pattern, partner_enter, cause, comm, only_if_blocked=False):
        best = self.partners.get(pattern)
        if best is None or partner_enter > best[0][0]:
            self.partners[pattern] = [(partner_enter, cause, comm, only_if_blocked)]
        elif partner_enter == best[0][0]:
            best.append((partner_enter, cause, comm, only_if_blocked))

    def waits_for(self, index):
        """{pattern: (partner's enter, cause, comm, only if blocked)}: of partners entering at
        once, the lowest location in `index` (ref -> place), then the lowest comm."""
        return {pattern: min(tied, key=lambda p: (index[p[1]], p[2]))
                for pattern, tied in self.partners.items()}


# Each archive is read once for all the checks of a case (the readers are slow, the results
# read-only).
@functools.lru_cache(maxsize=1)
def read(archive):
    """[Call] with their partners, the location keys (group name, name) by ref, comm names."""
    calls = []
    with otf2.reader.open(os.path.join(archive, "traces.otf2")) as trace:
        defs = trace.definitions
        topology = Topology(defs)
        messages, collectives = MessageLog(topology), CollectiveLog(topology)
        stacks = collections.defaultdict(list)  # location ref -> [Call, or None outside MPI]
        posted_by = {}  # (location ref, request) -> the call that posted an Irecv
        for seq, (location, event) in enumerate(events_in_ns(trace)):
            kind, ref = type(event).__name__, location._ref
            if kind == "Enter":
                call = Call(location, event.region.name, event.time) \
                    if event.region.paradigm == Paradigm.MPI else None
                stacks[ref].append(call)
                if call:
                    calls.append(call)
                continue
            if kind == "Leave":
                if stacks[ref]:
                    call = stacks[ref].pop()
                    if call:
                        call.leave = event.time
                continue
            inside = next((c for c in reversed(stacks[ref]) if c), None)
            extra = {"call": inside, "record": kind, "seq": seq}
            if kind == "NonBlockingCollectiveComplete":
                extra["done"] = inside  # "call" stays its request's: where it started
            if kind == "MpiIrecvRequest":
                posted_by[(ref, event.request_id)] = inside
            elif kind == "MpiIrecv":
                extra["posted"] = posted_by.pop((ref, event.request_id), inside)
            elif kind == "MpiRecv":
                extra["posted"] = inside
            messages.add(location, event, **extra)
            collectives.add(location, event, **extra)
        locations = {l._ref: (l.group.name, l.name) for l in defs.locations}
        comm_names = {c._ref: c.name for c in defs.comms}

        pairs, unmatched_sends, _ = messages.match()
        # Per receiving rank: (send's enter, receive record's place in the reader's order) of each
        # message sent from inside a call; a message never received is received last.
        to = collections.defaultdict(list)
        for send, recv in pairs + [(s, None) for s in unmatched_sends if not s.get("cancelled")]:
            if send["call"]:
                to[send["receiver"]].append((send["call"].enter, recv["seq"] if recv else float("inf")))
        for send, recv in pairs:
            sc, rc, comm = send["call"], recv["call"], send["comm"]
            if sc and rc:
                rc.propose("late_sender", sc.enter, send["location"]._ref, comm)
                if any(enter < sc.enter and seq > recv["seq"] for enter, seq in to[send["receiver"]]):
                    rc.propose("late_sender_wrong_order", sc.enter, send["location"]._ref, comm)
            region = sc.region.lower() if sc else ""
            if sc and recv["posted"] and send["record"] == "MpiSend" and \
                    region in SYNCHRONOUS_SENDS | STANDARD_SENDS:
                sc.propose("late_receiver", recv["posted"].enter, recv["location"]._ref, comm,
                           region in STANDARD_SENDS)
        for (comm, _), by_rank in collectives.instances().items():
            ranks = topology.members[comm][0]
            if len(ranks) < 2 or len(by_rank) < len(ranks):
                continue
            members = [by_rank[w] for w in ranks]  # by communicator rank
            # A member starts where its call, or its request's call, was entered, and waits in the
            # call that completes it.
            if not all(m["call"] for m in members):
                continue
            # Neighbourhood collectives wait for nothing (not all members exchange data).
            if any(m["call"].region.lower().startswith(("mpi_neighbor", "mpi_ineighbor")) for m in members):
                continue
            op, root = members[0]["op"], members[0]["root"]
            enter = [m["call"].enter for m in members]
            waiting = [m["call"] if m["blocking"] else m.get("done") for m in members]
            waits = [op == CollectiveOp.BARRIER or m["received"] > 0 for m in members]

            def propose(rank, pattern, partner):
                if waits[rank] and waiting[rank]:
                    waiting[rank].propose(pattern, enter[partner], members[partner]["location"]._ref, comm)
            if op == CollectiveOp.BARRIER or op in ALL_TO_ALL:
                last = max(range(len(members)), key=lambda r: enter[r])
                for r in range(len(members)):
                    propose(r, "wait_at_barrier" if op == CollectiveOp.BARRIER else "wait_at_nxn", last)
            elif op in ONE_TO_ALL and root < len(members):
                for r in range(len(members)):
                    if r != root:
                        propose(r, "late_broadcast", root)
            elif op in ALL_TO_ONE and root < len(members):
                first = min((r for r in range(len(members)) if r != root), key=lambda r: enter[r])
                propose(root, "early_reduce", first)
            elif op in PREFIX:
                for r in range(1, len(members)):
                    propose(r, "early_scan", max(range(r), key=lambda q: enter[q]))
    return calls, locations, comm_names


NO_TEAM = "(no team)"  # how htrace-report names the team of a lock taken outside one
NO_REGION = "(outside any region)"
SPAN_RECORDS = {"Enter", "Leave", "ThreadFork", "ThreadJoin", "ThreadTeamBegin", "ThreadTeamEnd",
                "ThreadAcquireLock", "ThreadReleaseLock"}


@functools.lru_cache(maxsize=1)
def omp_waits(archive):
    """[(pattern, waiting location ref, location ref waited for, region name, team name, ns,
    the waiting construct's enter, None for Idle Threads)].
    Barrier instances: a thread's n-th barrier (outermost barrier region) in its k-th team of a
    communicator; lock hand-overs: release n -> acquisition n + 1 of a lock in one process.
    Idle Threads: a process's master is the first location that forks outside any parallel
    region; its serial time is its span (first to last event) minus its outermost fork-to-join
    intervals, each other location of its process that was in a team idles that long."""
    barriers = collections.defaultdict(list)  # key -> [[loc ref, region, enter, leave]]
    acquired, released = {}, {}  # key -> (loc ref, region, team name, enter, acquired) / (loc ref, time)
    with otf2.reader.open(os.path.join(archive, "traces.otf2")) as trace:
        teams = collections.defaultdict(list)  # loc ref -> [[comm, instance, barriers passed]]
        instances = collections.Counter()
        stacks = collections.defaultdict(list)  # loc ref -> [(region, enter)]
        depth = collections.Counter()  # loc ref -> regions open inside its current barrier
        current = {}  # loc ref -> the member entry of its open barrier
        left = {}  # loc ref -> (region, enter) it left last, if it entered nothing since
        span = {}  # loc ref -> [first, last event]
        forks = collections.defaultdict(list)  # loc ref -> [[fork, join]] outside parallel regions
        open_forks = collections.Counter()
        serial_region = collections.defaultdict(collections.Counter)  # loc ref -> region -> ns
        previous = {}
        team_members, process_of = set(), {}
        for location, event in events_in_ns(trace):
            kind, ref, process = type(event).__name__, location._ref, location.group._ref
            process_of[ref] = process
            if kind in SPAN_RECORDS:  # every other record lies inside a region
                span.setdefault(ref, [event.time, event.time])[1] = event.time
                if ref in previous and not open_forks[ref] and not teams[ref]:
                    region = stacks[ref][-1][0].name if stacks[ref] else NO_REGION
                    serial_region[ref][region] += event.time - previous[ref]
                previous[ref] = event.time
            if kind == "ThreadFork":
                if not open_forks[ref] and not teams[ref]:
                    forks[ref].append([event.time, None])
                open_forks[ref] += 1
            elif kind == "ThreadJoin":
                open_forks[ref] -= 1
                if not open_forks[ref] and forks[ref] and forks[ref][-1][1] is None:
                    forks[ref][-1][1] = event.time
            if kind == "ThreadTeamBegin":
                team_members.add(ref)
                comm = event.thread_team
                teams[ref].append([comm, instances[(ref, comm._ref)], 0])
                instances[(ref, comm._ref)] += 1
            elif kind == "ThreadTeamEnd":
                for i in reversed(range(len(teams[ref]))):
                    if teams[ref][i][0]._ref == event.thread_team._ref:
                        del teams[ref][i]
                        break
            elif kind == "Enter":
                stacks[ref].append((event.region, event.time))
                left.pop(ref, None)
                if depth[ref]:
                    depth[ref] += 1
                elif event.region.paradigm != Paradigm.MPI and teams[ref] and \
                        event.region.region_role in (RegionRole.BARRIER, RegionRole.IMPLICIT_BARRIER):
                    comm, instance, passed = teams[ref][-1]
                    depth[ref] = 1
                    current[ref] = [ref, event.region, event.time, None]
                    barriers[(process, comm._ref, instance, passed)].append(current[ref])
                    current[ref].append(comm.name)
            elif kind == "Leave":
                if stacks[ref]:
                    left[ref] = stacks[ref].pop()
                if depth[ref]:
                    depth[ref] -= 1
                    if not depth[ref] and teams[ref]:
                        current.pop(ref)[3] = event.time
                        teams[ref][-1][2] += 1
            elif kind == "ThreadAcquireLock":
                # The region waited in: open around the acquisition, or just left (libhtrace
                # leaves omp_set_lock before it records the acquisition).
                def blocking(region):
                    return region.paradigm == Paradigm.OPENMP and (
                        region.region_role == RegionRole.CRITICAL or
                        region.name.lower().startswith(("omp_set_lock", "omp_set_nest_lock")))
                found = [f for f in (stacks[ref][-1] if stacks[ref] else None, left.get(ref)) if f and blocking(f[0])]
                if found:
                    region, enter = found[0]
                    team = teams[ref][-1][0].name if teams[ref] else NO_TEAM
                    acquired[(process, event.model, event.lock_id, event.acquisition_order)] = (
                        ref, region, team, enter, event.time)
            elif kind == "ThreadReleaseLock":
                released[(process, event.model, event.lock_id, event.acquisition_order + 1)] = (ref, event.time)
    out = []
    masters = {}
    for ref in forks:  # dicts keep the order locations first forked in
        masters.setdefault(process_of[ref], ref)
    for ref in team_members:
        master = masters.get(process_of[ref])
        if master is None or master == ref:
            continue
        first, last = span[master]
        serial = last - first - sum((join if join is not None else last) - fork for fork, join in forks[master])
        if serial <= 0:
            continue
        assert serial == sum(serial_region[master].values())
        share = list(serial_region[master].items())
        out.append(("omp_idle_threads", ref, master, share, NO_TEAM, serial, None))
    for members in barriers.values():
        if len(members) < 2:
            continue
        last = max(members, key=lambda m: (m[2], -m[0]))
        for ref, region, enter, leave, team in members:
            if leave is None:
                continue
            wait = min(last[2], leave) - enter
            pattern = "omp_implicit_barrier" if region.region_role == RegionRole.IMPLICIT_BARRIER \
                else "omp_explicit_barrier"
            if wait > 0:
                out.append((pattern, ref, last[0], region.name, team, wait, enter))
    for key, (ref, region, team, enter, at) in acquired.items():
        if key not in released:
            continue
        holder, release = released[key]
        wait = min(release, at) - enter
        pattern = "omp_critical_contention" if region.region_role == RegionRole.CRITICAL else "omp_lock_contention"
        if wait > 0:
            out.append((pattern, ref, holder, region.name, team, wait, enter))
    return out


def wait_states(archive, location_keys):
    """{pattern: {total_ns, calls, longest_ns, by_location, caused_by, by_region, by_comm}} with
    locations indexed as in `location_keys` ([(process name, location name)])."""
    calls, locations, comm_names = read(archive)
    index = {ref: location_keys.index(key) for ref, key in locations.items()}
    out = collections.defaultdict(lambda: {
        "total_ns": 0, "calls": 0, "longest_ns": 0, "by_location": [0] * len(location_keys),
        "caused_by": [0] * len(location_keys), "by_region": collections.Counter(),
        "by_comm": collections.Counter()})
    for call in calls:
        if call.leave is None:
            continue
        for pattern, (partner, cause, comm, only_if_blocked) in call.waits_for(index).items():
            wait = min(partner - call.enter, call.leave - call.enter)
            if wait <= 0 or (only_if_blocked and call.leave <= partner):
                continue
            p = out[pattern]
            p["total_ns"] += wait
            p["calls"] += 1
            p["longest_ns"] = max(p["longest_ns"], wait)
            p["by_location"][index[call.location._ref]] += wait
            p["caused_by"][index[cause]] += wait
            p["by_region"][call.region] += wait
            p["by_comm"][comm_names[comm]] += wait
    for pattern, ref, cause, region, team, wait, _ in omp_waits(archive):
        p = out[pattern]
        p["total_ns"] += wait
        p["calls"] += 1
        p["longest_ns"] = max(p["longest_ns"], wait)
        p["by_location"][index[ref]] += wait
        p["caused_by"][index[cause]] += wait
        for name, ns in region if isinstance(region, list) else [(region, wait)]:
            p["by_region"][name] += ns
        p["by_comm"][team] += wait
    return out


def call_waits(archive, location_keys):
    """Each wait of one MPI call or OpenMP construct (Idle Threads excepted): [(pattern, waiting
    location's index in `location_keys`, region name, enter, ns, index of the location waited
    for)]."""
    calls, locations, _ = read(archive)
    index = {ref: location_keys.index(key) for ref, key in locations.items()}
    out = []
    for call in calls:
        if call.leave is None:
            continue
        for pattern, (partner, cause, _, only_if_blocked) in call.waits_for(index).items():
            wait = min(partner - call.enter, call.leave - call.enter)
            if wait > 0 and not (only_if_blocked and call.leave <= partner):
                out.append((pattern, index[call.location._ref], call.region, call.enter, wait, index[cause]))
    for pattern, ref, cause, region, _, wait, enter in omp_waits(archive):
        if enter is not None:
            out.append((pattern, index[ref], region, enter, wait, index[cause]))
    return out
