"""What an HTML report or a Perfetto export of an OTF2 archive must show, computed with the otf2
Python module only (no code shared with htrace-report): slices per location, per-region calls and
bytes, the process-to-process message matrix, message pairs (k-th send of a channel with its k-th
receive, MPI's non-overtaking order) and clock-condition violations, collective instances."""
import collections
import os
import otf2


def read(anchor):
    t = {"slices": collections.defaultdict(list),   # location ref -> [(name, kind, start, end)]
         "calls": collections.Counter(), "sent": collections.Counter(), "received": collections.Counter(),
         "matrix": collections.Counter(), "matrix_bytes": collections.Counter(),
         "sends": collections.defaultdict(list), "recvs": collections.defaultdict(list),
         "collectives": collections.defaultdict(dict), "messages": 0, "events": 0}
    if os.path.isdir(anchor):
        anchor = os.path.join(anchor, "traces.otf2")
    with otf2.reader.open(anchor) as trace:
        defs = trace.definitions
        t["offset"] = defs.clock_properties.global_offset
        t["resolution"] = defs.clock_properties.timer_resolution
        t["locations"] = {l._ref: (l.group.name, l.name) for l in defs.locations}
        t["groups"] = [g.name for g in defs.location_groups]
        stacks = collections.defaultdict(list)
        coll_count = collections.Counter()
        for loc, ev in trace.events:
            t["events"] += 1
            kind = type(ev).__name__
            ref = loc._ref
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
                key = (loc.group.name, dst.group.name, ev.communicator._ref, ev.msg_tag)
                t["matrix"][key[:2]] += 1
                t["matrix_bytes"][key[:2]] += ev.msg_length
                start = stacks[ref][-1][1] if stacks[ref] else ev.time
                t["sends"][key].append((ref, ev.time, start))
            elif kind in ("MpiRecv", "MpiIrecv"):
                src = ev.communicator.group.members[ev.sender]
                if stacks[ref]:
                    t["received"][stacks[ref][-1][0].name] += ev.msg_length
                key = (src.group.name, loc.group.name, ev.communicator._ref, ev.msg_tag)
                start = stacks[ref][-1][1] if stacks[ref] else ev.time
                t["recvs"][key].append((ref, ev.time, start))
            elif kind == "MpiCollectiveEnd":
                if stacks[ref]:
                    t["sent"][stacks[ref][-1][0].name] += ev.size_sent
                    t["received"][stacks[ref][-1][0].name] += ev.size_received
                comm = ev.communicator
                k = coll_count[(ref, comm._ref)]
                coll_count[(ref, comm._ref)] += 1
                members = [m._ref for m in comm.group.members]
                start = stacks[ref][-1][1] if stacks[ref] else ev.time
                if len(members) > 1 and ref in members:
                    root = ev.root if ev.root is not None and ev.root < len(members) else 0
                    t["collectives"][(comm._ref, k)][members.index(ref)] = (ref, start, root)
    pairs = []
    for key, sends in t["sends"].items():
        for s, r in zip(sends, t["recvs"].get(key, [])):
            pairs.append((s, r))
    t["pairs"] = pairs
    t["violations"] = sum(1 for s, r in pairs if r[1] < s[1])
    return t
