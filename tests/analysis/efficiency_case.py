#!/usr/bin/python3
"""htrace-report's POP efficiency metrics, wait-state CSV and --before comparison, one behaviour
per case (usage: efficiency_case.py CASE):
  imbalance  4 ranks compute 20, 40, 60, 80 us, then meet in an MPI_Barrier that all leave at
             90 us: LB = 51/81, SerE = 1, TrfE = CommE = 81/91, PE = 51/91 for the run (worked
             by hand in analysis/README.md), and in the window 30..70 us LB = 0.5, SerE = TrfE = 1
  pipeline   rank r receives from r-1, computes 10 us, sends to r+1, then all meet in a barrier:
             perfectly balanced (LB = 1) but serialized, SerE = 11/46, TrfE = 46/51, PE = 11/51
  mixed      every wait-state case of waits_archive.py one after another, the whole run and a
             window cutting through calls: every figure (per location useful, MPI and waiting
             time, the ideal runtime, the five metrics) equals the one computed here from the
             generator's own timestamps
  csv        the mixed archive with a window: --format csv holds exactly the figures of --format
             json, row for row, and nothing else
  before     the pipeline with one rank's clock 25 us ahead and another's 12 us behind, corrected
             with htrace-correct: --before's JSON holds the raw archive's analysis as
             --format json of it writes it and the corrected one's likewise, names exactly the
             wait-state figures that differ by the documented thresholds with the right change,
             flags exactly the headline figures that do, and the CSV and HTML say the same"""
import csv
import json
import math
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import efficiency_checks  # noqa: E402
import waits_archive as wa  # noqa: E402
from otf2.enums import CollectiveOp  # noqa: E402
from htrace_test.build import tool  # noqa: E402
from htrace_test.check import Expectations, run_or_exit  # noqa: E402

BUILD = os.environ["HTRACE_BUILD_DIR"]
REPORT = tool("htrace-report")
CORRECT = tool("htrace-correct")
case = sys.argv[1]
WORK = os.path.join(BUILD, "tests", "analysis", "out-efficiency-" + case)
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
expect = Expectations()
failures = expect.failures
run = run_or_exit
US = wa.US
METRICS = efficiency_checks.METRICS
json_rows, csv_rows = efficiency_checks.json_rows, efficiency_checks.csv_rows


def check_identities(e, label):
    efficiency_checks.check_identities(expect, e, label)


def report(archive, fmt="json", window=None, before=None):
    out = "%s.%s%s" % (archive.rstrip("/"), "before." if before else "", fmt)
    args = [REPORT, "--no-progress", "--format", fmt, "-o", out, archive]
    if window:
        args += ["--window", window]
    if before:
        args += ["--before", before]
    run(args)
    if fmt == "csv":
        with open(out, newline="") as f:
            return list(csv.reader(f))
    with open(out) as f:
        return json.load(f) if fmt == "json" else f.read()


# ---- the model, from the generator's own calls (no htrace code)

def truth(r, window=None):
    """POP metrics of a waits_archive Run: every rank spans 0 .. the archive's end (its "main");
    useful = span - time in MPI calls, waiting = each call's longest wait, all clipped to the
    window; ideal runtime = max(useful + waiting)."""
    end = max(c.leave for calls in r.calls for c in calls) + US
    b, e = window if window else (0, end)
    clip = lambda lo, hi: max(0, min(hi, e) - max(lo, b))
    longest = {}
    for _, call, ns, _ in r.waits:
        longest[id(call)] = max(longest.get(id(call), 0), ns)
    locs = []
    for rank in range(wa.RANKS):
        mpi = sum(clip(c.enter, c.leave) for c in r.calls[rank])
        waiting = sum(clip(c.enter, c.enter + longest.get(id(c), 0)) for c in r.calls[rank])
        locs.append({"rank": True, "useful_ns": clip(0, end) - mpi, "mpi_ns": mpi, "waiting_ns": waiting})
    useful = [l["useful_ns"] for l in locs]
    t, ideal = e - b, max(l["useful_ns"] + l["waiting_ns"] for l in locs)
    lb = (sum(useful) / len(useful)) / max(useful)
    ser, trf = max(useful) / ideal, ideal / t
    return {"begin_ns": b, "end_ns": e, "runtime_ns": t, "ideal_runtime_ns": ideal,
            "max_useful_ns": max(useful), "ranks": wa.RANKS, "locations": locs,
            "load_balance": lb, "serialization_efficiency": ser, "transfer_efficiency": trf,
            "communication_efficiency": ser * trf, "parallel_efficiency": lb * ser * trf}


