#!/usr/bin/python3
"""CLI tests of htrace-bench: usage errors, a short run per synchronization method with its CSV
columns checked, and `compare` on files with known Wilcoxon p-values.

usage: bench_cli_test.py usage|run|compare   (environment from tests/HtraceTesting.cmake)
"""
import csv
import os
import subprocess
import sys
import tempfile

from htrace_test.mpi import mpirun_command
from htrace_test.build import tool

BENCH = tool("htrace-bench")
SUMMARY = ("op,bytes,sync,ranks,measurements,invalid,outliers,median_ns,mean_ns,min_ns,max_ns,"
           "exit_skew_median_ns,exit_skew_max_ns").split(",")
RAW = "op,bytes,sync,index,runtime_ns,exit_skew_ns,valid".split(",")


def bench(*args, mpi=0):
    cmd = [BENCH] if not mpi else mpirun_command(mpi, [BENCH])
    return subprocess.run(cmd + list(args), capture_output=True, text=True, timeout=100)


def expect(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)


def test_usage():
    for args in (["--bogus"], ["--sync", "fast"], ["--sizes", "12q"], ["--budget", "0"],
                 ["--ops", "gather"], ["stray"], ["--csv"], ["compare", "only-one.csv"],
                 ["compare", "a", "b", "--what"]):
        r = bench(*args)
        expect(r.returncode == 2, "%s: exit %d, expected 2" % (args, r.returncode))
        expect(r.stderr.startswith("htrace-bench: error:") or r.stderr.startswith("usage:"),
               "%s: message %r" % (args, r.stderr[:80]))
    r = bench("--help")
    expect(r.returncode == 0 and "--sync METHOD" in r.stdout, "--help")
    r = bench("compare", "/nonexistent/a.csv", "/nonexistent/b.csv")
    expect(r.returncode == 1 and "htrace-bench: error: '/nonexistent/a.csv':" in r.stderr,
           "missing input: %r" % r.stderr)


def test_run(work):
    for sync in ("barrier", "window", "roundtime", "harmonize"):
        summary, raw = os.path.join(work, sync + ".csv"), os.path.join(work, sync + "-raw.csv")
        r = bench("--ops", "bcast,barrier", "--sizes", "8,1k", "--budget", "0.15", "--sync", sync,
                  "--slack-factor", "20", "--seed", "7", "--csv", summary, "--raw", raw, mpi=2)
        expect(r.returncode == 0, "%s: exit %d: %s" % (sync, r.returncode, r.stderr[-500:]))
        with open(summary) as f:
            rows = list(csv.DictReader(f))
            expect(list(rows[0].keys()) == SUMMARY, "summary columns %s" % list(rows[0].keys()))
        expect(sorted((row["op"], row["bytes"]) for row in rows) ==
               [("barrier", "0"), ("bcast", "1024"), ("bcast", "8")], "%s: rows %s" % (sync, rows))
        with open(raw) as f:
            samples = list(csv.DictReader(f))
            expect(list(samples[0].keys()) == RAW, "raw columns")
        for row in rows:
            n = int(row["measurements"])
            # Batch methods agree on validity every 16 measurements; Round-Time after each one.
            expect(n >= (1 if sync == "roundtime" else 16), "%s: %s" % (sync, row))
            expect(row["sync"] == sync and row["ranks"] == "2", "%s: %s" % (sync, row))
            mine = [s for s in samples if (s["op"], s["bytes"]) == (row["op"], row["bytes"])]
            expect(len(mine) == n, "%s: %d raw rows for %d measurements" % (sync, len(mine), n))
            expect(sum(s["valid"] == "0" for s in mine) == int(row["invalid"]), "invalid count")
            valid = int(row["measurements"]) - int(row["invalid"])
            if valid:
                expect(0 < float(row["median_ns"]) < 1e8, "%s: median %s" % (sync, row))
                expect(float(row["min_ns"]) <= float(row["median_ns"]) <= float(row["max_ns"]),
                       "order of statistics")
            expect(all(int(s["runtime_ns"]) > 0 for s in mine if s["valid"] == "1"),
                   "positive run-times")
        print(sync, "ok:", [(r["op"], r["bytes"], r["measurements"], r["median_ns"]) for r in rows])


def write_raw(path, runtimes):
    with open(path, "w") as f:
        f.write(",".join(RAW) + "\n")
        for i, v in enumerate(runtimes):
            f.write("allreduce,8,roundtime,%d,%d,100,1\n" % (i, v))
        f.write("allreduce,8,roundtime,%d,1,100,0\n" % len(runtimes))  # invalid: ignored


def test_compare(work):
    a, b, out = (os.path.join(work, n) for n in ("a.csv", "b.csv", "out.csv"))
    write_raw(a, [1000, 2000, 3000])
    write_raw(b, [4000, 5000, 6000])
    r = bench("compare", a, b, "-o", out)
    expect(r.returncode == 0, "compare: %s" % r.stderr)
    with open(out) as f:
        rows = list(csv.DictReader(f))
    expect(len(rows) == 1, "one experiment in common")
    row = rows[0]
    # Complete separation of 3 vs 3: exact two-sided p = 2 / C(6,3) = 0.1.
    expect(row["n_a"] == "3" and row["test"] == "exact", row)
    expect(abs(float(row["p_value"]) - 0.1) < 1e-9, "p %s" % row["p_value"])
    expect(abs(float(row["ratio_b_a"]) - 2.5) < 1e-9, "ratio %s" % row["ratio_b_a"])
    # R's ?wilcox.test example scaled to ns: W = 35, two-sided p = 0.2544.
    write_raw(a, [800, 830, 1890, 1040, 1450, 1380, 1910, 1640, 730, 1460])
    write_raw(b, [1150, 880, 900, 740, 1210])
    r = bench("compare", a, b)
    expect(r.returncode == 0, "compare to stdout")
    row = list(csv.DictReader(r.stdout.splitlines()))[0]
    expect(float(row["w"]) == 35 and abs(float(row["p_value"]) - 0.2544) < 5e-4, row)
    with open(b, "w") as f:
        f.write("something,else\n")
    r = bench("compare", a, b)
    expect(r.returncode == 1 and ("'%s'" % b) in r.stderr, "bad header: %r" % r.stderr)
    print("compare ok")


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    with tempfile.TemporaryDirectory(prefix="htrace-bench-test.") as work:
        if mode == "usage":
            test_usage()
        elif mode == "run":
            test_run(work)
        elif mode == "compare":
            test_compare(work)
        else:
            print(__doc__, file=sys.stderr)
            sys.exit(2)
    print("PASS")
