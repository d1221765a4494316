#!/usr/bin/python3
"""trace_check: an independent consistency checker for OTF2 archives of MPI programs.

Reads an archive with the `otf2` Python bindings only (it shares no code with htrace) and checks:
  - every send (MpiSend/MpiIsend) has exactly one matching receive (MpiRecv/MpiIrecv) with equal
    tag and size, matched in MPI's non-overtaking order per (sender, receiver, communicator, tag);
  - request ids pair up per process: MpiIsend -> MpiIsendComplete, MpiIrecvRequest -> MpiIrecv
    (or MpiRequestCancelled), NonBlockingCollectiveRequest -> NonBlockingCollectiveComplete;
  - collective counts per communicator and operation agree across the communicator's members;
  - Enter/Leave are balanced and properly nested per location, MpiCollectiveBegin/End too;
  - timestamps never decrease per location;
  - MPI regions are named MPI_*, the master location of world rank r has id r, and the
    ClockProperties carry a plausible real-time start date.

usage: trace_check.py ARCHIVE [--expect-messages N] [--expect-locations N] [--expect-processes N]
                              [--expect-flushes] [--quiet]
ARCHIVE is the archive directory or its traces.otf2 anchor file. Prints a JSON report on stdout;
exits 1 when a violation or a failed expectation is found, 2 on usage errors.

Importable: `check(path)` returns a Report (see below); tests inspect its fields.
"""
import argparse
import json
import os
import re
import sys
import time
from collections import defaultdict

import otf2
from otf2.enums import GroupType, Paradigm

from htrace_test.archive import Topology, anchor_path, archive_properties
from htrace_test.messages import MessageLog

MAX_LISTED = 20  # violations of one kind listed in full; the rest are counted

# What ranks whose recording stopped before their partners' (HTRACE_BUDGET) leave, and nothing
# else: messages and collectives with one side, requests completed after the stop. Tests of such
# archives accept these violations (one_sided) and no other.
ONE_SIDED = re.compile(r"^(unmatched (send|receive): |\.\.\. and \d+ more unmatched |.* members "
                       r"disagree on the count: |rank \d+: \w+ request \d+ opened at .* never "
                       r"completed)")


def one_sided(violation):
    """True for a violation a recording stopped early on some ranks explains (see ONE_SIDED)."""
    return bool(ONE_SIDED.match(violation))


class Report:
    """Everything the checker learned about one archive."""

    def __init__(self, path):
        self.path = path
        self.violations = []      # human-readable strings
        self.locations = 0
        self.processes = 0
        self.events = 0
        self.event_counts = defaultdict(int)  # record type name -> count
        self.region_counts = defaultdict(int)  # region name -> Enter count
        self.sends = 0
        self.receives = 0
        self.messages = []        # matched: dict(sender, receiver, comm, tag, size) in world ranks
        self.receive_records = []  # every receive: dict(receiver, sender, comm, tag, size, location)
        self.unmatched_sends = []
        self.unmatched_receives = []
        self.comms = {}           # comm name (unique) -> world ranks in communicator rank order
        self.collectives = {}     # comm name -> operation -> {world rank: count}
        # Every collective: dict(rank, comm, op, seq, root, sent, received); seq counts the
        # operations of this kind on this communicator per rank, so equal seq = same instance.
        self.collective_records = []
        self.location_ids = {}    # world rank -> [location ids]
        self.mpi_regions = []
        self.start_date_ns = None
        self.buffer_flushes = 0

    def violation(self, message):
        self.violations.append(message)

    @property
    def ok(self):
        return not self.violations

    def to_json(self):
        return {
            "archive": self.path,
            "ok": self.ok,
            "violations": self.violations[:200],
            "violation_count": len(self.violations),
            "locations": self.locations,
            "processes": self.processes,
            "events": self.events,
            "event_counts": dict(sorted(self.event_counts.items())),
            "region_counts": dict(sorted(self.region_counts.items())),
            "sends": self.sends,
            "receives": self.receives,
            "messages_matched": len(self.messages),
            "unmatched_sends": self.unmatched_sends[:MAX_LISTED],
            "unmatched_receives": self.unmatched_receives[:MAX_LISTED],
            "comms": self.comms,
            "collectives": self.collectives,
            "location_ids": {str(k): v for k, v in sorted(self.location_ids.items())},
            "mpi_regions": sorted(self.mpi_regions),
            "start_date_ns": self.start_date_ns,
            "buffer_flushes": self.buffer_flushes,
        }


