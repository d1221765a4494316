#!/usr/bin/python3
"""Independent checker for htrace-correct (shares no code with it): reads an OTF2 archive with the
python otf2 module, matches logical messages (htrace_test.messages) and counts clock-condition
violations.
Usage: check_archive.py ARCHIVE_ANCHOR [--lmin-mpi NS] [--lmin-omp NS] [--expect-zero] [--order-of INPUT]
       [--json]  (prints {"p2p": n, "collective": n, "OpenMP": n, "order": n, "events": n, "times": {...}})"""
import argparse
import collections
import json
import sys

import otf2
from otf2.enums import CollectiveOp, RegionRole, Paradigm

from htrace_test.archive import Topology
from htrace_test.messages import CollectiveLog, MessageLog

ap = argparse.ArgumentParser()
ap.add_argument("anchor")
ap.add_argument("--lmin-mpi", type=int, default=1000)
ap.add_argument("--lmin-omp", type=int, default=10)
ap.add_argument("--expect-zero", action="store_true")
# A corrected archive against its input: events of a location keep their order, those apart in the
# input stay apart, equal ones may stay equal (only a relation pulls them apart).
ap.add_argument("--order-of", metavar="INPUT_ANCHOR")
ap.add_argument("--json", action="store_true")
ap.add_argument("--dump-times", action="store_true")
a = ap.parse_args()


def is_neighborhood(region_name):
    """Neighborhood collectives relate topology neighbours only; the trace has no topology, so
    they carry no collective relation (OTF2 records them with the ALLGATHER/ALLTOALL ops)."""
    return region_name.startswith(("MPI_Neighbor_", "MPI_Ineighbor_"))


per_loc = collections.defaultdict(list)
with otf2.reader.open(a.anchor) as trace:
    topology = Topology(trace.definitions)
    messages, collectives = MessageLog(topology), CollectiveLog(topology)
    last_region = {}  # location -> name of its latest Enter (the MPI function of a collective)
    for loc, ev in trace.events:
        per_loc[loc].append(ev)
        if type(ev).__name__ == "Enter":
            last_region[loc] = ev.region.name
        messages.add(loc, ev)
        collectives.add(loc, ev, neighborhood=is_neighborhood(last_region.get(loc, "")))
input_times = {}
if a.order_of:
    with otf2.reader.open(a.order_of) as trace:
        for loc, ev in trace.events:
            input_times.setdefault((loc.group.name, loc.name), []).append(ev.time)


def proc(loc):
    return loc.group

viol = collections.Counter()
order = 0
omp = collections.defaultdict(lambda: {"src": [], "dst": []})
task_parent, task_done, taskwait_exit = {}, [], {}
# Taskgroups: a task belongs to the group open in its creator when created, else to its creator's.
created_in, task_creator, group_done = {}, {}, []

