#!/usr/bin/python3
"""htrace-score's projection from a short run against the size a longer run of the same program
really wrote. For each case: trace the short run and the long run, take the long run's length T
(its mean window from the end of MPI_Init to the start of MPI_Finalize, as htrace-score measures
it) and its ranks N, project the short run's archive to N ranks and T seconds
(`htrace-score --ranks N --seconds T --json SHORT`), and to N ranks doing K times its work
(`--work-factor K`, K the ratio of the runs' steps), and compare both with the long archive's size
on disk. One table row per case and run on stdout; the commands on stderr.

usage: bench/score/run.py [--build BUILD] [--cases a,b] [--work DIR] [--repeat K]
  BUILD: an Open MPI build with libhtrace, htrace-score, tests/score/score_steady,
  examples/pingpong-ring and examples/hybrid-jacobi (default build/)."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none"]

# name: (program relative to BUILD, short arguments, long arguments, the long run's work per rank
# in short runs, ranks of the short run, ranks of the long run, extra environment)
CASES = {
    "steady4": ("tests/score/score_steady", ["5"], ["60"], 12, 4, 4, {}),
    "steady2to4": ("tests/score/score_steady", ["5"], ["60"], 12, 2, 4, {}),
    "jacobi": ("examples/hybrid-jacobi/hybrid-jacobi", ["60", "256", "1024"],
               ["600", "256", "1024"], 10, 2, 2, {"OMP_NUM_THREADS": "2"}),
    "pingpong": ("examples/pingpong-ring/pingpong-ring", ["300"], ["3000"], 10, 4, 4, {}),
}


def archive_bytes(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)


def trace(build, program, args, ranks, env, work, name):
    archive = os.path.join(work, name)
    shutil.rmtree(archive, ignore_errors=True)
    variables = dict(env, LD_PRELOAD=os.path.join(build, "libtrace", "libhtrace.so"),
                     HTRACE_ARCHIVE_DIR=work, HTRACE_ARCHIVE_NAME=name)
    command = MPIRUN + ["-np", str(ranks)]
    for key, value in variables.items():
        command += ["-x", f"{key}={value}"]
    command += [os.path.join(build, program)] + args
    print("$ " + " ".join(command), file=sys.stderr)
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return archive


def score(build, archive, *options):
    command = [os.path.join(build, "tools", "htrace-score", "htrace-score"), "--json", archive,
               *options]
    print("$ " + " ".join(command), file=sys.stderr)
    return json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--work")
    parser.add_argument("--repeat", type=int, default=1)
    o = parser.parse_args()
    build = os.path.abspath(o.build)
    work = o.work or tempfile.mkdtemp(prefix="htrace-score-bench-")
    os.makedirs(work, exist_ok=True)
    print("| case | short run | long run | N | T (s) | written (bytes) | by T: projected | error "
          "| by K: projected | error | short run's s per step / long run's |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name in o.cases.split(","):
        program, short_args, long_args, k_work, short_ranks, long_ranks, env = CASES[name]
        for k in range(o.repeat):
            short = trace(build, program, short_args, short_ranks, env, work, f"{name}-short-{k}")
            long = trace(build, program, long_args, long_ranks, env, work, f"{name}-long-{k}")
            t = score(build, long)["model"]["seconds"]
            by_t = score(build, short, "--ranks", str(long_ranks), "--seconds", repr(t))
            by_k = score(build, short, "--ranks", str(long_ranks), "--work-factor", str(k_work))
            written = archive_bytes(long)
            error = [100 * (p["projection"]["total_bytes"] - written) / written for p in (by_t, by_k)]
            speed = by_t["model"]["seconds"] * k_work / t
            print(f"| {name} | {os.path.basename(program)} {' '.join(short_args)}, "
                  f"{short_ranks} ranks | {' '.join(long_args)}, {long_ranks} ranks | "
                  f"{long_ranks} | {t:.2f} | {written:,} | "
                  f"{by_t['projection']['total_bytes']:,.0f} | {error[0]:+.1f} % | "
                  f"{by_k['projection']['total_bytes']:,.0f} | {error[1]:+.1f} % | {speed:.2f} |",
                  flush=True)
    if not o.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
