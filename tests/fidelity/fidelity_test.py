"""fidelity_test.py CASE: runs one of the fidelity cases with this build and asserts the
ground-truth bounds for it (tests/lib/htrace_test/fidelity.py: bounds()), or checks the instrument itself
(CASE = instrument). Exit 0 pass, 1 fail, 77 skip (no time namespaces or no hpcc).
HTRACE_FIDELITY_KEEP=1 keeps the archives (their path is printed); HTRACE_FIDELITY_TOOLS=DIR takes
the programs of tests/fidelity/instrument from another build (to run these tests against an older
htrace build)."""
import os
import shutil
import sys
import tempfile

from htrace_test import fidelity as fc


def instrument(build, work):
    """The instrument itself: an archive compared with itself moves nothing, keeps every message's
    order, and against a truth that puts rank 1 7 us ahead it is off by exactly 7 us on every
    event of rank 1 and by 0 on rank 0 (the common shift)."""
    archive = os.path.join(work, "small")
    # No sync: both ranks stamp with the host's one CLOCK_MONOTONIC, so "one clock" holds exactly;
    # a sync that a loaded machine leaves undecided would add its own error to the instrument's.
    fc.trace_one_host(build, archive, 2, [build.tool("fidelity_pingpong"), "2000"], sync="none")
    c = fc.compare(build, archive, archive, 0, truth_offsets=[0, 7000])
    err, per_rank = c["truth"]["abs_error_ns"], c["truth"]["signed_median_by_rank_ns"]
    checks = [
        (f"2000 messages matched, none unmatched: {c['messages']}, {c['unmatched_p2p']}",
         c["messages"] == 2000 and c["unmatched_p2p"] == 0 and c["unresolved_p2p"] == 0),
        (f"nothing moved: {c['events_moved']}", c["events_moved"] == 0),
        (f"one clock: no receive before its send: {c['p2p_in']}", c["p2p_in"]["receive_before_send"] == 0
         and c["p2p_in"] == c["p2p_out"]),
        (f"truth arithmetic: shift 0, rank 1 exactly 7000 ns off: {c['truth']}",
         c["truth"]["shift_ns"] == 0 and per_rank == {"0": 0, "1": 7000} and err["max"] == 7000),
        (f"unchanged intervals only: {c['deviation_time_ns']}, split {c['split_equal_timestamps']}",
         all(v == 0 for k, v in c["deviation_time_ns"].items() if k != "0")
         and c["split_equal_timestamps"] == 0),
    ]
    failed = 0
    for what, holds in checks:
        print(f"  {'ok  ' if holds else 'FAIL'} {what}")
        failed += not holds
    print(("FAIL " if failed else "PASS ") + "instrument")
    return 1 if failed else 0


def main(case):
    build = fc.Build(os.environ["HTRACE_BUILD_DIR"],
                     os.environ.get("HTRACE_FIDELITY_TOOLS", os.environ["HTRACE_BUILD_DIR"]))
    build.check()
    if case == "instrument":
        work = tempfile.mkdtemp(prefix="htrace-fidelity-instrument-")
        try:
            return instrument(build, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    work = tempfile.mkdtemp(prefix=f"htrace-fidelity-{case}-")
    keep = os.environ.get("HTRACE_FIDELITY_KEEP") == "1"
    try:
        result = fc.CASES[case](build, work, {})
    except fc.Skip as why:
        print(f"SKIP {case}: {why}")
        return fc.SKIP
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    r, c = result.report, result.compare
    print(f"{case}: {result.description}")
    print(f"  {c['events']} events, {c['messages']} p2p messages; traced in {result.trace_seconds:.1f} s, "
          f"corrected in {result.correct_seconds:.1f} s")
    print(f"  report: violations before {r.get('violations_before')}, after {r.get('violations_after')}, "
          f"l_min {r.get('lmin_ns')}, presynced locations {r.get('presynced_locations')}")
    print(f"  moved {c['events_moved']} events, displacement {c['displacement_ns']}")
    if "truth" in c:
        print(f"  error vs truth after correction: {c['truth']}")
        print(f"  error vs truth before correction: {c['truth_in']}")
        print(f"  clock error bound vs largest error per rank (ns): {fc.bound_vs_truth(result)}")
    if result.ends_only:
        print(f"  with INIT and FINAL only: error vs truth after correction: "
              f"{result.ends_only.compare.get('truth')}")
    if keep:
        print(f"  archives kept in {work}")
    failed = 0
    for what, holds in fc.bounds(result):
        print(f"  {'ok  ' if holds else 'FAIL'} {what}")
        failed += not holds
    print(("FAIL " if failed else "PASS ") + case)
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1]))
    except fc.CaseError as error:
        print(f"FAIL {sys.argv[1]}: {error}")
        sys.exit(1)
