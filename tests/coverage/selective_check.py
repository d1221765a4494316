#!/usr/bin/python3
"""Runs tests/coverage/selective.c on 2 ranks under the tracer with
HTRACE_MPI_EXCLUDE=MPI_Iprobe,MPI_Test* (mode `exclude`) or with a Score-P filter file that selects
the same functions through wildcards, INCLUDE over EXCLUDE, MANGLED and file-name rules (mode
`filter`), and checks, against the counts the program prints:
  - each rank's location has one MeasurementOnOff OFF then one ON, nothing but the MPI_Pcontrol
    regions between them, and no MPI_Sendrecv/MPI_Barrier of the paused phase;
  - no MPI_Iprobe region, and exactly one MPI_Test region per test that completed its request
    (the excluded calls that found nothing leave no record, no MpiRequestTest either);
  - every message of the recorded phases matched (tests/lib/trace_check.py, 16 messages), and
    the erroneous MPI_Comm_free/MPI_Comm_dup on MPI_COMM_NULL leave no record of an undefined
    communicator (the reader would fail on it);
  - the summary names every skipped call with its count, per reason;
  - htrace-correct reads and corrects the archive (exit 0).
usage: selective_check.py PROGRAM HTRACE_CORRECT exclude|filter"""
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter

import otf2

import trace_check
from htrace_test.check import fail
from htrace_test.mpi import mpirun_command
from htrace_test.rank_output import RankOutput

program, correct, mode = sys.argv[1:4]

# Every MPI function but those the program needs (a rule runs on over lines; the last matching
# rule wins), then MPI_Test by a MANGLED rule: what HTRACE_MPI_EXCLUDE=MPI_Iprobe,MPI_Test* does
# to this program. Dropping either INCLUDE or the MANGLED rule changes the regions checked below.
FILTER = """# Score-P filter file
SCOREP_REGION_NAMES_BEGIN
  EXCLUDE MPI_*
  INCLUDE MPI_S?nd* MPI_Isend MPI_*recv MPI_Recv   # MPI_*recv: MPI_Irecv, MPI_Sendrecv
          MPI_Barrier MPI_Comm_* MPI_Pcontrol MPI_Test*
  EXCLUDE MANGLED MPI_Test
SCOREP_REGION_NAMES_END
SCOREP_FILE_NAMES_BEGIN
  EXCLUDE */selective.c
SCOREP_FILE_NAMES_END
"""



