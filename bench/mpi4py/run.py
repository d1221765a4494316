#!/usr/bin/python3
"""mpi4py's own test suite (../shared/third-party/mpi4py-3.1.4), traced and untraced, alternated:
how often each hangs and whether the traced results equal the untraced ones. Run on
demand on an otherwise idle machine, never by ctest: a run takes tens of seconds, a hang the full timeout.

usage: run.py --lib build/libtrace/libhtrace.so [--runs 20] [--ranks 2] [--timeout 180]
              [--only spawn | --exclude spawn] [--suite DIR]
Needs Debian's python3-mpi4py (the suite must test the installed module, not a copy)."""
import argparse
import collections
import os
import shutil
import sys
import tempfile

# The suite runner is the tests' (tests/lib/htrace_test/mpi4py_suite.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "lib"))
from htrace_test import mpi4py_suite  # noqa: E402


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", required=True, help="libhtrace.so to preload in the traced runs")
    ap.add_argument("--runs", type=int, default=20, help="runs of each kind (default 20)")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=180, help="seconds before a run counts as hung")
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--only", help="test name pattern passed to runtests.py -i")
    group.add_argument("--exclude", help="test name pattern passed to runtests.py -e")
    ap.add_argument("--suite", default=mpi4py_suite.DEFAULT_SUITE, help="mpi4py's test directory")
    return ap.parse_args()


def run_once(args, traced, work):
    """One run; its outcome is the suite's verdict per rank, identical ranks once."""
    r = mpi4py_suite.run(args.ranks, work, os.path.join(work, "output"), suite=args.suite,
                         lib=args.lib if traced else None, only=args.only, exclude=args.exclude,
                         timeout=args.timeout)
    outcome = "hung" if r["hung"] else " | ".join(sorted(set(r["verdicts"].values()))) or "no verdict"
    return {"hung": r["hung"], "status": r["status"], "outcome": outcome, "seconds": r["seconds"],
            "tail": (r["stdout"] + r["stderr"])[-2000:]}


def main():
    args = parse_args()
    if not os.path.exists(os.path.join(args.suite, "runtests.py")):
        sys.exit("run.py: error: no runtests.py in %s (--suite)" % args.suite)
    missing = mpi4py_suite.missing_module()
    if missing:
        sys.exit("run.py: error: " + missing)
    results = {False: [], True: []}
    for i in range(args.runs):
        for traced in (False, True):  # alternated, so both see the same machine
            work = tempfile.mkdtemp(prefix="htrace-mpi4py-")
            r = run_once(args, traced, work)
            shutil.rmtree(work, ignore_errors=True)
            results[traced].append(r)
            print("run %2d %-8s %-6s %5.1f s  %s" % (i + 1, "traced" if traced else "untraced",
                                                   "HUNG" if r["hung"] else "exit %d" % r["status"],
                                                   r["seconds"], r["outcome"]), flush=True)
    print()
    print("| | runs | hangs | outcomes (count) | median s |")
    print("|---|---|---|---|---|")
    for traced in (False, True):
        rs = results[traced]
        counts = collections.Counter(r["outcome"] for r in rs)
        secs = sorted(r["seconds"] for r in rs if not r["hung"])
        median = "%.1f" % secs[len(secs) // 2] if secs else "-"
        print("| %s | %d | %d | %s | %s |" % ("traced" if traced else "untraced", len(rs),
                                             sum(r["hung"] for r in rs),
                                             "; ".join("%s (%d)" % kv for kv in counts.most_common()), median))
    finished = lambda rs: {r["outcome"] for r in rs if not r["hung"]}
    same = finished(results[True]) == finished(results[False])
    print("\ntraced outcomes %s the untraced ones" % ("equal" if same else "DIFFER from"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
