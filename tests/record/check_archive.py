#!/usr/bin/python3
"""Reads an archive written by record_writer with the independent python3-otf2 reader.

usage: check_archive.py full ARCHIVE_DIR WRITER_STDOUT   every check of the 'write' sequence
       check_archive.py readable ARCHIVE_DIR             opens it and checks time order only
       check_archive.py volume ARCHIVE_DIR PAIRS STDOUT  'volume' run: exact counts, OTF2 flushes
       check_archive.py race ARCHIVE_DIR                 'emergency-race' run, salvaged: each
                                                         worker's MpiSends numbered 0, 1, 2, ...
"""
import collections
import os
import re
import subprocess
import sys
import time

import otf2
from otf2.events import (BufferFlush, Enter, Leave, MpiCollectiveEnd, MpiIrecv, MpiIsend, MpiRecv,
                         MpiSend, ThreadTeamBegin)

# Must match record_writer.cpp.
PRE_START_PAIRS, ITERATIONS, WORKER_PAIRS, EARLY_PAIRS = 150, 200, 300, 5
MAIN_COUNTS = {
    'Enter': PRE_START_PAIRS + 4 * ITERATIONS + 1, 'Leave': PRE_START_PAIRS + 4 * ITERATIONS + 1,
    'MpiSend': ITERATIONS, 'MpiRecv': ITERATIONS, 'MpiCollectiveBegin': ITERATIONS,
    'MpiCollectiveEnd': ITERATIONS, 'MpiIsend': 1, 'MpiIsendComplete': 1, 'MpiIrecvRequest': 2,
    'MpiIrecv': 1, 'MpiRequestTest': 1, 'MpiRequestCancelled': 1,
    'NonBlockingCollectiveRequest': 1, 'NonBlockingCollectiveComplete': 1, 'ThreadFork': 1,
    'ThreadJoin': 1, 'ThreadTeamBegin': 2, 'ThreadTeamEnd': 2, 'ThreadTaskCreate': 1,
}
WORKER_COUNTS = {
    'Enter': WORKER_PAIRS, 'Leave': WORKER_PAIRS, 'ThreadAcquireLock': 1, 'ThreadReleaseLock': 1,
    'ThreadTaskSwitch': 1, 'ThreadTaskComplete': 1, 'ThreadTeamBegin': 1, 'ThreadTeamEnd': 1,
}
EARLY_COUNTS = {'Enter': EARLY_PAIRS, 'Leave': EARLY_PAIRS}
RANKS = 2

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def members(group):
    return [getattr(m, '_ref', m) for m in group.members]


def read(path):
    per_location = collections.defaultdict(list)
    with otf2.reader.open(path + '/traces.otf2') as trace:
        defs = trace.definitions
        for location, event in trace.events:
            per_location[location._ref].append(event)
    return defs, per_location


def check_time_order(per_location):
    for loc, events in per_location.items():
        times = [e.time for e in events]
        check(all(a <= b for a, b in zip(times, times[1:])), f'location {loc}: timestamps decrease')


