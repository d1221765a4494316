"""The ViTE copy (htrace-report --format vite) on its two paths (tools/htrace-report/
vite_export_events.h): event files copied record by record beside their local definition files, and
the locations format/ cannot copy exactly re-encoded through OTF2's reader and writer.
  generated  correct_gen_archive, 16 processes of 2 threads: otf2-print shows the copy's events as
             the original's without its ThreadFork and ThreadJoin records, whose counts the tool
             states; every local definition file copied byte for byte
  offsets    written with the otf2 module, three ranks: rank 0 with a BufferFlush, a fork and a join,
             rank 1 with ClockOffset records in its local definitions, rank 2 with them too and
             Metric records of a metric class and of a metric instance (its metric ids need its
             mapping tables, which clock offsets keep format/ from taking: the OTF2 path). The copy's
             events, read back with the otf2 module (clock offsets applied), are the original's
             without the BufferFlush, ThreadFork, ThreadJoin and the instance's Metric records;
             ranks 0 and 1 keep their local definition files byte for byte, rank 2's holds no
             ClockOffset records any more (OTF2 applied them to the times it wrote)
usage: vite_copy.py GEN_ARCHIVE HTRACE_REPORT"""
import collections
import os
import re
import shutil
import subprocess
import sys

import _otf2
import otf2
from otf2.enums import Base, GroupType, MetricMode, MetricOccurrence, MetricType, Paradigm, RecorderKind, Type

from htrace_test.check import Expectations

GEN, REPORT = sys.argv[1], sys.argv[2]
WORK = os.path.join(os.environ["HTRACE_BUILD_DIR"], "tests", "report", "out-vite-copy")
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
expect = Expectations()


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        print("%s: exit %d\n%s%s" % (cmd, p.returncode, p.stdout, p.stderr), file=sys.stderr)
        sys.exit(1)
    return p


def vite_copy(archive, copy):
    """The copy's stderr lines."""
    return run([REPORT, "--format", "vite", archive, "-o", copy]).stderr.splitlines()


def left_out_line(copy, counts):
    listed = ", ".join("%d %s" % (n, k) for k, n in sorted(counts.items()))
    return ("htrace-report: %s: the ViTE copy leaves out %d records (%s) ViTE 1.2 cannot show (the original "
            "keeps them)" % (copy, sum(counts.values()), listed))


def otf2_print_events(archive):
    """otf2-print's event lines, peers by number only (it resolves a rank through a rank group,
    which the copy writes as a location list)."""
    out = run(["otf2-print", os.path.join(archive, "traces.otf2")]).stdout
    return [re.sub(r"(Receiver|Sender|Root|Creating Thread): (\d+) \([^)]*\)", r"\1: \2", l)
            for l in out.splitlines() if l and l.split()[0].isupper() and not l.startswith("===")]


def local_definitions(archive):
    """Each location's local definition file: its bytes by name."""
    d = os.path.join(archive, "traces")
    files = {}
    for name in sorted(os.listdir(d)):
        if name.endswith(".def"):
            with open(os.path.join(d, name), "rb") as f:
                files[name] = f.read()
    return files


# generated: every location copied directly.
archive = os.path.join(WORK, "generated")
run([GEN, archive, "--processes", "16", "--threads", "2", "--events", "40000", "--skew", "5000"])
copy = archive + "-vite"
err = vite_copy(archive, copy)
original = otf2_print_events(archive)
left_out = ("THREAD_FORK ", "THREAD_JOIN ")
counts = {"ThreadFork": sum(1 for l in original if l.startswith(left_out[0])),
          "ThreadJoin": sum(1 for l in original if l.startswith(left_out[1]))}
expect(counts["ThreadFork"] > 0 and counts["ThreadFork"] == counts["ThreadJoin"],
       "generated: the original has forks and joins: %s" % counts)
expect(left_out_line(copy, counts) in err, "generated: says what it left out: %s" % err)
kept = [l for l in original if not l.startswith(left_out)]
copied = otf2_print_events(copy)
expect(copied == kept, "generated: otf2-print shows the copy's events as the original's without forks and joins "
       "(%d events, %d expected)" % (len(copied), len(kept)))
defs = local_definitions(archive)
expect(len(defs) == 32 and local_definitions(copy) == defs, "generated: every local definition file copied as it was")
print("generated: %d events, %d in the copy" % (len(original), len(copied)))

