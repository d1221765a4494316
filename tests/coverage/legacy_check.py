#!/usr/bin/python3
"""Functions a real code calls outside mpi.h's current C interface are traced:

  legacy_c      removed MPI-1 C functions (MPI_Address, MPI_Type_struct, ...) and the MPI-2
                deprecated attribute functions (MPI_Attr_*, MPI_Keyval_*)
  legacy_mpif   the same through mpif.h
  legacy_usempi `use mpi` with TYPE(C_PTR) base pointers (the `_cptr` procedures: the window
                of MPI_Win_allocate must be known, its Put recorded), MPI_Aint_add/diff and
                MPI_F_sync_reg (Fortran only)
  legacy_f08    `use mpi_f08`: MPI_Buffer_detach (the f08 binding calls PMPI_Buffer_detach),
                MPI_Aint_add/diff, MPI_F_sync_reg

Each program runs on 2 ranks untraced and traced: same exit status and output. The archive is read
with the otf2 module: every rank has exactly the MPI regions the program calls, each as often as
it calls it (no more, no fewer), every message matches (tests/lib/trace_check.py), the summary
reports nothing untraced, and htrace-correct --check finds no violation.
usage: legacy_check.py HTRACE_CORRECT NAME=PROGRAM..."""
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter

import otf2

import trace_check
from htrace_test.check import fail
from htrace_test.mpi import mpirun_command
from htrace_test.rank_output import RankOutput

correct = sys.argv[1]
programs = dict(arg.split("=", 1) for arg in sys.argv[2:])

FRAME = {"MPI_Init": 1, "MPI_Comm_rank": 1, "MPI_Comm_size": 1, "MPI_Finalize": 1}
MPI1 = dict(FRAME, MPI_Address=2, MPI_Type_struct=1, MPI_Type_commit=1, MPI_Type_extent=1,
            MPI_Type_lb=1, MPI_Type_ub=1, MPI_Type_hvector=1, MPI_Type_hindexed=1, MPI_Type_free=3,
            MPI_Sendrecv=1, MPI_Keyval_create=1, MPI_Attr_put=1, MPI_Attr_get=1, MPI_Attr_delete=1,
            MPI_Keyval_free=1, MPI_Errhandler_get=1, MPI_Errhandler_create=1, MPI_Errhandler_set=2,
            MPI_Errhandler_free=1)
ADDRESSES = {"MPI_Get_address": 2, "MPI_Aint_add": 1, "MPI_Aint_diff": 1, "MPI_F_sync_reg": 1}
# program -> (regions entered per rank, other records per rank, messages in the run)
EXPECT = {
    "legacy_c": (MPI1, {}, 2),
    "legacy_mpif": (MPI1, {}, 2),
    "legacy_usempi": (dict(FRAME, **ADDRESSES, MPI_Alloc_mem=1, MPI_Free_mem=1, MPI_Win_allocate=1,
                           MPI_Win_fence=2, MPI_Put=1, MPI_Win_free=2, MPI_Win_allocate_shared=1,
                           MPI_Win_shared_query=1),
                      {"RmaWinCreate": 2, "RmaPut": 1, "RmaOpCompleteBlocking": 1,
                       "RmaWinDestroy": 2}, 0),
    "legacy_f08": (dict(FRAME, **ADDRESSES, MPI_Buffer_attach=1, MPI_Bsend=1, MPI_Recv=1,
                        MPI_Buffer_detach=1), {"MpiSend": 1, "MpiRecv": 1}, 2),
}



def run(program, tmp, traced):
    """(exit status, the ranks' stdout lines sorted, libhtrace's log, everything said for a failure
    message) of one run."""
    env = dict(os.environ, HTRACE_ARCHIVE_DIR=tmp, HTRACE_ARCHIVE_NAME="legacy", HTRACE_VERBOSE="1")
    output = RankOutput(os.path.join(tmp, "output-traced" if traced else "output-untraced"))
    if traced:
        cmd = mpirun_command(2, [program], forward=["HTRACE_ARCHIVE_DIR", "HTRACE_ARCHIVE_NAME", "HTRACE_VERBOSE"],
                             preload=os.environ["HTRACE_LIB"], output=output)
    else:
        cmd = mpirun_command(2, [program], output=output)
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    said = f"{output.describe()}--- mpirun\n{done.stdout}{done.stderr}"
    return done.returncode, sorted(output.stdout().splitlines()), output.log(), said


def check(name, program, tmp):
    plain_rc, plain_out, _, plain_said = run(program, tmp, traced=False)
    rc, out, log, said = run(program, tmp, traced=True)
    if plain_rc != 0 or rc != 0:
        fail(f"{name}: exit {plain_rc} untraced, {rc} traced\n{plain_said}\n{said}")
    if out != plain_out or sum(line.endswith(" OK") for line in out) != 2:
        fail(f"{name}: output differs or lacks OK\nuntraced: {plain_out}\ntraced:   {out}")
    if any("untraced:" in line for line in log):
        fail(f"{name}: the summary reports untraced calls: {log}")
    regions, records, messages = EXPECT[name]
    archive = os.path.join(tmp, "legacy")
    enters = {0: Counter(), 1: Counter()}
    kinds = {0: Counter(), 1: Counter()}
    puts = []
    with otf2.reader.open(os.path.join(archive, "traces.otf2")) as trace:
        for location, event in trace.events:
            rank = location._ref  # location id = world rank for master threads
            kind = type(event).__name__
            kinds[rank][kind] += 1
            if kind == "Enter":
                enters[rank][event.region.name] += 1
            if kind == "RmaPut":
                puts.append((rank, event.remote, event.bytes))
    for rank in (0, 1):
        if dict(enters[rank]) != regions:
            missing = {k: v for k, v in regions.items() if enters[rank][k] != v}
            extra = {k: v for k, v in enters[rank].items() if k not in regions}
            fail(f"{name}: rank {rank}: regions differ: expected {missing}, "
                 f"found {({k: enters[rank][k] for k in missing})}, unexpected {extra}")
        got = {k: kinds[rank][k] for k in records}
        if got != records:
            fail(f"{name}: rank {rank}: records {got}, expected {records}")
    if name == "legacy_usempi" and sorted(puts) != [(0, 1, 4), (1, 0, 4)]:
        fail(f"{name}: RmaPut (rank, target, bytes) {puts}, expected one 4-byte Put to the neighbour")
    report = trace_check.check(archive, expect_messages=messages, expect_locations=2)
    if report.violations:
        fail(f"{name}: trace_check: {report.violations[:5]}")
    corr = subprocess.run([correct, "--check", "--json", archive], capture_output=True, text=True,
                          timeout=120)
    if corr.returncode != 0:
        fail(f"{name}: htrace-correct --check exit {corr.returncode}: {corr.stderr}")
    violations = json.loads(corr.stdout)["violations_before"]
    if any(violations.values()):
        fail(f"{name}: htrace-correct found violations: {violations}")
    print(f"{name}: {sum(enters[0].values())} regions per rank as called, "
          f"{len(report.messages)} messages, output as untraced")


for name, program in programs.items():
    with tempfile.TemporaryDirectory() as tmp:
        check(name, program, tmp)
print("PASS")