def check_full(path, writer_stdout):
    defs, per_location = read(path)
    check_time_order(per_location)
    # Thread 1 recorded before the main thread's first event but before start(); the worker
    # started after start() is thread 2.
    early = lambda r: (1 << 32) | r
    worker = lambda r: (2 << 32) | r
    expected_ids = {f(r) for r in range(RANKS) for f in (lambda r: r, early, worker)}
    check({l._ref for l in defs.locations} == expected_ids,
          f'location ids {[l._ref for l in defs.locations]} != {sorted(expected_ids)}')
    for loc in defs.locations:
        check(loc.group.name == f'MPI Rank {loc._ref & 0xffffffff}', f'{loc._ref}: group {loc.group.name}')
        check(loc.number_of_events == len(per_location[loc._ref]),
              f'{loc._ref}: number_of_events {loc.number_of_events} != {len(per_location[loc._ref])}')

    for rank in range(RANKS):
        for loc, expected in ((rank, MAIN_COUNTS), (worker(rank), WORKER_COUNTS),
                              (early(rank), EARLY_COUNTS)):
            counts = collections.Counter(type(e).__name__ for e in per_location[loc])
            flushes = counts.pop('BufferFlush', 0)
            check(dict(counts) == expected, f'location {loc}: counts {dict(counts)} != {expected}')
            # A 4 KiB buffer holds 85 records: every location flushed several times (buffers
            # filled before start() are kept and written later, without a flush mark).
            after_start = sum(expected.values()) - (2 * PRE_START_PAIRS if loc == rank else 0)
            check(flushes >= after_start // 85 - 1 - (loc == early(rank)), f'location {loc}: {flushes} flushes')
            for e in per_location[loc]:
                if isinstance(e, BufferFlush):
                    check(e.stop_time >= e.time, f'location {loc}: flush stops before it starts')

    # Regions: same names on both ranks although registered in opposite order.
    for rank in range(RANKS):
        events = per_location[rank]
        for i, e in enumerate(events):
            if isinstance(e, (MpiSend, MpiRecv)):
                prev = [x for x in events[max(0, i - 3):i] if isinstance(x, Enter)][-1]
                want = 'MPI_Send' if isinstance(e, MpiSend) else 'MPI_Recv'
                check(prev.region.name == want, f'rank {rank}: {type(e).__name__} inside {prev.region.name}')
                check(prev.region.paradigm == otf2.Paradigm.MPI and prev.region.source_file == 'MPI',
                      f'{want}: paradigm/source file wrong')
        first = events[0]
        check(isinstance(first, Enter) and first.region.name == 'compute', f'rank {rank}: first event {first}')

    # Communicators: sends go over 'reversed' (world ranks [1, 0]) to the other rank.
    for rank in range(RANKS):
        peer = (rank + 1) % RANKS
        for e in per_location[rank]:
            if isinstance(e, (MpiSend, MpiIsend)):
                comm = e.communicator
                check(comm.name == 'reversed', f'send on {comm.name}')
                check(members(comm.group) == [1, 0], f'reversed members {members(comm.group)}')
                check(members(comm.group)[e.receiver] == peer, f'rank {rank}: receiver {e.receiver}')
                check(comm.parent is not None and comm.parent.name == 'dup of world', 'reversed parent')
            if isinstance(e, (MpiRecv, MpiIrecv)):
                check(members(e.communicator.group)[e.sender] == peer, f'rank {rank}: sender {e.sender}')
            if isinstance(e, MpiCollectiveEnd):
                check(e.communicator.name == 'MPI_COMM_WORLD' and members(e.communicator.group) == [0, 1],
                      'collective not on MPI_COMM_WORLD [0,1]')
            if isinstance(e, ThreadTeamBegin):
                check(members(e.thread_team.group) == [rank, worker(rank)],
                      f'team members {members(e.thread_team.group)}')
                check(e.thread_team.group.paradigm == otf2.Paradigm.OPENMP, 'team paradigm')
    comms = collections.Counter(c.name for c in defs.comms)
    check(comms['MPI_COMM_WORLD'] == 1 and comms['dup of world'] == 1 and comms['reversed'] == 1,
          f'identical comms not unified: {dict(comms)}')
    check(comms['MPI_COMM_SELF'] == RANKS, f'MPI_COMM_SELF per rank: {dict(comms)}')
    check(comms['OpenMP team'] == RANKS, f'identical teams of a process not merged: {dict(comms)}')
    locs = [g for g in defs.groups if g.group_type == otf2.GroupType.COMM_LOCATIONS]
    mpi_locs = [g for g in locs if g.paradigm == otf2.Paradigm.MPI]
    check(len(mpi_locs) == 1 and members(mpi_locs[0]) == list(range(RANKS)), 'MPI COMM_LOCATIONS group')

    # Clock properties: ns resolution, covering every event, real start date close to now.
    cp = defs.clock_properties
    all_times = [e.time for events in per_location.values() for e in events]
    check(cp.timer_resolution == 10**9, f'timer resolution {cp.timer_resolution}')
    check(cp.global_offset <= min(all_times), 'global offset later than the first event')
    check(cp.global_offset + cp.trace_length >= max(all_times), 'trace length too short')
    age = time.time() - cp.realtime_timestamp / 1e9
    check(0 <= age < 600, f'realtime start date is {age:.1f} s from now')

    # Properties set through the recorder API.
    props = collections.defaultdict(dict)
    for p in defs.location_properties:
        props[p.location._ref][p.name] = p.value
    for loc in expected_ids:
        check(props[loc].get('HTRACE::CLOCK::INIT_OFFSET') == 1000 * (loc & 0xffffffff),
              f'location {loc}: properties {props[loc]}')
    info = subprocess.run(['otf2-print', '--show-info', path + '/traces.otf2'], capture_output=True,
                          text=True)
    check(re.search(r'Property name\s+HTRACE::CLOCK::TIMEBASE\s*\nProperty value\s+global', info.stdout),
          'archive property HTRACE::CLOCK::TIMEBASE missing')
    full = subprocess.run(['otf2-print', path + '/traces.otf2'], capture_output=True, text=True)
    check(full.returncode == 0 and 'error' not in (full.stderr + full.stdout).lower(),
          'otf2-print reports errors: ' + full.stderr[:300])

    # The writer's own summary: the deliberate clamp per rank (at least 100 us back), nothing
    # dropped. Stamps converted to global time may also step back by a few ns between threads
    # (rounding, or TSCs of two cores; 1-10 ns seen, 0-2 per run), which are clamped too; a
    # converter that went backwards for real would clamp far more of the 3,300 events.
    out = open(writer_stdout).read()
    for rank in range(RANKS):
        m = re.search(rf'RANK {rank} .*clamped=(\d+) dropped=(\d+) largest_clamp_ns=(\d+)', out)
        check(m and 1 <= int(m.group(1)) <= 5 and m.group(2) == '0' and int(m.group(3)) >= 100000,
              f'rank {rank} summary: {m and m.group(0)}')
    m = re.search(r'SUMMARY events_written=(\d+) bytes=(\d+) dropped=0', out)
    check(m and int(m.group(1)) == len(all_times), f'summary event count: {m and m.group(0)}')
    if m:
        print(f'{len(all_times)} events, {int(m.group(2)) / len(all_times):.1f} bytes/event')


def check_race(path):
    """The worker threads' records, written by another thread's emergency flush while they went
    on recording, are whole and in order: no slot was written out before it was filled."""
    _, per_location = read(path)
    workers = [loc for loc, events in per_location.items()
               if loc >> 32 != 0 and any(isinstance(e, MpiSend) for e in events)]
    check(len(workers) >= 1, f'no worker location among {sorted(per_location)}')
    for loc in workers:
        sends = [e for e in per_location[loc] if isinstance(e, MpiSend)]
        numbers = [e.msg_tag for e in sends]
        check(len(sends) >= 100000, f'location {loc}: only {len(sends)} sends written')
        check(numbers == list(range(len(numbers))),
              f'location {loc}: sends not numbered 0..{len(numbers) - 1}: first break at '
              f'{next((i for i, n in enumerate(numbers) if n != i), None)}')
        check(all(e.msg_length == e.msg_tag for e in sends),
              f'location {loc}: a send whose fields belong to different records')
        print(f'location {loc}: {len(sends)} sends, whole and in order')


def check_volume_ahead(path, pairs_written, writer_stdout):
    """Conversions ahead (Location::convert_while_waiting) inside every Enter/Leave pair: every
    pair is in the file in order, and each BufferFlush record marks a write of a full 256 KiB
    chunk: as many as the event file has full chunks, each between the Enter of the conversion's
    pair (same time) and its Leave (not before the flush ended)."""
    defs, per_location = read(path)
    check_time_order(per_location)
    pairs = pairs_written + PRE_START_PAIRS
    ours = {int(r): int(f) for r, f in re.findall(r'RANK (\d+) .*flushes=(\d+)', open(writer_stdout).read())}
    for loc in [l for l in defs.locations if l._ref < (1 << 32)]:  # master threads
        events = per_location[loc._ref]
        calls = [e for e in events if not isinstance(e, BufferFlush)]
        check(len(calls) == 2 * pairs and all(isinstance(e, Enter if i % 2 == 0 else Leave)
                                               for i, e in enumerate(calls)),
              f'{loc._ref}: not {pairs} Enter/Leave pairs in order')
        size = os.path.getsize(f'{path}/traces/{loc._ref}.evt')
        chunks, tail = divmod(size - 1, 256 << 10)
        marks = [i for i, e in enumerate(events) if isinstance(e, BufferFlush)]
        # The last conversion runs in finalize, outside any call: a chunk it fills has no mark, and
        # the part after it holds only that conversion's records (under 32: a few hundred bytes).
        unmarked = chunks - len(marks)
        check(chunks >= 5 and len(marks) == ours.get(loc._ref, -1)
              and (unmarked == 0 or (unmarked == 1 and tail < 1024)),
              f'{loc._ref}: {len(marks)} BufferFlush records, {chunks} full chunks '
              f'({tail} bytes after them), summary {ours}')
        for i in marks:
            before, mark, after = events[i - 1], events[i], events[i + 1]
            check(isinstance(before, Enter) and isinstance(after, Leave) and before.time == mark.time
                  and mark.time <= mark.stop_time <= after.time,
                  f'{loc._ref}: BufferFlush {mark.time}..{mark.stop_time} between '
                  f'{type(before).__name__} {before.time} and {type(after).__name__} {after.time}')
    print(f'{path}: conversions ahead checked')


def main():
    mode, path = sys.argv[1], sys.argv[2]
    if mode == 'full':
        check_full(path, sys.argv[3])
    elif mode == 'race':
        check_race(path)
    elif mode == 'volume-ahead':
        check_volume_ahead(path, int(sys.argv[3]), sys.argv[4])
    elif mode == 'volume':
        defs, per_location = read(path)
        check_time_order(per_location)
        pairs = int(sys.argv[3]) + PRE_START_PAIRS
        ours = {int(r): int(f) for r, f in re.findall(r'RANK (\d+) .*flushes=(\d+)', open(sys.argv[4]).read())}
        for loc in [l for l in defs.locations if l._ref < (1 << 32)]:  # master threads
            events = per_location[loc._ref]
            counts = collections.Counter(type(e).__name__ for e in events)
            check(counts['Enter'] == pairs and counts['Leave'] == pairs, f'{loc._ref}: {dict(counts)}')
            check(loc.number_of_events == len(events), f'{loc._ref}: number_of_events mismatch')
            # One per full 64 KiB buffer, each in the file: the recorder writes the event file
            # itself, in 256 KiB chunks, and no other flush record appears.
            check(ours.get(loc._ref, 0) >= (2 * pairs - 3 * 1365) // 1365, f'{loc._ref}: {ours}')
            check(counts['BufferFlush'] == ours.get(loc._ref, 0), f'{loc._ref}: flushes {counts} vs {ours}')
    else:
        defs, per_location = read(path)
        check_time_order(per_location)
        check(sum(len(e) for e in per_location.values()) > 0, 'archive has no events')
    for f in failures[:20]:
        print('FAIL:', f)
    if failures:
        print(f'{len(failures)} check(s) failed for {path}')
        return 1
    print(f'{path}: all checks passed')
    return 0


if __name__ == '__main__':
    sys.exit(main())