def read_events(anchor):
    """Yields (location, event) in the reader's merged order (per location: file order)."""
    with otf2.reader.open(anchor) as trace:
        yield trace.definitions
        for location, event in trace.events:
            yield location, event


def corrected_by_htrace(anchor):
    """True for an archive htrace-correct wrote (archive property HTRACE::CLOCK::TIMEBASE
    "corrected")."""
    return archive_properties(anchor).get("HTRACE::CLOCK::TIMEBASE") == "corrected"


def check(path, expect_messages=None, expect_locations=None, expect_processes=None,
          expect_flushes=False):
    report = Report(path)
    try:
        stream = read_events(anchor_path(path))
        defs = next(stream)
    except Exception as error:  # the reader's errors are not typed usefully
        report.violation(f"cannot read archive: {error}")
        return report
    topo = Topology(defs)
    for problem in topo.problems:
        report.violation(problem)
    check_definitions(defs, topo, report)
    # htrace-correct copies a BufferFlush's stop time unchanged while it moves the events around
    # it: the flush rule below holds for the tracer's own archives only.
    flush_rule = not corrected_by_htrace(anchor_path(path))

    last_time = {}
    flush_end = {}                # location -> stop time of its last BufferFlush
    stacks = defaultdict(list)
    in_collective = {}
    messages = MessageLog(topo)
    open_requests = {}            # (world rank, request id) -> (kind, time, payload)
    coll_counts = defaultdict(lambda: defaultdict(lambda: defaultdict(int)))

    def where(location, event):
        return f"{location.name} t={event.time}"

    try:
        for location, event in stream:
            report.events += 1
            kind = type(event).__name__
            report.event_counts[kind] += 1
            loc = location._ref
            me = topo.world_rank.get(loc, -1)
            if event.time < last_time.get(loc, event.time):
                report.violation(f"time goes backwards on {location.name}: {event.time} after {last_time[loc]}")
            last_time[loc] = max(event.time, last_time.get(loc, event.time))
            # A BufferFlush spans time: what follows it begins after its end (viewers and analyses
            # read it as a region).
            if flush_rule and kind != "BufferFlush" and event.time < flush_end.get(loc, 0):
                report.violation(f"{kind} at {where(location, event)} before the end of the BufferFlush "
                            f"before it ({flush_end[loc]})")

            if kind == "Enter":
                stacks[loc].append(event.region)
                report.region_counts[event.region.name] += 1
            elif kind == "Leave":
                if not stacks[loc]:
                    report.violation(f"Leave {event.region.name} without Enter at {where(location, event)}")
                elif stacks[loc][-1] is not event.region and stacks[loc][-1]._ref != event.region._ref:
                    report.violation(f"Leave {event.region.name} while {stacks[loc][-1].name} is open at "
                                f"{where(location, event)}")
                    stacks[loc].pop()
                else:
                    stacks[loc].pop()
            elif kind == "BufferFlush":
                report.buffer_flushes += 1
                flush_end[loc] = event.stop_time
            elif kind in ("MpiSend", "MpiIsend"):
                report.sends += 1
                if topo.peer(event.communicator._ref, me, event.receiver) is None:
                    report.violation(f"{kind} to rank {event.receiver} outside {event.communicator.name} at "
                                f"{where(location, event)}")
                    continue
                messages.add(location, event)
                if kind == "MpiIsend":
                    open_request(report, open_requests, me, event, "isend", location)
            elif kind in ("MpiRecv", "MpiIrecv"):
                report.receives += 1
                if kind == "MpiIrecv":
                    close_request(report, open_requests, me, event, "irecv", location)
                peer = topo.peer(event.communicator._ref, me, event.sender)
                if peer is None:
                    report.violation(f"{kind} from rank {event.sender} outside {event.communicator.name} at "
                                f"{where(location, event)}")
                    continue
                messages.add(location, event)
                report.receive_records.append(dict(receiver=me, sender=peer, tag=event.msg_tag,
                                                   comm=topo.comm_names[event.communicator._ref],
                                                   size=event.msg_length, location=loc))
            elif kind == "MpiIsendComplete":
                close_request(report, open_requests, me, event, "isend", location)
                messages.add(location, event)
            elif kind == "MpiIrecvRequest":
                open_request(report, open_requests, me, event, "irecv", location)
                messages.add(location, event)
            elif kind == "MpiRequestCancelled":
                close_request(report, open_requests, me, event, None, location)
                messages.add(location, event)
            elif kind == "NonBlockingCollectiveRequest":
                open_request(report, open_requests, me, event, "nbc", location)
            elif kind == "NonBlockingCollectiveComplete":
                close_request(report, open_requests, me, event, "nbc", location)
                record_collective(report, topo, coll_counts, me, event, event.size_sent,
                                  event.size_received)
            elif kind == "MpiCollectiveBegin":
                if in_collective.get(loc):
                    report.violation(f"MpiCollectiveBegin inside another collective at {where(location, event)}")
                in_collective[loc] = True
            elif kind == "MpiCollectiveEnd":
                if not in_collective.get(loc):
                    report.violation(f"MpiCollectiveEnd without Begin at {where(location, event)}")
                in_collective[loc] = False
                record_collective(report, topo, coll_counts, me, event, event.size_sent,
                                  event.size_received)
    except Exception as error:
        report.violation(f"reading events failed after {report.events} events: {error}")

    for loc, stack in stacks.items():
        if stack:
            report.violation(f"location {loc} ends with open regions: {[r.name for r in stack]}")
    for loc, open_ in in_collective.items():
        if open_:
            report.violation(f"location {loc} ends inside a collective")
    for (rank, request), (kind, t, _) in sorted(open_requests.items()):
        report.violation(f"rank {rank}: {kind} request {request} opened at t={t} never completed")

    match_messages(report, topo, messages)
    check_collectives(report, topo, coll_counts)
    check_expectations(report, expect_messages, expect_locations, expect_processes, expect_flushes)
    return report


