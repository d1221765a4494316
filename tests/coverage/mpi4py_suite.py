#!/usr/bin/python3
"""mpi4py's own test suite (Debian's python3-mpi4py, tests from ../shared/third-party/mpi4py-3.1.4,
MPI_THREAD_MULTIPLE by default) on 1 and 2 ranks, untraced and traced: the same verdict per rank
is the bar; each archive is then read back by tests/lib/trace_check.py (an independent reader:
every message matched, regions balanced, ...) and corrected by htrace-correct (exit 0 expected).
On demand, not under ctest: one traced run writes ~4 M records that the Python reader takes
minutes to check. test_spawn is left out by default (Open MPI 4.1's MPI_Comm_spawn hangs on this
machine traced and untraced alike; the mpi4py benchmark's README counts the hangs).
Outside ctest, put tests/lib on PYTHONPATH.

usage: mpi4py_suite.py --lib LIBHTRACE --correct HTRACE_CORRECT [--ranks 1 2] [--exclude spawn]
                       [--suite DIR] [--keep DIR]"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import trace_check
from htrace_test import mpi4py_suite


def run(args, ranks, work, traced):
    """(exit status, verdict per rank, seconds, libhtrace's log lines) of one run."""
    output = os.path.join(work, "output-%s" % ("traced" if traced else "untraced"))
    r = mpi4py_suite.run(ranks, work, output, suite=args.suite, lib=args.lib if traced else None,
                         archive_name="trace", exclude=args.exclude, timeout=args.timeout)
    if r["hung"]:
        sys.exit(f"mpi4py_suite.py: error: np={ranks} {'traced' if traced else 'untraced'} run "
                 f"hung for {args.timeout} s")
    by_rank = r["verdicts"]
    return r["status"], [by_rank[k] for k in sorted(by_rank)] or ["no verdict"], r["seconds"], r["log"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--correct", required=True)
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--exclude", default="spawn")
    ap.add_argument("--suite", default=mpi4py_suite.DEFAULT_SUITE)
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--keep", help="directory to keep the archives in")
    args = ap.parse_args()
    missing = mpi4py_suite.missing_module()
    if missing:
        sys.exit("mpi4py_suite.py: error: " + missing)
    rows, ok = [], True
    for ranks in args.ranks:
        work = tempfile.mkdtemp(prefix="htrace-mpi4py-")
        u_rc, u_verdict, u_s, _ = run(args, ranks, work, False)
        t_rc, t_verdict, t_s, t_log = run(args, ranks, work, True)
        archive = os.path.join(work, "trace")
        report = trace_check.check(archive)
        corrected = os.path.join(work, "corrected")
        corr = subprocess.run([args.correct, archive, corrected], capture_output=True, text=True)
        summary = [l for l in t_log if "htrace[0]: info" in l]
        same = u_rc == t_rc and u_verdict == t_verdict
        ok &= same and not report.violations and corr.returncode == 0
        rows.append((ranks, f"exit {u_rc}, {' / '.join(u_verdict)}, {u_s:.0f} s",
                     f"exit {t_rc}, {' / '.join(t_verdict)}, {t_s:.0f} s", "yes" if same else "NO",
                     f"{report.events} records, {len(report.messages)} messages, "
                     f"{len(report.violations)} violations", f"exit {corr.returncode}"))
        for line in summary:
            print(f"np={ranks}: {line}")
        for v in report.violations[:10]:
            print(f"np={ranks}: trace_check: {v}")
        if corr.returncode != 0:
            print(f"np={ranks}: htrace-correct: {corr.stderr[-2000:]}")
        if args.keep:
            dest = os.path.join(args.keep, f"np{ranks}")
            shutil.rmtree(dest, ignore_errors=True)
            shutil.copytree(archive, dest)
        shutil.rmtree(work, ignore_errors=True)
    print("\n| ranks | untraced | traced | same | archive (trace_check) | htrace-correct |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