def check_equal(got, want, label):
    for key, v in want.items():
        if key == "locations":
            expect(got["locations"] == v, "%s: locations are %s, expected %s" % (label, got["locations"], v))
        elif isinstance(v, float):
            expect(got[key] is not None and math.isclose(got[key], v, rel_tol=1e-12),
                   "%s: %s is %r, expected %r" % (label, key, got[key], v))
        else:
            expect(got[key] == v, "%s: %s is %r, expected %r" % (label, key, got[key], v))
    check_identities(got, label)


def generated(name, build):
    archive = os.path.join(WORK, name)
    r = wa.Run()
    build(r)
    wa.write(archive, r)
    return archive, r


def barrier(r, t0, enters, leave):
    calls = wa.collective(r, t0, "MPI_Barrier", CollectiveOp.BARRIER, enters, leave)
    for c in calls:
        r.expect("wait_at_barrier", c, calls)


def imbalance(r):
    barrier(r, 0, [20 * US, 40 * US, 60 * US, 80 * US], 90 * US)


def pipeline(r, shift=(0, 0, 0, 0), base=0):
    """Rank r receives from r-1 (Late Sender), computes 10 us, sends to r+1; all meet in a
    barrier at the end, starting at `base` ns. `shift`: each rank's clock error in ns, added to
    its timestamps."""
    T = lambda rank, us: base + us * US + shift[rank]
    for rank in range(wa.RANKS):
        start = 0  # us
        if rank > 0:
            start = 12 * rank
            r.call(rank, "MPI_Recv", T(rank, 0), T(rank, start), ("mpi_recv", rank - 1, 7, 8))
        if rank < wa.RANKS - 1:
            r.call(rank, "MPI_Send", T(rank, start + 10), T(rank, start + 11), ("mpi_send", rank + 1, 7, 8))
    calls = [r.call(rank, "MPI_Barrier", T(rank, enter), T(rank, 50), ("mpi_collective_begin",),
                    ("mpi_collective_end", CollectiveOp.BARRIER, wa.UNDEFINED_ROOT, 8, 8))
             for rank, enter in enumerate((11, 23, 35, 46))]
    for c in calls:
        r.expect("wait_at_barrier", c, calls)
    for rank in range(1, wa.RANKS):
        recv = r.calls[rank][0]
        send = r.calls[rank - 1][1 if rank > 1 else 0]
        r.expect("late_sender", recv, [send])


def case_imbalance():
    archive, r = generated("imbalance", imbalance)
    got = report(archive, window="0.00003:0.00007")["efficiency"]
    # By hand: useful 21, 41, 61, 81 us of 91; waiting 60, 40, 20, 0 us; ideal runtime 81 us.
    run_want = {"runtime_ns": 91 * US, "ideal_runtime_ns": 81 * US, "max_useful_ns": 81 * US,
                "load_balance": 51 / 81, "serialization_efficiency": 1.0,
                "transfer_efficiency": 81 / 91, "communication_efficiency": 81 / 91,
                "parallel_efficiency": 51 / 91}
    check_equal(got["run"], run_want, "imbalance run")
    check_equal(got["run"], truth(r), "imbalance run (generator)")
    # 30..70 us: useful 0, 10, 30, 40 us; waiting 40, 30, 10, 0 us.
    win_want = {"begin_ns": 30 * US, "end_ns": 70 * US, "runtime_ns": 40 * US, "ideal_runtime_ns": 40 * US,
                "load_balance": 0.5, "serialization_efficiency": 1.0, "transfer_efficiency": 1.0,
                "parallel_efficiency": 0.5}
    check_equal(got["window"], win_want, "imbalance window")
    check_equal(got["window"], truth(r, (30 * US, 70 * US)), "imbalance window (generator)")
    expect(got["window"]["from"] == "--window", "imbalance: window from %r" % got["window"]["from"])
    print("imbalance run", {m: got["run"][m] for m in METRICS})