def record_collective(report, topo, coll_counts, rank, event, sent, received):
    op = op_name(event.collective_op)
    per_rank = coll_counts[event.communicator._ref][op]
    report.collective_records.append(dict(
        rank=rank, comm=topo.comm_names.get(event.communicator._ref), op=op, seq=per_rank[rank],
        root=event.root, sent=sent, received=received))
    per_rank[rank] += 1


def op_name(op):
    return str(op).split(".")[-1]


def open_request(report, open_requests, rank, event, kind, location):
    key = (rank, event.request_id)
    if key in open_requests:
        report.violation(f"rank {rank}: request {event.request_id} reused while still active at "
                    f"{location.name} t={event.time}")
    open_requests[key] = (kind, event.time, None)


def close_request(report, open_requests, rank, event, kind, location):
    """Closes a request; kind None accepts any. Returns the time the request was opened."""
    key = (rank, event.request_id)
    opened = open_requests.pop(key, None)
    name = type(event).__name__
    if opened is None:
        report.violation(f"rank {rank}: {name} for unknown request {event.request_id} at "
                    f"{location.name} t={event.time}")
        return None
    if kind is not None and opened[0] != kind:
        report.violation(f"rank {rank}: {name} completes a {opened[0]} request {event.request_id} at "
                    f"{location.name} t={event.time}")
    return opened[1]


def match_messages(report, topo, messages):
    """Pairs sends with receives (htrace_test.messages: MPI's non-overtaking order per channel)."""
    pairs, unmatched_sends, unmatched_receives = messages.match()

    def listed(record):
        return dict(sender=record["sender"], receiver=record["receiver"],
                    comm=topo.comm_names.get(record["comm"], str(record["comm"])), tag=record["tag"],
                    size=record["size"], where=f"{record['location'].name} t={record['time']}")

    report.unmatched_sends = [listed(s) for s in unmatched_sends]
    report.unmatched_receives = [listed(r) for r in unmatched_receives]
    for s, r in pairs:
        name = topo.comm_names.get(s["comm"], str(s["comm"]))
        if s["size"] != r["size"]:
            report.violation(f"message {s['sender']}->{s['receiver']} on {name} tag {s['tag']}: sent "
                        f"{s['size']} bytes ({listed(s)['where']}) but received {r['size']} "
                        f"({listed(r)['where']})")
        report.messages.append(dict(sender=s["sender"], receiver=s["receiver"], comm=name,
                                    tag=s["tag"], size=s["size"]))
    for kind, items in (("send", report.unmatched_sends), ("receive", report.unmatched_receives)):
        for item in items[:MAX_LISTED]:
            report.violation(f"unmatched {kind}: {item}")
        if len(items) > MAX_LISTED:
            report.violation(f"... and {len(items) - MAX_LISTED} more unmatched {kind}s")


