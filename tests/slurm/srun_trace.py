#!/usr/bin/python3
"""A job started by srun is traced as one started by mpirun: pingpong-ring on 4 ranks under a
private Slurm cluster (slurm_cluster.py), untraced and traced.

usage: srun_trace.py MPI_PLUGIN PROGRAM HTRACE_CORRECT
MPI_PLUGIN: srun's --mpi (pmix for Open MPI, pmi2 for MPICH). PROGRAM: pingpong-ring, built
against the MPI that HTRACE_LIB wraps. Environment (ctest): HTRACE_LIB, MPIRUN (the reference run).

Asserts: the traced job's exit status and result line equal the untraced one's; the archive is
clean for the independent checker (trace_check: every send matched, one location per rank with
id = rank, ...), holds the messages the program says it sent and every rank; otf2-print reads it;
htrace-correct leaves 0 clock-condition violations; and per rank it holds the same events as the
archive of the same program under mpirun, but for polling calls, whose number depends on timing.
The result lines are read from the files the ranks write (htrace_test.rank_output), not from what
srun forwards.
"""
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

from htrace_test import harness
from htrace_test.archive import Topology, archive_properties, events_by_location
from htrace_test.check import TestFailure, require
from htrace_test.harness import check_clean
from htrace_test.rank_output import RankOutput

import slurm_cluster
from slurm_launch import srun_command

# MPICH's ranks busy-poll and cannot be told the node is oversubscribed: 4 of them on 2 cores
# record over a million MPI_Test calls, which the Python reader takes 40 s for. 2 ranks fit.
NP = 2 if sys.argv[1:2] == ["pmi2"] else 4
ITERATIONS = "2"
# Calls that poll until something completes: how often they run depends on timing.
POLLING = {"MPI_Test", "MPI_Testany", "MPI_Testsome", "MPI_Testall", "MPI_Waitsome", "MPI_Iprobe",
           "MPI_Improbe"}


def structure(path):
    """Per world rank, a Counter of (record kind, region name for Enter/Leave) without polling
    calls and BufferFlush records (written when a buffer fills: the same timing dependence);
    the communicators as world-rank lists; the archive property names."""
    defs, per_location = events_by_location(path)
    topology = Topology(defs)
    ranks = {}
    for location, events in per_location.items():
        counted = ranks.setdefault(topology.world_rank[location._ref], collections.Counter())
        for event in events:
            kind = type(event).__name__
            region = getattr(event, "region", None)
            name = region.name if region is not None and kind in ("Enter", "Leave") else None
            if kind != "BufferFlush" and name not in POLLING:
                counted[(kind, name)] += 1
    comms = sorted(str(m) for m in topology.members.values())
    return ranks, comms, sorted(archive_properties(path))


def compare_structure(srun_archive, mpirun_archive):
    a_ranks, a_comms, a_props = structure(srun_archive)
    b_ranks, b_comms, b_props = structure(mpirun_archive)
    require(sorted(a_ranks) == sorted(b_ranks) == list(range(NP)),
            f"ranks: srun {sorted(a_ranks)}, mpirun {sorted(b_ranks)}")
    for rank in range(NP):
        a, b = a_ranks[rank], b_ranks[rank]
        differ = {k: (a[k], b[k]) for k in set(a) | set(b) if a[k] != b[k]}
        require(not differ, f"rank {rank}: (kind, region): (srun, mpirun) counts differ: {differ}")
    require(a_comms == b_comms, f"communicators: srun {a_comms}, mpirun {b_comms}")
    require(a_props == b_props, f"archive properties: srun {a_props}, mpirun {b_props}")
    total = sum(sum(c.values()) for c in a_ranks.values())
    print(f"srun and mpirun archives: the same {total} non-polling events per rank and kind, "
          f"{len(a_comms)} communicators, {len(a_props)} archive properties")