def case_pipeline():
    archive, r = generated("pipeline", pipeline)
    got = report(archive)["efficiency"]
    want = {"runtime_ns": 51 * US, "ideal_runtime_ns": 46 * US, "max_useful_ns": 11 * US,
            "load_balance": 1.0, "serialization_efficiency": 11 / 46, "transfer_efficiency": 46 / 51,
            "communication_efficiency": 11 / 51, "parallel_efficiency": 11 / 51}
    check_equal(got["run"], want, "pipeline run")
    check_equal(got["run"], truth(r), "pipeline run (generator)")
    expect(got["window"] is None, "pipeline: a window without --window or clock measurements")
    print("pipeline run", {m: got["run"][m] for m in METRICS})


def mixed_archive():
    archive = os.path.join(WORK, "mixed")
    r, t0 = wa.Run(), 100 * US
    wa.mixed(r, t0)
    wa.write(archive, r)
    return archive, r


MIXED_WINDOW = ("0.00015:0.0004", (150 * US, 400 * US))


def case_mixed():
    archive, r = mixed_archive()
    got = report(archive, window=MIXED_WINDOW[0])["efficiency"]
    check_equal(got["run"], truth(r), "mixed run")
    check_equal(got["window"], truth(r, MIXED_WINDOW[1]), "mixed window")
    print("mixed run", {m: round(got["run"][m], 6) for m in METRICS})
    print("mixed window", {m: round(got["window"][m], 6) for m in METRICS})


def case_csv():
    archive, _ = mixed_archive()
    doc = report(archive, window=MIXED_WINDOW[0])
    table = report(archive, "csv", window=MIXED_WINDOW[0])
    expect(table[0] == ["archive", "section", "scope", "key", "split", "item", "value"], "csv header %s" % table[0])
    got, want = sorted(csv_rows(table[1:])), sorted(json_rows(doc))
    expect(got == want, "csv and json differ: only in csv %s; only in json %s"
           % (sorted(set(got) - set(want))[:5], sorted(set(want) - set(got))[:5]))
    print("csv: %d rows, the same as the JSON's figures" % len(got))


def changes(before, after):
    """The wait-state figures that differ by at least 1 us and 10 % of the larger, as the report
    documents it, with the change's kind."""
    def material(a, b):
        return abs(a - b) >= 1000 and abs(a - b) >= 0.1 * max(a, b)

    def kind(a, b):
        return "appears" if a == 0 else "vanishes" if b == 0 else "grows" if b > a else "shrinks"

    out = []
    for key in before:
        b, a = before[key], after[key]
        pairs = [("total_ns", "", b["total_ns"], a["total_ns"])]
        for split in ("by_location", "caused_by"):
            pairs += [(split, str(i), x, y) for i, (x, y) in enumerate(zip(b[split], a[split]))]
        for split, name in (("by_region", "region"), ("by_comm", "comm")):
            x, y = {e[name]: e["ns"] for e in b[split]}, {e[name]: e["ns"] for e in a[split]}
            pairs += [(split, n, x.get(n, 0), y.get(n, 0)) for n in sorted(set(x) | set(y))]
        out += [{"pattern": key, "split": split, "item": item, "before_ns": x, "after_ns": y, "change": kind(x, y)}
                for split, item, x, y in pairs if material(x, y)]
    return out