with tempfile.TemporaryDirectory() as tmp:
    env = dict(os.environ, HTRACE_ARCHIVE_DIR=tmp, HTRACE_ARCHIVE_NAME="sel", HTRACE_VERBOSE="1")
    if mode == "exclude":
        selection = "HTRACE_MPI_EXCLUDE"
        env[selection] = "MPI_Iprobe, MPI_Test*"
    else:
        selection = "HTRACE_FILTER_FILE"
        env[selection] = os.path.join(tmp, "mpi.filter")
        with open(env[selection], "w") as f:
            f.write(FILTER)
    output = RankOutput(os.path.join(tmp, "output"))
    cmd = mpirun_command(2, [program], forward=["HTRACE_ARCHIVE_DIR", "HTRACE_ARCHIVE_NAME", "HTRACE_VERBOSE",
                                                selection], preload=os.environ["HTRACE_LIB"],
                         output=output)
    run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        fail(f"exit {run.returncode}\n{output.describe()}{run.stdout}\n{run.stderr}")
    truth = {}
    for m in re.finditer(r"rank (\d): iprobe (\d+) test (\d+) test_found (\d+) off_sends (\d+)",
                         output.stdout()):
        truth[int(m.group(1))] = dict(zip(("iprobe", "test", "found", "off"),
                                          map(int, m.groups()[1:])))
    if sorted(truth) != [0, 1]:
        fail(f"program output:\n{output.describe()}")

    archive = os.path.join(tmp, "sel")
    with otf2.reader.open(os.path.join(archive, "traces.otf2")) as trace:
        per_rank = {0: [], 1: []}
        for location, event in trace.events:
            # Location id = (thread index << 32) | world rank; master threads only here.
            per_rank.setdefault(location._ref, []).append(event)
    for rank, events in per_rank.items():
        if rank not in truth:
            continue
        kinds = [type(e).__name__ for e in events]
        switches = [e.measurement_mode for e in events if type(e).__name__ == "MeasurementOnOff"]
        if [str(s) for s in switches] != ["MeasurementMode.OFF", "MeasurementMode.ON"]:
            fail(f"rank {rank}: MeasurementOnOff sequence {switches}")
        off = kinds.index("MeasurementOnOff")
        on = kinds.index("MeasurementOnOff", off + 1)
        inside = {e.region.name for e in events[off + 1:on] if hasattr(e, "region")}
        if inside != {"MPI_Pcontrol"} or any(k not in ("Leave", "Enter") for k in kinds[off + 1:on]):
            fail(f"rank {rank}: records while recording was off: {kinds[off + 1:on]}")
        enters = Counter(e.region.name for e in events if type(e).__name__ == "Enter")
        want = {"MPI_Sendrecv": 3, "MPI_Barrier": 0, "MPI_Iprobe": 0,
                "MPI_Test": truth[rank]["found"], "MPI_Pcontrol": 2, "MPI_Comm_free": 1,
                "MPI_Comm_dup": 1}
        got = {name: enters.get(name, 0) for name in want}
        if got != want:
            fail(f"rank {rank}: regions {got}, expected {want}")
        if kinds.count("MpiCollectiveBegin") != kinds.count("MpiCollectiveEnd"):
            fail(f"rank {rank}: unbalanced collective records")
        if "MpiRequestTest" in kinds:
            fail(f"rank {rank}: MpiRequestTest of an excluded MPI_Test")
        print(f"rank {rank}: {len(events)} records, regions {got}")

    report = trace_check.check(archive, expect_messages=16, expect_locations=2)
    if report.violations:
        fail(f"trace_check: {report.violations[:5]}")

    excluded = sum(t["test"] - t["found"] for t in truth.values())
    iprobes = sum(t["iprobe"] for t in truth.values())
    want_excluded = (f"untraced: {excluded + iprobes} calls excluded by HTRACE_MPI_EXCLUDE "
                     f"or HTRACE_FILTER_FILE (all ranks): ")
    log = output.log()
    line = next((l for l in log if "excluded by HTRACE_MPI_EXCLUDE" in l), "")
    if want_excluded not in line or f"MPI_Iprobe {iprobes}" not in line or \
            f"MPI_Test {excluded}" not in line:
        fail(f"summary line {line!r}, expected MPI_Iprobe {iprobes}, MPI_Test {excluded}")
    paused = sum(t["off"] for t in truth.values())
    line = next((l for l in log if "MPI_Pcontrol(0)" in l), "")
    if f"MPI_Sendrecv {paused}" not in line or "MPI_Barrier 2" not in line:
        fail(f"summary line {line!r}, expected MPI_Sendrecv {paused}, MPI_Barrier 2")
    print("summary:", "\n".join(l for l in log if "untraced" in l))
    if mode == "filter":
        line = next((l for l in log if "HTRACE_FILTER_FILE" in l and "info" in l), "")
        m = re.search(r"'(.*)': (\d+) MPI functions excluded \(its file-name rules match no MPI "
                      r"function\)$", line)
        if not m or m.group(1) != env[selection] or int(m.group(2)) < 100:
            fail(f"filter summary line {line!r}")
        print(line)

    out = os.path.join(tmp, "corrected")
    corr = subprocess.run(mpirun_command(2, [correct, archive, out]),
                          capture_output=True, text=True, timeout=120)
    if corr.returncode != 0:
        fail(f"htrace-correct exit {corr.returncode}\n{corr.stdout}\n{corr.stderr}")
    with otf2.reader.open(os.path.join(out, "traces.otf2")) as trace:
        n = sum(1 for _, e in trace.events if type(e).__name__ == "MeasurementOnOff")
    if n != 4:
        fail(f"corrected archive has {n} MeasurementOnOff records, expected 4")
    print("PASS")
