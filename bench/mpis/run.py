#!/usr/bin/python3
"""What libhtrace costs under each MPI, side by side in one run: a build for Open MPI and one for
MPICH, rounds alternated (plain and traced, each MPI in turn) so that all see the same load.

    bench/mpis/run.py OPENMPI_BUILD MPICH_BUILD [--rounds 7] [--np 2]

Per MPI: the per-call cost (bench/overhead's overhead-bench: 0-byte ping-pong and 8-byte
allreduce; hot = median single call, whole = over all calls, buffer writes included), and the
time MPI_Init and MPI_Finalize take (bench/initfinal's program: slowest rank, 100 barriers
between). Medians over the rounds with min..max; +ns and +ms against the same MPI untraced."""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "lib"))
from htrace_test.mpi import mpirun_command  # noqa: E402


def flavor_of(build):
    """openmpi or mpich, from the build's installed-name suffix (cmake/HtraceMpiFlavor.cmake)."""
    cache = open(os.path.join(build, "CMakeCache.txt")).read()
    return "mpich" if re.search(r"^HTRACE_MPI_SUFFIX:STRING=-mpich$", cache, re.M) else "openmpi"


def library(build):
    for name in ("libhtrace.so", "libhtrace-mpich.so"):
        path = os.path.join(build, "libtrace", name)
        if os.path.exists(path):
            return path
    sys.exit(f"run.py: no libhtrace in {build}/libtrace")


def run(flavor, np, program, lib):
    os.environ["HTRACE_MPI_FLAVOR"] = flavor
    os.environ.pop("MPIRUN", None)
    with tempfile.TemporaryDirectory(prefix="htrace-mpis-") as work:
        forward = [f"HTRACE_ARCHIVE_DIR={work}", "HTRACE_VERBOSE=0"] if lib else []
        command = mpirun_command(np, program, bind_none=True, forward=forward, preload=lib)
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=work)
    if done.returncode != 0:
        sys.exit(f"run.py: {' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("builds", nargs=2)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--np", type=int, default=2)
    args = parser.parse_args()
    builds = {flavor_of(b): os.path.abspath(b) for b in args.builds}
    figures = {}  # (flavor, traced) -> list of dicts
    for _ in range(args.rounds):
        for flavor, build in builds.items():
            for traced in (False, True):
                lib = library(build) if traced else None
                out = run(flavor, args.np, [os.path.join(build, "bench/overhead/overhead-bench"), "20000", "11"], lib)
                row = {k: float(v) for k, v in (kv.split("=") for kv in out.split())}
                out = run(flavor, args.np, [os.path.join(build, "bench/initfinal/initfinal_barriers"), "100"], lib)
                ranks = re.findall(r"init_ms ([\d.]+) finalize_ms ([\d.]+)", out)
                row["init_ms"] = max(float(i) for i, _ in ranks)
                row["finalize_ms"] = max(float(f) for _, f in ranks)
                figures.setdefault((flavor, traced), []).append(row)
    print(f"{args.rounds} rounds, {args.np} ranks, load average {open('/proc/loadavg').read().split()[0]}")
    print(f"{'MPI':<9}{'':<9}{'pp hot ns':>30}{'pp whole ns':>30}{'ar hot ns':>30}{'ar whole ns':>30}"
          f"{'MPI_Init ms':>30}{'MPI_Finalize ms':>30}")
    keys = ("pp_median", "pp_whole", "ar_median", "ar_whole", "init_ms", "finalize_ms")
    for flavor in builds:
        base = {k: statistics.median(r[k] for r in figures[(flavor, False)]) for k in keys}
        for traced in (False, True):
            line = f"{flavor:<9}{'traced' if traced else 'plain':<9}"
            for k in keys:
                values = [r[k] for r in figures[(flavor, traced)]]
                med = statistics.median(values)
                cell = f"{med:.1f} [{min(values):.1f}..{max(values):.1f}]"
                if traced:
                    cell = f"{med - base[k]:+.1f} " + cell
                line += cell.rjust(30)
            print(line)


if __name__ == "__main__":
    main()
