#!/usr/bin/python3
"""Unit tests of trace_check.py on small archives written with the otf2 Python writer: a correct
archive passes, and each deliberately broken archive fails for the right reason."""
import os
import tempfile
import unittest

import otf2
from otf2.enums import CollectiveOp, GroupType, Paradigm, RegionRole

import trace_check

START_DATE_S = 1_700_000_000  # 2023-11-14


class Archive:
    """Builds a two- or three-rank MPI archive; `events[rank]` is a list of (method, args)."""

    written = 0  # archives written so far: each gets a fresh directory

    def __init__(self, ranks=2):
        self.ranks = ranks
        self.events = {r: [] for r in range(ranks)}
        self.extra_comm = None  # (name, world ranks in comm order)
        self.inter_comm = None
        self.region_name = "MPI_Send"
        self.swap_location_ids = False

    def add(self, rank, method, *args):
        self.events[rank].append((method, args))
        return self

    def write(self, directory):
        Archive.written += 1
        path = os.path.join(directory, f"archive{Archive.written}")
        with otf2.writer.open(path, timer_resolution=10**9) as trace:
            defs = trace.definitions
            root = defs.system_tree_node("machine")
            node = defs.system_tree_node("node0", parent=root)
            groups = [defs.location_group(f"MPI Rank {r}", system_tree_parent=node)
                      for r in range(self.ranks)]
            order = list(range(self.ranks))
            if self.swap_location_ids:
                order.reverse()
            locations = {}
            for r in order:
                locations[r] = defs.location(f"Master thread rank {r}", group=groups[r])
            world_locations = defs.group("world", group_type=GroupType.COMM_LOCATIONS,
                                         paradigm=Paradigm.MPI,
                                         members=[locations[r] for r in range(self.ranks)])
            world_group = defs.group("world group", group_type=GroupType.COMM_GROUP,
                                     paradigm=Paradigm.MPI, members=list(range(self.ranks)))
            self.comms = {"world": defs.comm("MPI_COMM_WORLD", group=world_group)}
            if self.inter_comm:  # (name, world ranks of group A, world ranks of group B)
                name, a_ranks, b_ranks = self.inter_comm
                group_a = defs.group(name + " A", group_type=GroupType.COMM_GROUP,
                                     paradigm=Paradigm.MPI, members=a_ranks)
                group_b = defs.group(name + " B", group_type=GroupType.COMM_GROUP,
                                     paradigm=Paradigm.MPI, members=b_ranks)
                self.comms["inter"] = defs.inter_comm(name, group_a, group_b, self.comms["world"])
            if self.extra_comm:
                name, members = self.extra_comm
                group = defs.group(name + " group", group_type=GroupType.COMM_GROUP,
                                   paradigm=Paradigm.MPI, members=members)
                self.comms["extra"] = defs.comm(name, group=group, parent=self.comms["world"])
            self.region = defs.region(self.region_name, paradigm=Paradigm.MPI,
                                      region_role=RegionRole.POINT2POINT)
            assert world_locations is not None
            for r in range(self.ranks):
                writer = trace.event_writer_from_location(locations[r])
                for method, args in self.events[r]:
                    args = [self.comms[a[1:]] if isinstance(a, str) and a.startswith("@") else a
                            for a in args]
                    args = [self.region if isinstance(a, str) and a == "REGION" else a for a in args]
                    getattr(writer, method)(*args)
            trace._realtime_timestamp = START_DATE_S  # the writer's clock would do too; keep fixed
        return path


def ping(archive, t, sender, receiver, tag=5, size=4, comm="@world", nonblocking=False, request=1):
    """A message from `sender` to `receiver` (communicator ranks) at time t, with Enter/Leave."""
    if nonblocking:
        archive.add(sender, "enter", t, "REGION").add(sender, "mpi_isend", t + 1, receiver, comm, tag,
                                                     size, request)
        archive.add(sender, "mpi_isend_complete", t + 2, request).add(sender, "leave", t + 3, "REGION")
    else:
        archive.add(sender, "enter", t, "REGION").add(sender, "mpi_send", t + 1, receiver, comm, tag, size)
        archive.add(sender, "leave", t + 2, "REGION")
    return archive


def pong(archive, t, receiver, sender, tag=5, size=4, comm="@world"):
    archive.add(receiver, "enter", t, "REGION").add(receiver, "mpi_recv", t + 1, sender, comm, tag, size)
    return archive.add(receiver, "leave", t + 2, "REGION")


class TraceCheckTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def run_check(self, archive, **expect):
        return trace_check.check(archive.write(self.tmp.name), **expect)

    def assertViolation(self, report, text):
        self.assertFalse(report.ok, "checker accepted a broken archive")
        self.assertTrue(any(text in v for v in report.violations),
                        f"no violation mentions '{text}': {report.violations}")

    def good(self):
        a = Archive()
        ping(a, 10, 0, 1)
        pong(a, 20, 1, 0)
        ping(a, 30, 1, 0, tag=7, size=8, nonblocking=True, request=3)
        a.add(0, "mpi_irecv_request", 25, 9)
        a.add(0, "mpi_irecv", 40, 1, "@world", 7, 8, 9)
        for r in range(2):
            a.add(r, "enter", 100, "REGION").add(r, "mpi_collective_begin", 101)
            a.add(r, "mpi_collective_end", 102, CollectiveOp.ALLREDUCE, "@world", otf2.Undefined.UINT32, 4, 4)
            a.add(r, "leave", 103, "REGION")
        return a

    def test_correct_archive_passes(self):
        report = self.run_check(self.good(), expect_messages=2, expect_locations=2, expect_processes=2)
        self.assertTrue(report.ok, report.violations)
        self.assertEqual(report.comms["MPI_COMM_WORLD"], [0, 1])
        self.assertEqual(report.collectives["MPI_COMM_WORLD"]["ALLREDUCE"], {"0": 1, "1": 1})
        self.assertEqual(report.start_date_ns, START_DATE_S * 10**9)
        self.assertEqual(trace_check.main([report.path, "--quiet"]), 0)

    def test_expectations_are_enforced(self):
        report = self.run_check(self.good(), expect_messages=3, expect_locations=4)
        self.assertViolation(report, "expected 3 matched messages, found 2")
        self.assertViolation(report, "expected 4 locations")
        self.assertEqual(trace_check.main([report.path, "--quiet",
                                           "--expect-messages", "3"]), 1)

    def test_unmatched_send_fails(self):
        a = self.good()
        ping(a, 200, 0, 1, tag=11)
        self.assertViolation(self.run_check(a), "unmatched send")

    def test_unmatched_receive_fails(self):
        a = self.good()
        pong(a, 200, 1, 0, tag=12)
        self.assertViolation(self.run_check(a), "unmatched receive")

    def test_size_mismatch_fails(self):
        a = Archive()
        ping(a, 10, 0, 1, size=4)
        pong(a, 20, 1, 0, size=8)
        self.assertViolation(self.run_check(a), "sent 4 bytes")

    def test_tag_mismatch_fails(self):
        a = Archive()
        ping(a, 10, 0, 1, tag=1)
        pong(a, 20, 1, 0, tag=2)
        report = self.run_check(a)
        self.assertViolation(report, "unmatched send")
        self.assertViolation(report, "unmatched receive")

    def test_non_overtaking_order(self):
        # Two messages on one channel with sizes 4 then 8, received as 8 then 4: out of order.
        a = Archive()
        ping(a, 10, 0, 1, size=4)
        ping(a, 20, 0, 1, size=8)
        pong(a, 30, 1, 0, size=8)
        pong(a, 40, 1, 0, size=4)
        self.assertViolation(self.run_check(a), "sent 4 bytes")

    def test_derived_comm_resolves_world_ranks(self):
        # A 3-rank job; the derived communicator holds world ranks 2 and 0 (in that rank order).
        a = Archive(ranks=3)
        a.extra_comm = ("reversed", [2, 0])
        ping(a, 10, 2, 1, comm="@extra")  # world 2 sends to comm rank 1 = world 0
        pong(a, 20, 0, 0, comm="@extra")  # world 0 receives from comm rank 0 = world 2
        report = self.run_check(a, expect_messages=1)
        self.assertTrue(report.ok, report.violations)
        self.assertEqual(report.comms["reversed"], [2, 0])
        self.assertEqual(report.messages[0]["sender"], 2)
        self.assertEqual(report.messages[0]["receiver"], 0)

    def test_intercomm_ranks_are_remote(self):
        # Group A = world {0, 2}, group B = world {1}: rank 0 in an intercomm message means the
        # remote group's rank 0. Needs the InterComm binding fix in trace_check.
        a = Archive(ranks=3)
        a.inter_comm = ("inter", [0, 2], [1])
        ping(a, 10, 2, 0, tag=9, comm="@inter")  # world 2 (group A) -> remote rank 0 = world 1
        pong(a, 20, 1, 1, tag=9, comm="@inter")  # world 1 (group B) <- remote rank 1 = world 2
        report = self.run_check(a, expect_messages=1)
        self.assertTrue(report.ok, report.violations)
        self.assertEqual(report.comms["inter"], {"local": [0, 2], "remote": [1]})
        self.assertEqual((report.messages[0]["sender"], report.messages[0]["receiver"]), (2, 1))

    def test_rank_outside_comm_fails(self):
        a = Archive(ranks=3)
        a.extra_comm = ("pair", [0, 1])
        ping(a, 10, 0, 2, comm="@extra")
        self.assertViolation(self.run_check(a), "outside pair")

    def test_unbalanced_enter_leave_fails(self):
        a = self.good()
        a.add(0, "enter", 500, "REGION")
        self.assertViolation(self.run_check(a), "ends with open regions")
        b = self.good()
        b.add(1, "leave", 500, "REGION")
        self.assertViolation(self.run_check(b), "without Enter")

    def test_collective_count_disagreement_fails(self):
        a = self.good()
        a.add(0, "enter", 200, "REGION").add(0, "mpi_collective_begin", 201)
        a.add(0, "mpi_collective_end", 202, CollectiveOp.BARRIER, "@world", otf2.Undefined.UINT32, 0, 0)
        a.add(0, "leave", 203, "REGION")
        self.assertViolation(self.run_check(a), "members disagree")

    def test_unpaired_requests_fail(self):
        a = self.good()
        a.add(1, "mpi_isend", 200, 0, "@world", 1, 4, 77)  # never completed (and never received)
        report = self.run_check(a)
        self.assertViolation(report, "request 77 opened")
        b = self.good()
        b.add(0, "mpi_isend_complete", 300, 1234)
        self.assertViolation(self.run_check(b), "unknown request 1234")

    def test_one_sided_covers_a_stopped_recording_only(self):
        # A rank stops recording while it sends, receives, collects and has a request open: all
        # one-sided; nesting stays a violation one_sided does not excuse.
        a = self.good()
        ping(a, 200, 0, 1, tag=11)
        pong(a, 210, 1, 0, tag=12)
        a.add(0, "enter", 220, "REGION").add(0, "mpi_collective_begin", 221)
        a.add(0, "mpi_collective_end", 222, CollectiveOp.BARRIER, "@world", otf2.Undefined.UINT32, 0, 0)
        a.add(0, "leave", 223, "REGION")
        a.add(1, "mpi_isend", 230, 0, "@world", 1, 4, 77)
        report = self.run_check(a)
        self.assertGreaterEqual(len(report.violations), 4, report.violations)
        self.assertTrue(all(trace_check.one_sided(v) for v in report.violations), report.violations)
        for other in ("location 0 ends with open regions: ['REGION']",
                      "Leave REGION without Enter at rank 1", "time goes backwards on Master"):
            self.assertFalse(trace_check.one_sided(other), other)

    def test_cancelled_receive_is_complete(self):
        a = self.good()
        a.add(1, "mpi_irecv_request", 200, 50).add(1, "mpi_request_cancelled", 210, 50)
        report = self.run_check(a)
        self.assertTrue(report.ok, report.violations)

    def test_mpi_region_names(self):
        a = self.good()
        a.region_name = "send"
        self.assertViolation(self.run_check(a), "MPI region named 'send'")

    def test_master_location_ids(self):
        a = self.good()
        a.swap_location_ids = True
        self.assertViolation(self.run_check(a), "master location of world rank 0 has id 1")

    def test_time_going_backwards_fails(self):
        # The OTF2 writer refuses a decreasing timestamp, so write increasing ones and then corrupt
        # the event file: OTF2 stores each timestamp as 8 raw little-endian bytes.
        later, earlier = 0x0ABCDEF1234567, 0x0ABCDEF1230000
        a = self.good()
        a.add(0, "enter", later - 16, "REGION").add(0, "leave", later, "REGION")
        path = a.write(self.tmp.name)
        event_file = os.path.join(path, "traces", "0.evt")
        with open(event_file, "rb") as f:
            data = f.read()
        needle = later.to_bytes(8, "little")
        self.assertEqual(data.count(needle), 1, "timestamp not found once in the event file")
        with open(event_file, "wb") as f:
            f.write(data.replace(needle, earlier.to_bytes(8, "little")))
        self.assertViolation(trace_check.check(path), "time goes backwards")

    def test_event_inside_a_buffer_flush_fails(self):
        a = self.good()
        a.add(0, "buffer_flush", 200, 250).add(0, "enter", 250, "REGION").add(0, "leave", 260, "REGION")
        self.assertEqual(self.run_check(a).violations, [])
        b = self.good()
        b.add(0, "buffer_flush", 200, 250).add(0, "enter", 240, "REGION").add(0, "leave", 260, "REGION")
        self.assertViolation(self.run_check(b), "before the end of the BufferFlush")

    def test_unreadable_archive_fails(self):
        report = trace_check.check(self.tmp.name)
        self.assertFalse(report.ok)
        self.assertEqual(trace_check.main([os.path.join(self.tmp.name, "missing"), "--quiet"]), 1)


if __name__ == "__main__":
    unittest.main()