for loc, evs in per_loc.items():
    prev = None
    inp = input_times.get((loc.group.name, loc.name))
    for i, ev in enumerate(evs):
        apart = inp is not None and i > 0 and inp[i] > inp[i - 1]
        if prev is not None and (ev.time < prev or (apart and ev.time <= prev)):
            order += 1
        prev = ev.time
    team_count = collections.Counter()
    teams = []  # [comm, inst, master, ended, barriers]
    forks = []
    in_bar = None
    current = None
    waits = collections.Counter()
    depth = 0
    open_groups = []  # [(group key, depth at its Enter)]
    open_waits = []  # [(task, depth at its Enter)]
    groups_entered = collections.Counter()
    for i, ev in enumerate(evs):
        n_is_tg = False
        if type(ev).__name__ in ("Enter", "Leave"):
            n_is_tg = ev.region.region_role == RegionRole.TASK_WAIT and "taskgroup" in ev.region.name
        n_is_tw = type(ev).__name__ in ("Enter", "Leave") and not n_is_tg and \
            ev.region.region_role == RegionRole.TASK_WAIT and ev.region.paradigm != Paradigm.MPI
        if type(ev).__name__ == "Enter":
            depth += 1
            if n_is_tg:
                open_groups.append(((proc(loc), str(current), groups_entered[current]), depth))
                groups_entered[current] += 1
            elif n_is_tw:  # also inside barriers and inside other tasks' waits
                open_waits.append((current, depth))
        elif type(ev).__name__ == "Leave":
            if open_groups and open_groups[-1][1] == depth:
                omp[("taskgroup",) + open_groups.pop()[0]]["dst"].append((loc, ev.time))
            if open_waits and open_waits[-1][1] == depth:
                tw = open_waits.pop()[0]
                taskwait_exit[(proc(loc), tw, waits[tw])] = (loc, ev.time)
                waits[tw] += 1
            depth -= 1
        n = type(ev).__name__
        if n == "ThreadFork":
            forks.append(ev.time)
        elif n == "ThreadTeamBegin":
            inst = team_count[ev.thread_team]; team_count[ev.thread_team] += 1
            master = bool(forks)
            key = ("team", proc(loc), ev.thread_team, inst)
            if master:
                omp[("fork",) + key]["src"].append((loc, forks.pop()))
            else:
                omp[("fork",) + key]["dst"].append((loc, ev.time))
            teams.append([ev.thread_team, inst, master, False, 0])
            current = ("implicit", str(loc), ev.thread_team, inst)
        elif n == "ThreadTeamEnd":
            t = [x for x in teams if x[0] == ev.thread_team and not x[3]][-1]
            key = ("join", "team", proc(loc), t[0], t[1])
            if t[2]:
                t[3] = True
            else:
                omp[key]["src"].append((loc, ev.time)); teams.remove(t)
        elif n == "ThreadJoin":
            t = [x for x in teams if x[3]][-1]
            omp[("join", "team", proc(loc), t[0], t[1])]["dst"].append((loc, ev.time)); teams.remove(t)
        elif n == "Enter" and ev.region.region_role in (RegionRole.BARRIER, RegionRole.IMPLICIT_BARRIER) \
                and ev.region.paradigm != Paradigm.MPI and [x for x in teams if not x[3]]:
            t = [x for x in teams if not x[3]][-1]
            in_bar = ("bar", proc(loc), t[0], t[1], t[4])
            omp[in_bar]["src"].append((loc, ev.time))
        elif n == "Leave" and in_bar is not None and ev.region.region_role in (RegionRole.BARRIER, RegionRole.IMPLICIT_BARRIER):
            omp[in_bar]["dst"].append((loc, ev.time))
            [x for x in teams if not x[3]][-1][4] += 1
            in_bar = None
        elif n == "ThreadReleaseLock":
            omp[("lock", proc(loc), ev.lock_id, ev.acquisition_order + 1)]["src"].append((loc, ev.time))
        elif n == "ThreadAcquireLock":
            omp[("lock", proc(loc), ev.lock_id, ev.acquisition_order)]["dst"].append((loc, ev.time))
        elif n == "ThreadTaskCreate":
            omp[("task", proc(loc), ev.thread_team, ev.creating_thread, ev.generation_number)]["src"].append((loc, ev.time))
            child = (proc(loc), ev.thread_team, ev.creating_thread, ev.generation_number)
            task_parent[child] = (current, waits[current])
            task_creator[child] = (proc(loc),) + current if current is not None and len(current) == 3 else None
            if open_groups and open_groups[-1][0][1] == str(current):
                created_in[child] = open_groups[-1][0]
        elif n == "ThreadTaskComplete":
            task_done.append(((proc(loc), ev.thread_team, ev.creating_thread, ev.generation_number), loc, ev.time))
            group_done.append(((proc(loc), ev.thread_team, ev.creating_thread, ev.generation_number), loc, ev.time))
            if in_bar is not None:  # a barrier ends only after the tasks completed inside it
                omp[in_bar]["src"].append((loc, ev.time))
        elif n == "ThreadTaskSwitch":
            if ev.generation_number == 0:  # back to the implicit task
                t = [x for x in teams if not x[3]]
                if t:
                    current = ("implicit", str(loc), t[-1][0], t[-1][1])
            else:
                omp[("task", proc(loc), ev.thread_team, ev.creating_thread, ev.generation_number)]["dst"].append((loc, ev.time))
                current = (ev.thread_team, ev.creating_thread, ev.generation_number)