def check_archive(archive, result, correct, work):
    report = check_clean(archive, expect_locations=NP, expect_processes=NP)
    sent = int(result.split("messages=")[1].split()[0])
    require(len(report.messages) == sent,
            f"{len(report.messages)} messages in the trace, the program sent {sent}")
    require(report.location_ids == {r: [r] for r in range(NP)},
            f"expected location id r for each rank r < {NP}: {report.location_ids}")
    require(report.comms.get("MPI_COMM_WORLD") == list(range(NP)), f"world: {report.comms}")
    print(f"archive clean: {report.events} events, {len(report.messages)} messages matched, "
          f"{report.locations} locations")
    printed = subprocess.run(["otf2-print", os.path.join(archive, "traces.otf2")],
                             capture_output=True, text=True)
    require(printed.returncode == 0 and "error" not in printed.stderr.lower(),
            f"otf2-print: exit {printed.returncode}: {printed.stderr[:2000]}")
    corrected = os.path.join(work, "corrected")
    c = subprocess.run([correct, "--json", archive, corrected], capture_output=True, text=True)
    require(c.returncode == 0, f"htrace-correct exit {c.returncode}: {c.stderr}")
    after = json.loads(c.stdout)["violations_after"]
    require(all(v == 0 for v in after.values()), f"violations after correction: {after}")
    print(f"htrace-correct: violations before {json.loads(c.stdout)['violations_before']}, "
          f"after {after}")


def test(plugin, program, correct, work):
    reference = harness.mpirun(program, [ITERATIONS], np=NP)
    require(reference.returncode == 0 and " OK" in reference.output.stdout(),
            f"the mpirun reference run failed:\n{reference.describe()}")
    check_clean(reference.archive(), expect_locations=NP, expect_processes=NP)
    archive_dir = os.path.join(work, "archives")
    os.mkdir(archive_dir)
    plain_output = RankOutput(os.path.join(work, "output-untraced"))
    traced_output = RankOutput(os.path.join(work, "output-traced"))
    with slurm_cluster.SlurmCluster() as cluster:
        try:
            plain, plain_s = cluster.run(
                srun_command(plugin, NP, plain_output.program([program, ITERATIONS])))
            traced, traced_s = cluster.run(
                srun_command(plugin, NP, traced_output.program([program, ITERATIONS]),
                             preload=os.environ["HTRACE_LIB"]),
                env={"HTRACE_ARCHIVE_DIR": archive_dir, "HTRACE_ARCHIVE_NAME": "srun",
                     "HTRACE_LOG_FILE": traced_output.log_file})
        except TestFailure:
            cluster.keep = True
            raise
    print(f"srun untraced: exit {plain.returncode} in {plain_s:.1f} s; traced: exit "
          f"{traced.returncode} in {traced_s:.1f} s")
    for line in traced_output.log():
        print("traced log: " + line)
    plain_result, traced_result = plain_output.stdout(), traced_output.stdout()
    require(plain.returncode == 0 and " OK" in plain_result,
            f"untraced srun: exit {plain.returncode}\n{plain_output.describe()}{plain.stdout}{plain.stderr}")
    require(traced.returncode == plain.returncode and traced_result == plain_result,
            f"traced srun: exit {traced.returncode}, untraced {plain.returncode}\n--- traced\n"
            f"{traced_output.describe()}{traced.stdout}{traced.stderr}--- untraced\n{plain_result}")
    archive = os.path.join(archive_dir, "srun")
    require(os.path.isfile(os.path.join(archive, "traces.otf2")),
            f"no archive at {archive}: {os.listdir(archive_dir)}")
    check_archive(archive, traced_result, correct, work)
    compare_structure(archive, reference.archive())


def main():
    if len(sys.argv) != 4:
        print(f"usage: {sys.argv[0]} MPI_PLUGIN PROGRAM HTRACE_CORRECT", file=sys.stderr)
        return 2
    slurm_cluster.skip_unless_possible()
    work = tempfile.mkdtemp(prefix="htrace-srun-")
    try:
        plugin, program, correct = sys.argv[1:]
        test(plugin, os.path.abspath(program), os.path.abspath(correct), work)
    except TestFailure:
        print(f"kept for inspection: {work} {' '.join(harness._workdirs)}", file=sys.stderr)
        return 1
    shutil.rmtree(work, ignore_errors=True)
    for workdir in harness._workdirs:
        shutil.rmtree(workdir, ignore_errors=True)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
