#!/usr/bin/python3
"""A Fortran MPI application nobody here wrote, traced whole: Debian's MUMPS example
dsimpletest (mumps-test; MUMPS 5.5 calls MPI through mpif.h from libdmumps and libmumps_common)
solving a 2D five-point system of N = 1600 unknowns read from stdin on 2 ranks.

  - Untraced and traced runs exit alike and print the same, except timings and the last bits of
    the solution: MUMPS assembles contributions in arrival order, so the solution's rounding
    depends on timing even untraced (both ranks on one core give another rounding). The solution
    must be within 1e-9 of the exact one (x_i = i) in both runs.
  - The traced run runs under ltrace, which counts every call from the application's binaries
    (dsimpletest, libdmumps, libmumps_common, ScaLAPACK's C calls) into mpi_*/MPI_*: each rank's
    archive (read with the otf2 module) has exactly those MPI regions, each entered exactly as often
    as ltrace counted (MPI_Wtime is not wrapped: the table's skeleton `none`).
  - Every message matches (tests/lib/trace_check.py); the summary reports nothing untraced;
    htrace-correct --check finds no violation and moves nothing.
  - On 2 emulated nodes (tests/cluster, clocks 2.5 s apart), traced and untraced: same output
    (MUMPS adds per-node memory statistics there), archive clean, htrace-correct finds no
    violation left after correction.
usage: mumps_check.py HTRACE_CORRECT [DSIMPLETEST]"""
import json
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

correct = sys.argv[1]
program = sys.argv[2] if len(sys.argv) > 2 else "/usr/lib/mumps/dsimpletest"

GRID = 40  # N = GRID^2 unknowns
NOT_WRAPPED = {"MPI_Wtime", "MPI_Wtick"}  # skeleton `none` in libtrace/mpi/mpi_functions.txt
# Calls from these objects into MPI are counted by ltrace (MAIN is the program itself).
CALLERS = ("MAIN", "libdmumps*", "libmumps_common*", "libscalapack*")



def system_input():
    """A five-point stencil on a GRID x GRID grid (slightly unsymmetric), right-hand side A x for
    x_i = i: the MUMPS input format of dsimpletest (N, NZ, entries, RHS)."""
    n = GRID * GRID
    entries = []
    for i in range(GRID):
        for j in range(GRID):
            row = i * GRID + j
            entries.append((row, row, 4.0))
            for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                if 0 <= i + di < GRID and 0 <= j + dj < GRID:
                    entries.append((row, (i + di) * GRID + j + dj, -1.0 - 0.01 * ((row + di + 2 * dj) % 3)))
    rhs = [0.0] * n
    for row, col, value in entries:
        rhs[row] += value * (col + 1)
    lines = [f"{n} :N", f"{len(entries)} :NZ"]
    lines += [f"{r + 1} {c + 1} {v!r}" for r, c, v in entries] + [repr(b) for b in rhs]
    return "\n".join(lines) + "\n"


def split_output(stdout):
    """(lines without timings, solution values) of dsimpletest's output."""
    kept, solution = [], None
    for line in stdout.splitlines():
        if "Solution is" in line:
            solution = [float(v) for v in line.split("Solution is", 1)[1].split()]
        elif not re.search(r"time", line, re.I):
            kept.append(line)
    return kept, solution


def check_solution(solution, label):
    n = GRID * GRID
    if solution is None or len(solution) != n:
        fail(f"{label}: no solution of {n} values")
    worst = max(abs(x - (i + 1)) / (i + 1) for i, x in enumerate(solution))
    if worst > 1e-9:
        fail(f"{label}: solution off by {worst:.2e} (relative)")
    return worst


def mpirun(tmp, stdin, traced, counted=False, cluster=None):
    """Runs dsimpletest on 2 ranks; returns (exit status, its output: a RankOutput, what mpirun
    printed)."""
    env = dict(os.environ, HTRACE_ARCHIVE_DIR=os.path.join(tmp, "archives"), HTRACE_VERBOSE="1")
    output = RankOutput(os.path.join(tmp, "output-traced" if traced else "output-untraced"))
    if cluster:  # 2 nodes of 1 rank each
        cmd = [cluster, "--offsets", "0,2.5", "--ranks-per-node", "1", "--"]
    else:
        cmd = mpirun_command(2)
    if traced:
        cmd += ["-x", "HTRACE_ARCHIVE_DIR", "-x", "HTRACE_VERBOSE", "-x", "LD_PRELOAD=" + os.environ["HTRACE_LIB"],
                "-x", output.log_variable()]
    # The input from a file: mpirun stops passing its stdin on to a rank that has closed the
    # stdout and stderr it was started with (rank_files.sh puts them in files).
    input_file = os.path.join(tmp, "input")
    with open(input_file, "w") as f:
        f.write(stdin)
    rank_command = ["/bin/sh", "-c", 'exec "$@" <"$0"', input_file, program]
    if counted:  # each rank under ltrace, its counts in ltrace.<world rank>
        wrapper = os.path.join(tmp, "ltrace-rank")
        with open(wrapper, "w") as f:
            f.write("#!/bin/sh\nexec ltrace -c -o %s/ltrace.$OMPI_COMM_WORLD_RANK -e '%s' \"$@\"\n"
                    % (tmp, "+".join(f"{p}@{c}" for c in CALLERS for p in ("mpi_*", "MPI_*"))))
        os.chmod(wrapper, 0o755)
        rank_command[-1:] = [wrapper, program]
    done = subprocess.run(cmd + output.program(rank_command), env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=150)
    return done.returncode, output, done.stdout + done.stderr


