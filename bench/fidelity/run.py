#!/usr/bin/env python3
"""bench/fidelity: trace, correct and compare the fidelity cases with one build of htrace and print
one table row per case (see README.md).

usage: run.py --build DIR [--tools DIR] [--cases a,b,...] [--work DIR] [--copy] [--json FILE]
  --build  the htrace build under test (libhtrace, htrace-correct, the cluster runner, the shim)
  --tools  the build holding the fidelity programs (tests/fidelity/instrument; default: --build);
           lets an older build, which has no fidelity tools, be measured with the same instrument
  --cases  comma-separated subset of the cases of tests/lib/htrace_test/fidelity.py (CASES):
           pingpong_1host, demo_ring, ring_none, ring_none_4nodes, hpcc_none, drift, drift_step,
           drift_ramp, raw_4x2, hpcc_1host, pwscf_none, pwscf_none_2pn, pwscf_none_4nodes
           (default: all)
  --copy   also time the correction against a plain OTF2 copy (the build's bench/correct) on the
           single-host cases
  --json   write every case's raw measurements (report, comparison) to FILE
"""
import argparse
import json
import os
import re
import sys
import tempfile
import shutil
import dataclasses

# The cases and bounds are the ground-truth tests' (tests/lib/htrace_test/fidelity.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "lib"))
from htrace_test import fidelity as fc  # noqa: E402


def copy_bench(build, archive, work, repeats=3):
    """The build's own bench/correct: a plain OTF2 copy and the correction, alternated (medians)."""
    program = build.path("bench", "correct", "correct_bench")
    if not os.path.exists(program):
        return {}
    text = fc.run([program, archive, os.path.join(work, "copy-bench"), str(repeats)],
                  timeout=600, what="correct_bench").stdout
    shutil.rmtree(os.path.join(work, "copy-bench"), ignore_errors=True)
    copy = re.search(r"plain copy\s+median ([\d.]+) s", text)
    corr = re.search(r"correction\s+median ([\d.]+) s", text)
    if not copy or not corr:
        return {}
    return {"copy_s": float(copy.group(1)), "correct_s": float(corr.group(1)),
            "ratio": float(corr.group(1)) / float(copy.group(1))}


def us(ns):
    """Microseconds, without exponents: 17100, 9.85, 0.004."""
    if ns is None:
        return "-"
    v = ns / 1000
    return f"{v:.0f}" if abs(v) >= 100 else f"{v:.3g}" if abs(v) >= 1 else f"{v:.3f}".rstrip("0").rstrip(".") or "0"


def deviation_percent(compare):
    dev = compare["deviation_time_ns"]
    total = sum(dev.values()) or 1
    return "/".join(f"{100 * dev[k] / total:.3g}" for k in ("0", "<1%", "1-10%", "10-100%", ">100%"))


def row(result):
    r, c = result.report, result.compare
    err = c.get("truth", {}).get("abs_error_ns", {})
    disp = c["abs_displacement_ns"]
    moved = f"{c['events_moved']} ({100 * c['events_moved'] / max(c['events'], 1):.3g} %)"
    viol = f"{fc.violations(r, 'violations_before')} / {fc.violations(r, 'violations_after')}"
    errors = f"{us(err.get('median'))} / {us(err.get('p99'))} / {us(err.get('max'))}" if err else "-"
    before = c.get("truth_in", {}).get("abs_error_ns", {})
    errors_in = (f"{us(before.get('median'))} / {us(before.get('p99'))} / {us(before.get('max'))}"
                 if before else "-")
    copy = f"{result.copy['ratio']:.2f}x" if result.copy else "-"
    # The ranks off the reference clock: how far the clock error bound is above the error.
    measured = {rank: bxe for rank, bxe in fc.bound_vs_truth(result).items() if bxe[0] > 0}
    bound = " ".join(f"{us(b)}/{us(x)}/{us(e)}" for _, (b, x, e) in sorted(measured.items())) or "-"
    spread = c.get("truth", {}).get("round_spread_ns", {})
    spread = f"{us(spread['median'])} / {us(spread['p90'])}" if spread.get("rounds") else "-"
    clocks = (f"{result.clocks['count']} {result.clocks['interval']}, {result.clocks['percent']:.3g} %"
              if result.clocks else "-")
    checks = fc.bounds(result)
    ok = "-" if not checks else ("pass" if all(h for _, h in checks) else
                                 "FAIL " + str(sum(not h for _, h in checks)))
    return [result.case, f"{c['events']}", f"{c['messages']}",
            f"{c['p2p_in']['receive_before_send']}", f"{r.get('presynced_locations', '-')}", viol, moved,
            f"{us(disp['max'])} / {us(disp['p99'])}", errors_in, errors, deviation_percent(c),
            f"{c['split_equal_timestamps']}", spread, clocks, bound, f"{result.correct_seconds:.2f}",
            copy, ok]


HEADER = ["case", "events", "p2p msgs", "recv<send in IN", "presynced", "violations before / after",
          "events moved", "max / p99 abs. displacement us", "IN error vs truth median / p99 / max us",
          "OUT error vs truth median / p99 / max us",
          "interval deviation % of time (0/<1/1-10/10-100/>100 %)", "equal stamps split",
          "barrier spread median / p90 us", "measurements during the run, share of it",
          "clock error bound / expected / max error us (measured ranks)", "correct s",
          "correct/copy", "bounds"]


def print_table(rows):
    print("| " + " | ".join(HEADER) + " |")
    print("|" + "---|" * len(HEADER))
    for cells in rows:
        print("| " + " | ".join(cells) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True)
    ap.add_argument("--tools")
    ap.add_argument("--cases", default=",".join(fc.CASES))
    ap.add_argument("--work")
    ap.add_argument("--copy", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--drift-seconds", type=float, default=10)
    ap.add_argument("--steady-seconds", type=float, default=40)
    ap.add_argument("--sync-interval-ms", type=int,
                    help="the drift_step_auto* cases with this fixed interval instead of the default")
    args = ap.parse_args()

    build = fc.Build(os.path.abspath(args.build), os.path.abspath(args.tools or args.build))
    build.check()
    work = args.work or tempfile.mkdtemp(prefix="htrace-fidelity-")
    os.makedirs(work, exist_ok=True)
    opts = {"copy": copy_bench if args.copy else None, "drift_seconds": args.drift_seconds,
            "steady_seconds": args.steady_seconds, "sync_interval_ms": args.sync_interval_ms}
    rows, raw = [], []
    for name in args.cases.split(","):
        print(f"fidelity: {name} ...", file=sys.stderr, flush=True)
        try:
            result = fc.CASES[name](build, work, opts)
        except fc.Skip as why:
            print(f"fidelity: {name} skipped: {why}", file=sys.stderr)
            continue
        except fc.CaseError as why:
            print(f"fidelity: {name} failed: {why}", file=sys.stderr)
            rows.append([name] + ["error"] * (len(HEADER) - 1))
            continue
        print(f"  traced in {result.trace_seconds:.1f} s, corrected in {result.correct_seconds:.1f} s",
              file=sys.stderr)
        rows.append(row(result))
        if result.ends_only:  # the same trace corrected with INIT and FINAL only
            rows.append(row(result.ends_only))
        raw.append(dataclasses.asdict(result))
        for what, holds in fc.bounds(result):
            print(f"  {'ok  ' if holds else 'FAIL'} {what}", file=sys.stderr)
    print(f"build {build.dir} (tools {build.tools}), work {work}")
    print_table(rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(raw, f, indent=1)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
