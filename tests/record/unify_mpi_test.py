"""The definition tree at 5 ranks (not a power of two): unify_mpi's communicators, read back with
python3-otf2 (independent of libhtrace), must be the ones the program used, one definition per
communicator, and two runs must give the same global definitions.

usage: unify_mpi_test.py PROGRAM   (environment from ctest: HTRACE_LIB, MPIRUN)"""
import os
import shutil
import subprocess
import sys
import tempfile

import otf2
from otf2.definitions import InterComm

import htrace_test.archive  # noqa: F401  (fixes python3-otf2's InterComm binding when imported)
from htrace_test.check import fail
from htrace_test.mpi import mpirun_command
from htrace_test.rank_output import RankOutput

NP = 5
OPS = {"BARRIER": otf2.CollectiveOp.BARRIER, "ALLREDUCE": otf2.CollectiveOp.ALLREDUCE}



def run(program, workdir):
    archive_dir = os.path.join(workdir, "archives")
    os.makedirs(archive_dir)
    output = RankOutput(os.path.join(workdir, "output"))
    command = mpirun_command(NP, [program], forward=["HTRACE_ARCHIVE_DIR=" + archive_dir],
                             preload=os.environ["HTRACE_LIB"], output=output)
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        fail(f"exit code {done.returncode}\n{output.describe()}{done.stdout}\n{done.stderr}")
    archives = [os.path.join(archive_dir, d) for d in os.listdir(archive_dir)]
    if len(archives) != 1:
        fail(f"expected one archive, found {archives}\n{output.describe()}")
    calls = {}  # rank -> [(label, op, local, remote)]
    for line in output.stdout().splitlines():
        words = line.split()
        if not words or words[0] != "call":
            continue
        rank, seq, label, op = int(words[1]), int(words[2]), words[3], words[4]
        lists = dict(w.split("=", 1) for w in words[5:])
        parse = lambda key: [int(r) for r in lists[key].split(",")] if key in lists else None
        calls.setdefault(rank, []).append((seq, label, op, parse("local"), parse("remote")))
    if sorted(calls) != list(range(NP)):
        fail(f"program output of ranks {sorted(calls)}:\n{output.describe()}")
    return os.path.join(archives[0], "traces.otf2"), calls


def world_rank(location):
    return location._ref & 0xFFFFFFFF  # thread k of rank r has id (k << 32) | r


def members(group):
    return [world_rank(m) for m in group.members]


def read(anchor):
    """Per rank, the barrier/allreduce events in order: (op, comm definition)."""
    events = {}
    with otf2.reader.open(anchor) as trace:
        for location, event in trace.events:
            if isinstance(event, otf2.events.MpiCollectiveEnd) and event.collective_op in OPS.values():
                events.setdefault(world_rank(location), []).append((event.collective_op,
                                                                    event.communicator))
        defs = trace.definitions
        signature = (
            [(r.name, str(r.region_role), str(r.paradigm)) for r in defs.regions],
            [(c.name, members(c.groupA), members(c.groupB)) if isinstance(c, InterComm)
             else (c.name, members(c.group), c.parent._ref if c.parent else None)
             for c in defs.comms],
            [(g.name, str(g.group_type), [m._ref for m in g.members]) for g in defs.groups])
        names = [(c.name, c._ref) for c in defs.comms]
    return events, signature, names


def check(anchor, calls):
    events, signature, comms = read(anchor)
    refs = {}  # label -> {rank: comm ref}
    for rank in range(NP):
        got = events.get(rank, [])
        if len(got) != len(calls[rank]):
            fail(f"rank {rank}: {len(got)} barrier/allreduce events, the program made {len(calls[rank])}")
        for (seq, label, op, local, remote), (event_op, comm) in zip(calls[rank], got):
            if event_op != OPS[op]:
                fail(f"rank {rank} call {seq} ({label}): {event_op} in the trace, {op} in the program")
            if remote is None:
                if isinstance(comm, InterComm) or members(comm.group) != local:
                    fail(f"rank {rank} call {seq} ({label}): communicator '{comm.name}' in the trace "
                         f"has members {members(comm.group)}, the program's has {local}")
            else:
                sides = sorted([members(comm.groupA), members(comm.groupB)]) \
                    if isinstance(comm, InterComm) else None
                if sides != sorted([local, remote]):
                    fail(f"rank {rank} call {seq} ({label}): intercommunicator groups {sides}, "
                         f"the program's {local} / {remote}")
            refs.setdefault(label, {})[rank] = comm._ref
    # Identity: one definition per communicator, shared by all its members, and distinct
    # communicators with the same members (duplicates) stay distinct.
    def one(label, ranks):
        found = {refs[label][r] for r in ranks}
        if len(found) != 1:
            fail(f"{label}: ranks {ranks} use {len(found)} definitions {found}, expected one")
        return found.pop()
    even, odd = list(range(0, NP, 2)), list(range(1, NP, 2))
    ids = [one("world", range(NP)), one("dup_a", range(NP)), one("dup_b", range(NP)),
           one("parity", even), one("parity", odd), one("low", [0, 1]), one("inter", range(NP)),
           one("parity_dup", even), one("parity_dup", odd)]
    if len(set(ids)) != len(ids):
        fail(f"distinct communicators share a definition: {ids}")
    # world, 5 x self, dup_a, dup_b, 2 x parity, low, inter, 2 x parity_dup
    if len(comms) != 14:
        fail(f"{len(comms)} communicator definitions, expected 14: {comms}")
    return signature


def main():
    program = sys.argv[1]
    workdir = tempfile.mkdtemp(prefix="htrace-unify-mpi-")
    signatures = []
    for attempt in range(2):
        anchor, calls = run(program, os.path.join(workdir, str(attempt)))
        signatures.append(check(anchor, calls))
    if signatures[0] != signatures[1]:
        for part, (a, b) in enumerate(zip(*signatures)):
            if a != b:
                fail(f"two runs gave different global definitions (part {part}):\n{a}\n{b}")
    shutil.rmtree(workdir, ignore_errors=True)
    print("PASS")


if __name__ == "__main__":
    main()
