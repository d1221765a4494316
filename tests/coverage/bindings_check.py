#!/usr/bin/python3
"""The same MPI program written in C, mpif.h, `use mpi` and `use mpi_f08` (examples/bindings)
traced on 3 ranks: every Fortran archive must equal the C archive record by record (all fields
but timestamps; definitions compared by name and members), read with the otf2 Python bindings.
MPI_Iprobe and MPI_Test are excluded (HTRACE_MPI_EXCLUDE) so that the polling loops, whose
length varies from run to run, leave the same records: the one Test that completes its request.
Also: the programs' own results are right under the tracer, every message matches
(tests/lib/trace_check.py), the features each binding exercises show up (Comm_set_name with a
CHARACTER name, Alltoallw with datatype arrays, MPI_Aint and MPI_Offset arguments, Pcontrol,
RMA and MPI-IO calls), and htrace-correct corrects the f08 archive (exit 0).
usage: bindings_check.py HTRACE_CORRECT C MPIF USEMPI F08"""
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

correct, *programs = sys.argv[1:]

NAMES = ["c", "mpif", "usempi", "f08"]
NP = 3



def norm(value):
    """A record field without process-local references: definitions by name (and members)."""
    if isinstance(value, otf2.definitions.Comm):
        members = tuple(getattr(m, "_ref", m) for m in value.group.members) if value.group else ()
        return ("Comm", value.name, members)
    if hasattr(value, "name") and hasattr(value, "_ref"):
        return (type(value).__name__, str(value.name))
    if isinstance(value, (int, float, str)) or value is None:
        return value
    if hasattr(value, "value"):  # OTF2 enums and flag sets (str() fails on combined flags)
        return (type(value).__name__, int(value.value))
    return str(value)


def records(archive):
    per_location = {}
    with otf2.reader.open(os.path.join(archive, "traces.otf2")) as trace:
        for location, event in trace.events:
            fields = tuple((k, norm(getattr(event, k))) for k in sorted(dir(event))
                           if not k.startswith("_") and k not in ("time", "attributes")
                           and not callable(getattr(event, k)))
            per_location.setdefault(location._ref, []).append((type(event).__name__,) + fields)
    return per_location


with tempfile.TemporaryDirectory() as tmp:
    traces = {}
    for name, program in zip(NAMES, programs):
        env = dict(os.environ, HTRACE_ARCHIVE_DIR=tmp, HTRACE_ARCHIVE_NAME=name,
                   HTRACE_VERBOSE="1", HTRACE_MPI_EXCLUDE="MPI_Iprobe,MPI_Test")
        output = RankOutput(os.path.join(tmp, "output-" + name))
        cmd = mpirun_command(NP, [program], forward=["HTRACE_ARCHIVE_DIR", "HTRACE_ARCHIVE_NAME",
                                                     "HTRACE_VERBOSE", "HTRACE_MPI_EXCLUDE"],
                             preload=os.environ["HTRACE_LIB"], output=output)
        run = subprocess.run(cmd, env=env, cwd=tmp, capture_output=True, text=True, timeout=120)
        if run.returncode != 0:
            fail(f"{name}: exit {run.returncode}\n{output.describe()}{run.stdout}\n{run.stderr}")
        said = output.stdout()
        if f"window {NP - 1} {NP - 1}" not in said or "sum 3" not in said:
            fail(f"{name}: wrong results under the tracer: {said!r}")
        archive = os.path.join(tmp, name)
        report = trace_check.check(archive, expect_locations=NP, expect_messages=3 * NP)
        if report.violations:
            fail(f"{name}: trace_check: {report.violations[:5]}")
        traces[name] = records(archive)
        total = sum(len(v) for v in traces[name].values())
        print(f"{name}: {total} records on {len(traces[name])} locations, "
              f"{len(report.messages)} messages matched")

    reference = traces["c"]
    enters = Counter(dict(r[1:])["region"][1] for loc in reference.values() for r in loc
                     if r[0] == "Enter")
    for region in ("MPI_Comm_set_name", "MPI_Alltoallw", "MPI_Type_create_hvector", "MPI_Put",
                   "MPI_Win_create", "MPI_File_open", "MPI_File_write_at", "MPI_File_delete",
                   "MPI_Test", "MPI_Pcontrol"):
        if enters[region] == 0:
            fail(f"reference trace has no {region} region: {dict(enters)}")
    if enters["MPI_Iprobe"] != 0 or enters["MPI_Test"] != NP:
        fail(f"exclusion: {enters['MPI_Iprobe']} MPI_Iprobe, {enters['MPI_Test']} MPI_Test regions")
    kinds = Counter(r[0] for loc in reference.values() for r in loc)
    for kind, want in (("RmaPut", NP), ("RmaWinCreate", NP), ("IoCreateHandle", NP),
                       ("IoOperationComplete", NP), ("IoDeleteFile", 1)):
        if kinds[kind] != want:
            fail(f"{kinds[kind]} {kind} records, expected {want}: {dict(kinds)}")
    onoff = sum(1 for loc in reference.values() for r in loc if r[0] == "MeasurementOnOff")
    if onoff != 2 * NP:
        fail(f"{onoff} MeasurementOnOff records, expected {2 * NP}")

    for name in NAMES[1:]:
        trace = traces[name]
        if sorted(trace) != sorted(reference):
            fail(f"{name}: locations {sorted(trace)} differ from C's {sorted(reference)}")
        for loc in sorted(reference):
            a, b = reference[loc], trace[loc]
            for i, (x, y) in enumerate(zip(a, b)):
                if x != y:
                    fail(f"{name}, location {loc}, record {i}: C has {x}, {name} has {y}")
            if len(a) != len(b):
                extra = (a if len(a) > len(b) else b)[min(len(a), len(b))]
                fail(f"{name}, location {loc}: {len(b)} records, C {len(a)}; first extra: {extra}")
        print(f"{name}: identical to C record by record")

    out = os.path.join(tmp, "f08-corrected")
    done = subprocess.run([correct, os.path.join(tmp, "f08"), out], capture_output=True, text=True,
                          timeout=120)
    if done.returncode != 0:
        fail(f"htrace-correct exit {done.returncode}: {done.stderr}")
    print("PASS")