def check_collectives(report, topo, coll_counts):
    for comm, ops in coll_counts.items():
        name = topo.comm_names.get(comm, str(comm))
        report.collectives[name] = {op: {str(r): c for r, c in sorted(counts.items())}
                                    for op, counts in sorted(ops.items())}
        local, remote = topo.members.get(comm, ([], None))
        if local is None:  # MPI_COMM_SELF-like: every process on its own
            continue
        members = set(local) | set(remote or [])
        for op, counts in ops.items():
            outsiders = set(counts) - members
            if outsiders:
                report.violation(f"{op} on {name} recorded by non-members {sorted(outsiders)}")
            values = {counts.get(r, 0) for r in members}
            if len(values) > 1:
                report.violation(f"{op} on {name}: members disagree on the count: "
                            f"{ {r: counts.get(r, 0) for r in sorted(members)} }")


def check_definitions(defs, topo, report):
    report.locations = len(list(defs.locations))
    report.processes = len({topo.world_rank.get(l._ref) for l in defs.locations})
    for location in defs.locations:
        rank = topo.world_rank.get(location._ref)
        if rank is not None:
            report.location_ids.setdefault(rank, []).append(location._ref)
    for group in defs.groups:
        if group.group_type == GroupType.COMM_LOCATIONS and group.paradigm == Paradigm.MPI:
            for rank, location in enumerate(group.members):
                if location._ref != rank:
                    report.violation(f"master location of world rank {rank} has id {location._ref}")
    for comm in defs.comms:
        local, remote = topo.members[comm._ref]
        ranks = local if remote is None else {"local": local, "remote": remote}
        report.comms[topo.comm_names[comm._ref]] = ranks if ranks is not None else "self"
    for region in defs.regions:
        if region.paradigm == Paradigm.MPI:
            report.mpi_regions.append(region.name)
            if not region.name.startswith("MPI_"):
                report.violation(f"MPI region named '{region.name}' (expected MPI_*)")
    clock = defs.clock_properties
    stamp = clock.realtime_timestamp if clock is not None else None
    if stamp is None or stamp == otf2.Undefined.TIMESTAMP.value:
        report.violation("ClockProperties has no real-time start date")
    else:
        report.start_date_ns = stamp
        earliest, latest = 946684800 * 10**9, int((time.time() + 86400) * 1e9)  # 2000-01-01 .. now+1d
        if not earliest <= stamp <= latest:
            report.violation(f"ClockProperties start date {stamp} ns is implausible")


def check_expectations(report, messages, locations, processes, flushes):
    if messages is not None and len(report.messages) != messages:
        report.violation(f"expected {messages} matched messages, found {len(report.messages)}")
    if locations is not None and report.locations != locations:
        report.violation(f"expected {locations} locations, found {report.locations}")
    if processes is not None and report.processes != processes:
        report.violation(f"expected {processes} processes, found {report.processes}")
    if flushes and report.buffer_flushes == 0:
        report.violation("expected BufferFlush records, found none")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="trace_check.py", description=__doc__.split("\n")[0])
    parser.add_argument("archive")
    parser.add_argument("--expect-messages", type=int)
    parser.add_argument("--expect-locations", type=int)
    parser.add_argument("--expect-processes", type=int)
    parser.add_argument("--expect-flushes", action="store_true")
    parser.add_argument("--quiet", action="store_true", help="print only violations")
    args = parser.parse_args(argv)
    if not os.path.exists(args.archive):
        print(f"trace_check.py: error: '{args.archive}': no such file or directory", file=sys.stderr)
        return 1
    report = check(args.archive, args.expect_messages, args.expect_locations, args.expect_processes,
                   args.expect_flushes)
    if not args.quiet:
        print(json.dumps(report.to_json(), indent=1))
    for violation in report.violations[:50]:
        print(f"trace_check.py: violation: {violation}", file=sys.stderr)
    if not report.ok:
        print(f"trace_check.py: error: '{args.archive}': {len(report.violations)} violation(s)",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