def headline(before, after):
    total = lambda d: sum(p["total_ns"] for p in d["wait_states"].values())
    tb, ta = total(before), total(after)
    out = [("total_waiting_ns", "run", tb, ta, abs(tb - ta) >= 1000 and abs(tb - ta) >= 0.1 * max(tb, ta))]
    for scope in ("run", "window"):
        b, a = before["efficiency"][scope], after["efficiency"][scope]
        if b is None or a is None:
            continue
        out += [(m, scope, b[m], a[m], abs(a[m] - b[m]) >= 0.01) for m in METRICS]
    return out


def case_before():
    """The pipeline with rank 1's clock 25 us ahead and rank 2's 12 us behind: rank 2 receives
    before rank 1 sent and leaves the barrier before rank 1 entered it."""
    raw = os.path.join(WORK, "skewed")
    r = wa.Run()
    pipeline(r, shift=(0, 25 * US, -12 * US, 0), base=100 * US)
    wa.write(raw, r)
    corrected = raw + "-corrected"
    run([CORRECT, "--no-progress", raw, corrected], ok=(0, 1))
    window = "0.0001:0.00015"
    doc = report(corrected, window=window, before=raw)
    alone_raw, alone = report(raw, window=window), report(corrected, window=window)
    for key in ("wait_states", "efficiency"):
        expect(doc["before"][key] == alone_raw[key], "before: its %s differ from --format json of the raw archive" % key)
        expect(doc[key] == alone[key], "before: the %s differ from --format json of the corrected archive" % key)
    expect(doc["before"]["archive"] == raw, "before: archive %r" % doc["before"]["archive"])
    want = changes(alone_raw["wait_states"], alone["wait_states"])
    got = doc["comparison"]["wait_states"]
    expect(sorted(got, key=json.dumps) == sorted(want, key=json.dumps),
           "before: changes %s, expected %s" % (got, want))
    kinds = {c["change"] for c in got}
    expect("appears" in kinds or "vanishes" in kinds, "before: no wait state changes sign: %s" % got)
    want_h = headline(alone_raw, alone)
    got_h = [(h["figure"], h["scope"], h["before"], h["after"], h["material"]) for h in doc["comparison"]["headline"]]
    expect(len(got_h) == len(want_h) and all(
        g[:2] == w[:2] and math.isclose(g[2], w[2]) and math.isclose(g[3], w[3]) and g[4] == w[4]
        for g, w in zip(got_h, want_h)), "before: headline %s, expected %s" % (got_h, want_h))
    expect(any(h[4] for h in got_h), "before: no headline figure differs materially")
    for c in got:
        print("  %(pattern)s %(split)s %(item)s: %(before_ns)d -> %(after_ns)d ns (%(change)s)" % c)
    for h in got_h:
        print("  %s (%s): %s -> %s%s" % (h[0], h[1], h[2], h[3], " MATERIAL" if h[4] else ""))
    # The CSV: both analyses and the same comparison.
    table = csv_rows(report(corrected, "csv", window=window, before=raw)[1:])
    mine = sorted(t for t in table if t[0] == "archive")
    theirs = sorted(t for t in table if t[0] == "before")
    expect(mine == sorted(json_rows(doc)), "before csv: the archive's rows differ from the JSON")
    expect(theirs == sorted(json_rows(doc["before"], "before")), "before csv: the before rows differ from the JSON")
    csv_changes = sorted(t[3:] for t in table if t[0] == "comparison" and t[1] == "wait_states")
    expect(csv_changes == sorted((c["pattern"], c["split"], c["item"], c["change"]) for c in got),
           "before csv: changes %s" % csv_changes)
    csv_material = {(t[3], t[2]): t[6] for t in table if t[0] == "comparison" and t[1] == "headline" and t[4] == "material"}
    expect(csv_material == {(h[0], h[1]): "true" if h[4] else "false" for h in got_h},
           "before csv: material %s" % csv_material)


if case == "imbalance":
    case_imbalance()
elif case == "pipeline":
    case_pipeline()
elif case == "mixed":
    case_mixed()
elif case == "csv":
    case_csv()
elif case == "before":
    case_before()
else:
    sys.exit("unknown case " + case)
if failures:
    sys.exit("%d failure(s)" % len(failures))
print("ok")
