#!/usr/bin/python3
"""Real programs Debian builds for each MPI, traced as untraced: the ScaLAPACK test drivers of
scalapack-mpi-test (Fortran drivers over BLACS, which calls MPI from C with derived datatypes,
user-defined reduction operations, ready sends and communicator splits), built once for Open MPI
and once for MPICH. The build's MPI picks its set. Each of xdqr, xdllt and xdinv runs on 2 ranks
with its packaged input, untraced and traced:

  - same exit status; every residual check of the driver passes, as many as untraced (the drivers
    print PASSED/FAILED per case; timings differ);
  - the archive is clean (tests/lib/trace_check.py: every message matched, every collective
    complete) and htrace-correct --check finds no clock-condition violation.

usage: scalapack_check.py HTRACE_CORRECT"""
import json
import os
import shutil
import subprocess
import sys

from htrace_test.check import require
from htrace_test.harness import check_clean, mpirun
from htrace_test.mpi import flavor

correct = sys.argv[1]
TESTS = f"/usr/lib/x86_64-linux-gnu/scalapack/{'mpich' if flavor() == 'mpich' else 'openmpi'}-tests"
DRIVERS = {"xdqr": "QR.dat", "xdllt": "LLT.dat", "xdinv": "INV.dat"}

if not os.path.isdir(TESTS):
    print(f"SKIP: {TESTS} not installed (Debian package scalapack-mpi-test)")
    sys.exit(77)


def verdicts(stdout):
    return stdout.count("PASSED"), stdout.count("FAILED")


for driver, data in DRIVERS.items():
    with open(os.path.join(TESTS, data)) as f:
        files = {data: f.read()}
    program = os.path.join(TESTS, driver)
    plain = mpirun(program, np=2, preload=None, files=files, timeout=120)
    traced = mpirun(program, np=2, files=files, timeout=120)
    require(plain.returncode == 0, f"{driver} fails untraced:\n{plain.describe()}")
    require(traced.returncode == plain.returncode,
            f"{driver}: exit {traced.returncode} traced, {plain.returncode} untraced:\n{traced.describe()}")
    passed, failed = verdicts(plain.output.stdout())
    require(passed > 0 and failed == 0, f"{driver} untraced: {passed} passed, {failed} failed")
    require(verdicts(traced.output.stdout()) == (passed, 0),
            f"{driver} traced: {verdicts(traced.output.stdout())} (passed, failed), untraced {passed} passed")
    report = check_clean(traced.archive(), expect_locations=2, expect_processes=2)
    done = subprocess.run([correct, "--check", "--json", traced.archive()], capture_output=True, text=True,
                          timeout=120)
    require(done.returncode == 0, f"htrace-correct --check failed ({done.returncode}): {done.stderr}")
    violations = json.loads(done.stdout)["violations_before"]
    require(not any(violations.values()), f"{driver}: violations in a one-host trace: {violations}")
    print(f"{driver}: {passed} checks passed traced and untraced; {report.events} events, "
          f"{len(report.messages)} messages matched, violations {violations}")
    for run in (plain, traced):
        shutil.rmtree(run.workdir, ignore_errors=True)
print("PASS")