def ltrace_counts(path):
    """{MPI_Name: calls} from `ltrace -c` output (lines: %time seconds usecs/call calls function)."""
    counts = Counter()
    for line in open(path):
        fields = line.split()
        if len(fields) == 5 and fields[3].isdigit() and re.match(r"(mpi|MPI)_", fields[4]):
            name = fields[4].rstrip("_")
            counts["MPI_" + name[4].upper() + name[5:].lower()] += int(fields[3])
    return counts


def archive_of(tmp):
    found = os.listdir(os.path.join(tmp, "archives"))
    if len(found) != 1:
        fail(f"expected one archive, found {found}")
    return os.path.join(tmp, "archives", found[0])


def regions_per_rank(archive):
    """Calls per region and rank: one per Leave, or as many as the HTRACE::POLLS attribute of a
    run of unsuccessful polls recorded as one call says."""
    enters = {}
    with otf2.reader.open(os.path.join(archive, "traces.otf2")) as trace:
        for location, event in trace.events:
            if isinstance(event, otf2.events.Leave):
                polls = [v for a, v in (event.attributes or {}).items() if a.name == "HTRACE::POLLS"]
                enters.setdefault(location._ref, Counter())[event.region.name] += (polls or [1])[0]
    return enters


def corrected(archive):
    done = subprocess.run([correct, "--check", "--json", archive], capture_output=True, text=True,
                          timeout=150)
    if done.returncode != 0:
        fail(f"htrace-correct --check exit {done.returncode}: {done.stderr}")
    return json.loads(done.stdout)


with tempfile.TemporaryDirectory() as tmp:
    stdin = system_input()
    plain_status, plain, plain_launcher = mpirun(tmp, stdin, traced=False)
    traced_status, traced, traced_launcher = mpirun(tmp, stdin, traced=True, counted=True)
    if plain_status != 0 or traced_status != 0:
        fail(f"exit {plain_status} untraced, {traced_status} traced\n{plain.describe()}{plain_launcher}\n"
             f"{traced.describe()}{traced_launcher}")
    plain_lines, plain_solution = split_output(plain.stdout())
    traced_lines, traced_solution = split_output(traced.stdout())
    if plain_lines != traced_lines:
        diff = [(a, b) for a, b in zip(plain_lines, traced_lines) if a != b][:5]
        fail(f"output differs ({len(plain_lines)} vs {len(traced_lines)} lines): {diff}")
    errors = (check_solution(plain_solution, "untraced"), check_solution(traced_solution, "traced"))
    if any("untraced:" in line for line in traced.log()):
        fail("the summary reports untraced calls:\n" + "\n".join(traced.log()))

    archive = archive_of(tmp)
    enters = regions_per_rank(archive)
    for rank in (0, 1):
        calls = ltrace_counts(os.path.join(tmp, f"ltrace.{rank}"))
        want = {name: n for name, n in calls.items() if name not in NOT_WRAPPED}
        got = dict(enters.get(rank, {}))
        if got != want or len(want) < 20:
            differ = {k: (want.get(k, 0), got.get(k, 0)) for k in set(want) | set(got) if want.get(k) != got.get(k)}
            fail(f"rank {rank}: MPI calls (ltrace, archive) differ: {differ}")
        print(f"rank {rank}: {sum(want.values())} MPI calls of {len(want)} functions, each recorded as often "
              f"as ltrace counted it (not wrapped: {', '.join(f'{k} {calls[k]}' for k in NOT_WRAPPED if calls[k])}):")
        print("  " + ", ".join(f"{k} {v}" for k, v in sorted(want.items(), key=lambda kv: (-kv[1], kv[0]))))
    report = trace_check.check(archive, expect_locations=2, expect_processes=2)
    if report.violations or len(report.messages) < 10:
        fail(f"trace_check: {len(report.messages)} messages, {report.violations[:5]}")
    corr = corrected(archive)
    if any(corr["violations_before"].values()) or corr["max_displacement_ns"] > 1000:
        fail(f"htrace-correct on a consistent one-node trace: {corr['violations_before']}, "
             f"moved {corr['max_displacement_ns']} ns")
    print(f"one node: {report.events} events, {len(report.messages)} messages matched, "
          f"{corr['messages']['collective']} collectives, 0 violations; solution error "
          f"{errors[0]:.1e} untraced, {errors[1]:.1e} traced")

    cluster = os.environ.get("HTRACE_CLUSTER_RUN")
    if cluster and os.access(cluster, os.X_OK):
        with tempfile.TemporaryDirectory() as ctmp:
            # MUMPS adds per-node memory statistics when its ranks are on several nodes.
            plain_status, plain, _ = mpirun(ctmp, stdin, traced=False, cluster=cluster)
            status, run, launcher = mpirun(ctmp, stdin, traced=True, cluster=cluster)
            if status != 0 or plain_status != 0:
                fail(f"2 emulated nodes: exit {plain_status} untraced, {status} traced\n{run.describe()}{launcher}")
            lines, solution = split_output(run.stdout())
            if lines != split_output(plain.stdout())[0]:
                fail("2 emulated nodes: output differs from the untraced run")
            check_solution(solution, "2 emulated nodes")
            archive = archive_of(ctmp)
            report = trace_check.check(archive, expect_locations=2, expect_processes=2)
            if report.violations:
                fail(f"2 emulated nodes: trace_check: {report.violations[:5]}")
            corr = corrected(archive)
            if any(corr["violations_after"].values()):
                fail(f"2 emulated nodes: violations left after correction: {corr['violations_after']}")
            print(f"2 emulated nodes: {report.events} events, {len(report.messages)} messages matched, "
                  f"violations {corr['violations_before']} before, none after correction")
print("PASS")