# Messages within one process carry no clock condition between processes.
pairs, unmatched_sends, unmatched_receives = messages.match()
unmatched = sum(1 for m in unmatched_sends + unmatched_receives if m["sender"] != m["receiver"])
for send, receive in pairs:
    if send["sender"] != send["receiver"] and receive["time"] < send["time"] + a.lmin_mpi:
        viol["p2p"] += 1

ONE_TO_N = {CollectiveOp.BCAST, CollectiveOp.SCATTER, CollectiveOp.SCATTERV}
N_TO_ONE = {CollectiveOp.GATHER, CollectiveOp.GATHERV, CollectiveOp.REDUCE}
SYNCHRONIZING = {CollectiveOp.BARRIER, CollectiveOp.CREATE_HANDLE}
colls = {}  # (comm, k) -> comm rank -> (begin, end, op, root, received)
for (comm, k), by_rank in collectives.instances().items():
    members = {}
    for world_rank, c in by_rank.items():
        if not c["neighborhood"]:
            members[topology.comm_rank(comm, world_rank)] = (c["begin"], c["end"], c["op"], c["root"],
                                                              c["received"])
    colls[(comm, k)] = members
for (comm, s), members in colls.items():
    for r, (b, e, op, root, received) in members.items():
        # An end waits for others only if data reaches it (or the operation synchronizes by
        # itself); MPI_Comm_free (DESTROY_HANDLE) need not synchronize at all.
        if op == CollectiveOp.DESTROY_HANDLE or (op not in SYNCHRONIZING and received == 0):
            continue
        for c, (bc, ec, _, _, _) in members.items():
            if c == r:
                continue
            if op in ONE_TO_N: dep = c == root
            elif op in N_TO_ONE: dep = r == root
            elif op in (CollectiveOp.SCAN, CollectiveOp.EXSCAN): dep = c < r
            else: dep = True
            if dep and e < bc + a.lmin_mpi:
                viol["collective"] += 1
                break

for key, loc, t in group_done:  # a task and its descendants complete before their taskgroup ends
    k, hops = key, 0
    while k is not None and k not in created_in and hops < 1024:
        k, hops = task_creator.get(k), hops + 1
    if k in created_in:
        omp[("taskgroup",) + created_in[k]]["src"].append((loc, t))
for key, loc, t in task_done:  # a child completes before its parent's next taskwait ends
    if key in task_parent:
        parent, w = task_parent[key]
        exit_ = taskwait_exit.get((key[0], parent, w))
        if exit_ is not None:
            omp[("taskwait", key[0], str(parent), w)]["dst"] = [exit_]
            omp[("taskwait", key[0], str(parent), w)]["src"].append((loc, t))
for key, rel in omp.items():
    for dl, dt in rel["dst"]:
        others = [t for l, t in rel["src"] if l != dl]
        if others and dt < max(others) + a.lmin_omp:
            viol["OpenMP"] += 1

result = {"p2p": viol["p2p"], "collective": viol["collective"], "OpenMP": viol["OpenMP"], "order": order,
          "unmatched": unmatched, "events": sum(len(v) for v in per_loc.values()),
          "types": dict(collections.Counter(type(e).__name__ for v in per_loc.values() for e in v))}
if a.dump_times:
    result["times"] = {"%s:%s" % (l.group.name, l.name): [e.time for e in evs] for l, evs in per_loc.items()}
print(json.dumps(result))
if a.expect_zero and (viol or order):
    sys.exit(1)
