"""The oracle of a salvaged archive of fail_app (tests/salvage/fail_app.c): its barriers against
the counts the program kept in mapped files, which survive any death. Used by tests/salvage and
tests/slurm (a job past its time limit).

  counts(count_dir, rank)   the program's own figures for one rank
  located_events(anchor)    {location id: [(record kind, region name or None, time)]}
  check_location(...)       one rank's salvaged events against its figures and how it ended"""
import os
import struct

import otf2

from htrace_test.check import require

MARKER = "htrace: trace cut off ("
# What a SIGKILLed rank may lose is what it still held in memory: its record buffer
# (HTRACE_BUFFER_SIZE=64k, 48-byte records) and the one 256 KiB chunk of its event file not yet
# written, >= 6 bytes per encoded record, in barriers of 4 records. Everything the file holds must
# be a prefix of what the program did.
KILL_LOSS_BARRIERS = (64 * 1024 // 48 + (256 << 10) // 6) // 4 + 1


def counts(count_dir, rank):
    """[barriers entered, barriers returned, pid, puts, file writes, fences entered, fences
    returned] as the program left them (fail_app.c)."""
    with open(os.path.join(count_dir, str(rank)), "rb") as f:
        return struct.unpack("<7Q", f.read(56))


def located_events(anchor):
    """Per location id, its events in file order as (kind, region name or None, time)."""
    events = {}
    with otf2.reader.open(anchor) as r:
        for loc, ev in r.events:
            region = getattr(ev, "region", None)
            events.setdefault(loc._ref, []).append(
                (type(ev).__name__, region.name if region is not None else None, ev.time))
    return events


def check_location(evs, expect_cause, entered, returned, exact, rank, may_be_empty=False,
                   one_missing=False):
    """The salvaged events of a master location against the program's own counts. `one_missing`:
    the tracer said the signal waited for the thread's own buffer conversion and the event it was
    recording then is missing (a barrier's Enter, or its Leave)."""
    barrier_enters = sum(1 for k, n, _ in evs if k == "Enter" and n == "MPI_Barrier")
    barrier_leaves = sum(1 for k, n, _ in evs if k == "Leave" and n == "MPI_Barrier")
    times = [t for _, _, t in evs]
    require(times == sorted(times), "rank %d: timestamps decrease" % rank)
    markers = [(k, n, t) for k, n, t in evs if n and n.startswith(MARKER)]
    if expect_cause is None:
        require(not markers, "rank %d finished but has a cut-off marker" % rank)
        require(barrier_enters == entered and barrier_leaves == returned,
                "rank %d: %d/%d barriers in the archive, the program made %d/%d" %
                (rank, barrier_enters, barrier_leaves, entered, returned))
        return barrier_enters
    if not evs and may_be_empty:
        return 0  # nothing reached the disk: no time to place a marker at
    require(len(markers) == 2, "rank %d: expected one cut-off marker, got %s" % (rank, markers))
    name = markers[0][1]
    require(name == MARKER + expect_cause + ")", "rank %d: marker '%s', expected cause '%s'" %
            (rank, name, expect_cause))
    # The marker sits at the last recorded time; only Leaves of open regions follow it.
    i = evs.index(markers[0])
    tail = evs[i + 2:]
    require(all(k == "Leave" for k, _, _ in tail), "rank %d: events after the marker: %s" %
            (rank, tail[:3]))
    require(all(t == markers[0][2] for _, _, t in evs[i:]), "rank %d: closing at other times" % rank)
    require(markers[0][2] == max(times), "rank %d: marker not at the last recorded time" % rank)
    closing = sum(1 for _, n, _ in tail if n == "MPI_Barrier")
    if exact:
        # Everything the rank did reached the archive (it flushed at its end). A signal that lands
        # after the program counted a barrier but before the tracer's Enter record was complete
        # (some 20 ns of each call) leaves that barrier unrecorded and no region open: the order
        # of the two is not observable, so that one case is allowed, and said.
        in_window = (barrier_enters == entered - 1 and entered == returned + 1 and closing == 0)
        if in_window:
            print("rank %d: the signal landed between the program's count and the Enter record"
                  % rank)
        require(barrier_enters == entered or in_window or
                (one_missing and barrier_enters == entered - 1),
                "rank %d: %d barriers entered in the archive, the program entered %d" %
                (rank, barrier_enters, entered))
        # The mirror image: a signal that lands after the tracer's Leave record but before the
        # program counted the return (the few ns from the wrapper's return to the count).
        leave_window = (barrier_leaves == returned + 1 and entered == returned + 1 and
                        barrier_enters == entered and closing == 0)
        if leave_window:
            print("rank %d: the signal landed between the Leave record and the program's count"
                  % rank)
        require(barrier_leaves - closing == returned or leave_window, "rank %d: %d barriers "
                "returned in the archive, the program %d" % (rank, barrier_leaves - closing,
                                                             returned))
    elif may_be_empty:
        require(barrier_enters <= entered, "rank %d: %d barriers in the archive, the program "
                "entered %d" % (rank, barrier_enters, entered))
    else:
        # SIGKILL: what reached the file is a prefix; at most memory's worth is missing.
        require(barrier_enters <= entered and entered - barrier_enters <= KILL_LOSS_BARRIERS,
                "rank %d: %d barriers in the archive, the program entered %d (at most %d may be "
                "lost)" % (rank, barrier_enters, entered, KILL_LOSS_BARRIERS))
        require(len(evs) > 1 or may_be_empty, "rank %d: nothing salvaged" % rank)
    return barrier_enters