# offsets: both paths in one archive.
US = 1000
archive = os.path.join(WORK, "offsets")
with otf2.writer.open(archive, timer_resolution=1000000000) as trace:
    d = trace.definitions
    node = d.system_tree_node("node0", parent=d.system_tree_node("machine"))
    locs = [d.location("master %d" % r, group=d.location_group("rank %d" % r, system_tree_parent=node))
            for r in range(3)]
    world = d.comm("MPI_COMM_WORLD", group=d.group("world", members=locs, group_type=GroupType.COMM_LOCATIONS,
                                                   paradigm=Paradigm.MPI))
    main = d.region("main")
    temperature = d.metric_member("temperature", "sensor", metric_type=MetricType.OTHER,
                                  metric_mode=MetricMode.ABSOLUTE_POINT, value_type=Type.INT64,
                                  base=Base.DECIMAL, exponent=0, unit="C")
    sensor = d.metric_class([temperature], occurrence=MetricOccurrence.ASYNCHRONOUS,
                            recorder_kind=RecorderKind.ABSTRACT)
    instance = d.metric_instance(sensor, locs[2], scope=locs[2])
    w = [trace.event_writer_from_location(l) for l in locs]
    w[0].enter(1 * US, main)
    w[0].buffer_flush(2 * US, 3 * US)
    w[0].thread_fork(4 * US, Paradigm.OPENMP, 2)
    w[0].thread_join(5 * US, Paradigm.OPENMP)
    w[0].mpi_send(6 * US, 1, world, 0, 8)
    w[0].mpi_send(6 * US, 2, world, 0, 8)
    w[0].leave(9 * US, main)
    w[1].enter(1 * US, main)
    w[1].mpi_recv(7 * US, 0, world, 0, 8)
    w[1].leave(9 * US, main)
    w[2].enter(1 * US, main)
    w[2].metric(2 * US, sensor, [40])
    w[2].metric(3 * US, instance, [41])
    w[2].mpi_recv(7 * US, 0, world, 0, 8)
    w[2].metric(8 * US, sensor, [42])
    w[2].leave(9 * US, main)
    _otf2.Archive_OpenDefFiles(trace.handle)
    for r in (1, 2):
        dw = _otf2.Archive_GetDefWriter(trace.handle, r)
        _otf2.DefWriter_WriteClockOffset(dw, 0, 800 * r, 0.0)
        _otf2.DefWriter_WriteClockOffset(dw, 10 * US, 800 * r, 0.0)


def plain(v):
    """A field of an event from the otf2 module, comparable across archives (definitions by id)."""
    if hasattr(v, "_ref"):
        return (type(v).__name__, v._ref)
    if isinstance(v, (list, tuple)):
        return tuple(plain(x) for x in v)
    return v if isinstance(v, (int, float, str, type(None))) else str(v)


def events_of(archive):
    """Every event in the otf2 module's merged order: (location id, kind, time, fields)."""
    with otf2.reader.open(os.path.join(archive, "traces.otf2")) as trace:
        return [(loc._ref, type(ev).__name__, ev.time, tuple(sorted((k, plain(v)) for k, v in vars(ev).items())))
                for loc, ev in trace.events]


copy = archive + "-vite"
err = vite_copy(archive, copy)
events = events_of(archive)
instance_ref = ("MetricInstance", instance._ref)


def left_out_kind(kind, fields):
    if kind == "Metric":
        return "Metric of metric instances" if dict(fields)["metric"] == instance_ref else None
    return kind if kind in ("BufferFlush", "ThreadFork", "ThreadJoin") else None


counts = collections.Counter(k for k in (left_out_kind(e[1], e[3]) for e in events) if k)
expect(counts == {"BufferFlush": 1, "ThreadFork": 1, "ThreadJoin": 1, "Metric of metric instances": 1},
       "offsets: the original has the records to leave out: %s" % counts)
expect(any(l.startswith(left_out_line(copy, counts)[:-len(" ViTE 1.2 cannot show (the original keeps them)")])
           for l in err), "offsets: says what it left out: %s" % err)
kept = [e for e in events if not left_out_kind(e[1], e[3])]
copied = events_of(copy)
expect(copied == kept, "offsets: the copy's events are the original's without those records:\n%s\n%s" % (copied, kept))
times = {e[0]: [] for e in events}
for e in events:
    times[e[0]].append(e[2])
expect(times[1][1] == 7 * US + 800 and times[2][3] == 7 * US + 1600, "offsets: the reader applied the offsets: %s" % times)
defs, copy_defs = local_definitions(archive), local_definitions(copy)
expect(all(copy_defs.get(n) == defs[n] for n in ("0.def", "1.def")) and len(defs["1.def"]) > len(defs["0.def"]),
       "offsets: ranks 0 and 1 keep their local definition files (rank 1's with its clock offsets)")
expect("2.def" in copy_defs and copy_defs["2.def"] != defs["2.def"],
       "offsets: rank 2 went through OTF2 (its local definitions written anew)")
print("offsets: %d events, %d in the copy, left out %s" % (len(events), len(copied), dict(counts)))

expect.finish(WORK)
