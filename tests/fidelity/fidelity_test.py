"""fidelity_test.py CASE: runs one of bench/fidelity's cases with this build and asserts issue 15's
bounds for it (bench/fidelity/fidelity_cases.py: bounds()). Exit 0 pass, 1 fail, 77 skip (no time
namespaces or no hpcc). HTRACE_FIDELITY_KEEP=1 keeps the archives (their path is printed)."""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.environ["HTRACE_SOURCE_DIR"], "bench", "fidelity"))
import fidelity_cases as fc  # noqa: E402


def main(case):
    build = fc.Build(os.environ["HTRACE_BUILD_DIR"], os.environ["HTRACE_BUILD_DIR"])
    build.check()
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
