"""What an HTML report or a Perfetto export of an OTF2 archive must show, computed with the otf2
Python module only (no code shared with htrace-report): slices per location, per-region calls and
bytes, the process-to-process message matrix, message pairs and collective instances (the
matcher of htrace_test.messages: MPI's non-overtaking order) and clock-condition violations."""
import collections
import os
import otf2

from htrace_test.archive import Topology
from htrace_test.messages import CollectiveLog, MessageLog


def read(anchor):
    t = {"slices": collections.defaultdict(list),   # location ref -> [(name, kind, start, end)]
         "calls": collections.Counter(), "sent": collections.Counter(), "received": collections.Counter(),
         "matrix": collections.Counter(), "matrix_bytes": collections.Counter(),
         "collectives": collections.defaultdict(dict), "messages": 0, "events": 0}
    if os.path.isdir(anchor):
        anchor = os.path.join(anchor, "traces.otf2")
    with otf2.reader.open(anchor) as trace:
        defs = trace.definitions
        t["offset"] = defs.clock_properties.global_offset
        t["resolution"] = defs.clock_properties.timer_resolution
        t["locations"] = {l._ref: (l.group.name, l.name) for l in defs.locations}
        t["groups"] = [g.name for g in defs.location_groups]
        comms = {c._ref: c for c in defs.comms}
        topology = Topology(defs)
        messages, collectives = MessageLog(topology), CollectiveLog(topology)
        stacks = collections.defaultdict(list)
        for loc, ev in trace.events:
            t["events"] += 1
            kind = type(ev).__name__
            ref = loc._ref
            # the start of the enclosing region (the MPI call): where a report draws the arrow
            start = stacks[ref][-1][1] if stacks[ref] else ev.time
            messages.add(loc, ev, start=start)
            collectives.add(loc, ev, start=start)
            if kind == "Enter":
                stacks[ref].append((ev.region, ev.time))
            elif kind == "Leave":
                region, start = stacks[ref].pop()
                name = region.name
                para = str(region.paradigm)
                t["slices"][ref].append((name, para, start, ev.time))
                t["calls"][name] += 1
            elif kind in ("MpiSend", "MpiIsend"):
                t["messages"] += 1
                dst = ev.communicator.group.members[ev.receiver]
                if stacks[ref]:
                    t["sent"][stacks[ref][-1][0].name] += ev.msg_length
                key = (loc.group.name, dst.group.name)
                t["matrix"][key] += 1
                t["matrix_bytes"][key] += ev.msg_length
            elif kind in ("MpiRecv", "MpiIrecv"):
                if stacks[ref]:
                    t["received"][stacks[ref][-1][0].name] += ev.msg_length
            elif kind == "MpiCollectiveEnd":
                if stacks[ref]:
                    t["sent"][stacks[ref][-1][0].name] += ev.size_sent
                    t["received"][stacks[ref][-1][0].name] += ev.size_received
    # Per channel (sender's and receiver's process names, communicator, tag): the sends and the
    # receives as (location ref, time, start of the enclosing region), the k-th of each a pair.
    process_name = {topology.world_rank.get(l._ref): l.group.name for l in defs.locations}
    t["sends"], t["recvs"] = {}, {}
    for (sender, receiver, comm, tag), (sends, receives) in messages.channels().items():
        key = (process_name.get(sender), process_name.get(receiver), comm, tag)
        t["sends"][key] = [(s["location"]._ref, s["time"], s["start"]) for s in sends]
        t["recvs"][key] = [(r["location"]._ref, r["time"], r["start"]) for r in receives]
    t["pairs"] = [((s["location"]._ref, s["time"], s["start"]), (r["location"]._ref, r["time"], r["start"]))
                  for s, r in messages.match()[0]]
    # Blocking collectives of the processes' master locations, on communicators of two or more:
    # {(comm, k): {comm rank: (location ref, start of the enclosing region, root, end record's time)}}.
    for (comm, k), by_rank in collectives.instances().items():
        members = [m._ref for m in comms[comm].group.members]
        for c in by_rank.values():
            ref = c["location"]._ref
            if c["blocking"] and len(members) > 1 and ref in members:
                root = c["root"] if c["root"] is not None and c["root"] < len(members) else 0
                t["collectives"][(comm, k)][members.index(ref)] = (ref, c["start"], root, c["end"])
    t["violations"] = sum(1 for s, r in t["pairs"] if r[1] < s[1])
    return t
