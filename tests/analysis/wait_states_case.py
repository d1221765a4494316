#!/usr/bin/python3
"""htrace-report --format json's wait states, one behaviour per case (usage: wait_states_case.py
CASE):
  late_sender, posting_order, late_receiver, wait_at_barrier, wait_at_nxn, late_broadcast,
  early_reduce, early_scan, sub_communicator, non_blocking, no_waits, wrong_order, mixed
            an archive of waits_archive.py's case (mixed: all of them one after another): every
            pattern's total, calls, longest wait and its splits by waiting rank, by the rank waited
            for, by region and by communicator equal, to the nanosecond, the waits the generator
            computed from its own timestamps, and equal wait_oracle.py's (see traced); patterns
            the case does not hold are zero
  omp_barrier, omp_lock, omp_mixed
            the same for omp_waits_archive.py's OpenMP cases (2 processes of 3 threads): barrier
            waits, explicit and implicit, lock and critical contention, idle threads; for
            omp_mixed and wrong_order also the CSV's and the HTML report's wait states; for
            mixed and omp_mixed the HTML detail timeline's wait marks, all slices drawn and --detail-slices 20: each
            drawn call's waits, exactly (the oracle's per call, adding up to the JSON's per
            pattern when all are drawn), and none of a call left out, in the data and in the chart
            headless Chromium draws
  traced    pingpong-ring traced with libhtrace on two emulated nodes whose clocks differ by 2 ms
            (one node where the emulation is unavailable), its htrace-correct output,
            hybrid-jacobi (2 ranks of 2 OpenMP threads) where it is built, and the collectives
            example (every blocking, non-blocking and neighbourhood collective): no wait
            is negative, no pattern's time on a location exceeds that location's time in MPI (in
            OpenMP constructs for the OpenMP patterns; hybrid-jacobi has barriers, a lock and a
            critical section), no
            region's exceeds the time spent in it, no longest wait exceeds the longest call of the
            pattern's regions, each split sums to the pattern's total, every figure equals the
            oracle's (wait_oracle.py: the otf2 Python reader and the test library's matcher, no
            htrace code), and the corrected archive shows Late Sender and Wait at Barrier time;
            the efficiency metrics lie in [0, 1] and keep PE = LB x CommE, CommE = SerE x TrfE
            exactly, each location's MPI time is the reader's, the HTML detail timeline marks
            each drawn call's waits as the oracle finds them, the CSV holds the JSON's figures,
            and --before gives each side as --format json gives it alone
  hpcc, pwscf
            Debian's hpcc (2 nodes x 1 rank) and Quantum ESPRESSO's pw.x (2 nodes x 2 ranks)
            traced the same way, raw and corrected: the traced case's checks (the detail
            timeline's marks without the browser), and the application's own result check
  scorep    the archive in Score-P's layout that tests/report writes (a 2 GHz timer): the same
            checks; it has no MPI_Init..MPI_Finalize window"""
import collections
import functools
import csv
import json
import os
import shutil
import subprocess
import sys

import efficiency_checks
import otf2
import wait_oracle
from htrace_test import hpcc, pwscf
from htrace_test.archive import events_in_ns
from htrace_test.build import tool
from htrace_test.mpi import mpirun_command
from htrace_test.rank_output import RankOutput
from htrace_test.check import Expectations, run_or_exit
from htrace_test.report_page import html_data

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ["HTRACE_BUILD_DIR"]
REPORT = tool("htrace-report")
CORRECT = tool("htrace-correct")
PROGRAM = os.path.join(BUILD, "examples", "pingpong-ring", "pingpong-ring")
COLLECTIVES = os.path.join(BUILD, "examples", "collectives", "collectives")
case = sys.argv[1]
WORK = os.path.join(BUILD, "tests", "analysis", "out-" + case)
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
expect = Expectations()
failures = expect.failures
run = run_or_exit


def wait_states(archive):
    out = archive.rstrip("/") + ".waits.json"
    run([REPORT, "--no-progress", "--format", "json", "-o", out, archive])
    with open(out) as f:
        return json.load(f)


def check_sums(waits, label):
    for key, p in waits["wait_states"].items():
        for split in ("by_location", "caused_by"):
            expect(sum(p[split]) == p["total_ns"], "%s %s: %s sums to %d, total %d"
                   % (label, key, split, sum(p[split]), p["total_ns"]))
        for split in ("by_region", "by_comm"):
            s = sum(e["ns"] for e in p[split])
            expect(s == p["total_ns"], "%s %s: %s sums to %d, total %d" % (label, key, split, s, p["total_ns"]))
        values = p["by_location"] + p["caused_by"] + [e["ns"] for e in p["by_region"] + p["by_comm"]]
        expect(all(v >= 0 for v in values) and p["total_ns"] >= 0 and p["longest_ns"] >= 0,
               "%s %s: a negative wait" % (label, key))
        expect(p["longest_ns"] <= p["total_ns"] and (p["calls"] == 0) == (p["total_ns"] == 0),
               "%s %s: longest %d, calls %d, total %d" % (label, key, p["longest_ns"], p["calls"], p["total_ns"]))


def case_generated(name):
    archive = os.path.join(WORK, name)
    generator = "omp_waits_archive.py" if name.startswith("omp_") else "waits_archive.py"
    run([sys.executable, os.path.join(HERE, generator), archive, name])
    with open(archive + ".expected.json") as f:
        truth = json.load(f)
    got = wait_states(archive)
    check_sums(got, name)
    for key, want in truth.items():
        p = got["wait_states"][key]
        for field in ("total_ns", "calls", "longest_ns", "by_location", "caused_by"):
            expect(p[field] == want[field], "%s: %s %s is %s, expected %s" % (name, key, field, p[field], want[field]))
        for split, label in (("by_region", "region"), ("by_comm", "comm")):
            have = {e[label]: e["ns"] for e in p[split]}
            expect(have == want[split], "%s: %s %s is %s, expected %s" % (name, key, split, have, want[split]))
    check_oracle(archive, got, name)  # the traced run's oracle, checked on known waits
    if name in ("mixed", "omp_mixed"):  # every pattern of the generator is exercised
        expect(all(got["wait_states"][k]["total_ns"] > 0 for k in truth), "%s: a pattern without waits" % name)
    if name in ("omp_mixed", "wrong_order"):
        check_exports(archive, got, name)
    if name in ("mixed", "omp_mixed"):
        every = check_marks(archive, got, name, browser=True)
        capped = check_marks(archive, got, name + " capped", browser=True, slices=20)
        expect(0 < capped < every, "%s: %d marks of 20 slices, %d of all" % (name, capped, every))


def check_exports(archive, waits, label):
    """The CSV holds the JSON's figures; the HTML report's wait-state data holds each pattern
    with its name and total."""
    out = archive.rstrip("/") + ".waits.csv"
    run([REPORT, "--no-progress", "--format", "csv", "-o", out, archive])
    with open(out, newline="") as f:
        rows = [r for r in efficiency_checks.csv_rows(list(csv.reader(f))[1:]) if r[1] == "wait_states"]
    want = [r for r in efficiency_checks.json_rows(waits) if r[1] == "wait_states"]
    expect(sorted(rows) == sorted(want), "%s: the CSV's wait states differ from the JSON's" % label)
    html = archive.rstrip("/") + ".html"
    run([REPORT, "--no-progress", "-o", html, archive])
    with open(html) as f:
        text = f.read()
    for key, p in waits["wait_states"].items():
        entry = '"%s":{"name":%s,"total_ns":%d,' % (key, json.dumps(p["name"]), p["total_ns"])
        expect(entry in text, "%s: the HTML report lacks %s" % (label, entry))


@functools.lru_cache(maxsize=1)
def mpi_times(archive):
    """For MPI and for OpenMP, in one pass (once per archive: the checks only read them): per location name, time in the paradigm's regions (the
    outermost where they nest); per region name, total time and the longest call."""
    times = {p: (collections.Counter(), collections.Counter(), collections.Counter())
             for p in (otf2.Paradigm.MPI, otf2.Paradigm.OPENMP)}
    with otf2.reader.open(os.path.join(archive, "traces.otf2")) as trace:
        stacks = collections.defaultdict(list)
        for loc, ev in events_in_ns(trace):
            kind = type(ev).__name__
            if kind == "Enter":
                stacks[loc._ref].append((ev.time, ev.region.paradigm))
            elif kind == "Leave" and stacks[loc._ref]:
                d = ev.time - stacks[loc._ref].pop()[0]
                paradigm = ev.region.paradigm
                if paradigm in times:
                    per_location, per_region, longest = times[paradigm]
                    if not any(p == paradigm for _, p in stacks[loc._ref]):
                        per_location[(loc.group.name, loc.name)] += d
                    per_region[ev.region.name] += d
                    longest[ev.region.name] = max(longest[ev.region.name], d)
    return times


def location_spans(archive):
    """Per location name: the time from its first event to its last."""
    first, last = {}, {}
    with otf2.reader.open(os.path.join(archive, "traces.otf2")) as trace:
        for loc, ev in events_in_ns(trace):
            key = (loc.group.name, loc.name)
            first.setdefault(key, ev.time)
            last[key] = ev.time
    return {k: last[k] - first[k] for k in first}


def check_bounded(archive, waits, label):
    times = mpi_times(archive)
    names = [(l["process"], l["name"]) for l in waits["locations"]]
    for key, p in waits["wait_states"].items():
        if key == "omp_idle_threads":  # outside any construct: within its process's run
            spans = location_spans(archive)
            for i, ns in enumerate(p["by_location"]):
                run_ns = max(v for k, v in spans.items() if k[0] == names[i][0])
                expect(ns <= run_ns, "%s %s: %s idles %d ns, its process runs %d ns"
                       % (label, key, names[i], ns, run_ns))
            continue
        per_location, per_region, longest = times[otf2.Paradigm.OPENMP if key.startswith("omp_")
                                                   else otf2.Paradigm.MPI]
        for i, ns in enumerate(p["by_location"]):
            expect(ns <= per_location[names[i]], "%s %s: %s waits %d ns, in MPI for %d ns"
                   % (label, key, names[i], ns, per_location[names[i]]))
        for e in p["by_region"]:
            expect(e["ns"] <= per_region[e["region"]], "%s %s: %d ns in %s, which lasts %d ns"
                   % (label, key, e["ns"], e["region"], per_region[e["region"]]))
        calls = max([longest[e["region"]] for e in p["by_region"]], default=0)
        expect(p["longest_ns"] <= calls, "%s %s: longest wait %d ns, longest call %d ns"
               % (label, key, p["longest_ns"], calls))


def trace(name, offsets="0,0.002", per_node=2, program=PROGRAM, args=("3",), cwd=None, forward=()):
    """The program traced on emulated nodes (one node where the emulation is unavailable); its
    archive, and the program's standard output (all ranks', from the files they write)."""
    adir = os.path.join(WORK, "traces")
    os.makedirs(adir, exist_ok=True)
    env = ["LD_PRELOAD=" + os.environ["HTRACE_LIB"], "HTRACE_SYNC=none", "HTRACE_ARCHIVE_DIR=" + adir,
           "HTRACE_ARCHIVE_NAME=" + name] + list(forward)
    extra = " ".join("-x " + e for e in env)
    output = RankOutput(os.path.join(WORK, "output", name))
    p = subprocess.run([os.environ["HTRACE_CLUSTER_RUN"], "--offsets", offsets, "--ranks-per-node", str(per_node),
                        "--"] + output.program([program] + list(args)), capture_output=True, text=True,
                       timeout=300, cwd=cwd,
                       env=dict(os.environ, MPIRUN_EXTRA=extra, **dict(e.split("=", 1) for e in forward)))
    if p.returncode != 0:
        print("emulated cluster unavailable (%d); tracing on one node" % p.returncode)
        output = RankOutput(os.path.join(WORK, "output", name + "-one-node"))
        run(mpirun_command(len(offsets.split(",")) * per_node, [program] + list(args), options=extra.split(),
                           output=output), cwd=cwd)
    return os.path.join(adir, name), output.stdout()


def check_oracle(archive, waits, label):
    keys = [(l["process"], l["name"]) for l in waits["locations"]]
    truth = wait_oracle.wait_states(archive, keys)
    for key, p in waits["wait_states"].items():
        want = truth.get(key)
        if want is None:
            expect(p["total_ns"] == 0, "%s %s: %d ns, the oracle finds none" % (label, key, p["total_ns"]))
            continue
        for field in ("total_ns", "calls", "longest_ns", "by_location", "caused_by"):
            expect(p[field] == want[field], "%s %s: %s is %s, the oracle's %s" % (label, key, field, p[field], want[field]))
        for split, name in (("by_region", "region"), ("by_comm", "comm")):
            have = collections.Counter()  # OpenMP teams of several processes share a name
            for e in p[split]:
                have[e[name]] += e["ns"]
            expect(have == collections.Counter(want[split]), "%s %s: %s is %s, the oracle's %s"
                   % (label, key, split, have, dict(want[split])))


def trace_hybrid():
    """examples/hybrid-jacobi on 2 ranks of 2 OpenMP threads each (threads without MPI calls,
    OpenMP team communicators beside MPI's), or None where it was not built."""
    program = os.path.join(BUILD, "examples", "hybrid-jacobi", "hybrid-jacobi")
    if not os.access(program, os.X_OK):
        print("hybrid-jacobi not built: its case is left out")
        return None
    adir = os.path.join(WORK, "traces")
    run(mpirun_command(2, [program], preload=os.environ["HTRACE_LIB"],
                       forward=["OMP_NUM_THREADS=2", "HTRACE_SYNC=none", "HTRACE_ARCHIVE_DIR=" + adir,
                                "HTRACE_ARCHIVE_NAME=hybrid"]))
    return os.path.join(adir, "hybrid")


# The detail timeline's wait marks as the page draws them (the "waits" series of its chart).
PAGE_MARKS = """
const chart = window.HTRACE_CHARTS["chart-detail"];
const s = chart.getOption().series.find(x => x.name === "waits");
return {data: s ? s.data : null, legend: chart.getOption().legend[0].data,
        note: document.getElementById("detail-waits-note").textContent};"""


def check_marks(archive, waits, label, browser=False, slices=None):
    """The HTML detail timeline marks exactly the waits of the slices it draws: each mark's
    pattern, location, region, start, length and location waited for are those of a wait the
    oracle (wait_oracle.call_waits) finds in a drawn call, and every such wait is marked; where
    every slice is drawn, the marks of each pattern also add up to the JSON export's calls and
    total. With `browser`, headless Chromium draws them in the chart as the data says. `slices`:
    --detail-slices, the cap to check (the waits of the slices left out are not marked). Returns
    the number of marks."""
    html = archive.rstrip("/") + ".marks%s.html" % (slices or "")
    run([REPORT, "--no-progress", "-o", html, archive] + (["--detail-slices", str(slices)] if slices else []))
    data = html_data(html)
    det = data["detail"]
    if slices:
        expect(len(det["slices"]) == slices < det["total_slices"], "%s: %d of %d slices drawn, the cap is %d"
               % (label, len(det["slices"]), det["total_slices"], slices))
    keys = [(l["process"], l["name"]) for l in waits["locations"]]
    key_of = {p["name"]: k for k, p in waits["wait_states"].items()}
    marks = collections.Counter()
    for slice_index, pattern, wait, cause in det["waits"]:
        loc, region, start, dur = det["slices"][slice_index]
        expect(0 < wait <= dur, "%s: a mark of %d ns in a slice of %d ns" % (label, wait, dur))
        marks[(key_of[det["wait_patterns"][pattern]], loc, data["region_names"][region], start, wait, cause)] += 1
    drawn = {(s[0], data["region_names"][s[1]], s[2]) for s in det["slices"]}
    want = collections.Counter()
    for pattern, loc, region, enter, wait, cause in wait_oracle.call_waits(archive, keys):
        if (loc, region, enter) in drawn:
            want[(pattern, loc, region, enter, wait, cause)] += 1
    expect(marks == want, "%s: the detail timeline marks %d waits, the oracle %d in the drawn slices; "
           "marked only: %s; unmarked: %s" % (label, sum(marks.values()), sum(want.values()),
                                             sorted(marks - want)[:5], sorted(want - marks)[:5]))
    everything = len(det["slices"]) == det["total_slices"] and det["window"][0] <= 0 and \
        det["window"][1] >= max((s[2] + s[3] for s in det["slices"]), default=0)
    if everything:
        for key, p in waits["wait_states"].items():
            if key == "omp_idle_threads":
                continue
            mine = [m for m in marks.elements() if m[0] == key]
            expect((len(mine), sum(m[4] for m in mine)) == (p["calls"], p["total_ns"]),
                   "%s %s: %d marks of %d ns, the JSON's %d calls of %d ns"
                   % (label, key, len(mine), sum(m[4] for m in mine), p["calls"], p["total_ns"]))
    print("%s: %d wait marks in %d of %d drawn slices%s" % (
        label, len(det["waits"]), len({w[0] for w in det["waits"]}), len(det["slices"]),
        " (every slice drawn)" if everything else ""))
    if not browser:
        return len(det["waits"])
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    o = Options()
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1400,1000", "--no-proxy-server"):
        o.add_argument(a)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)
    try:
        driver.get("file://" + os.path.abspath(html))
        page = driver.execute_script(PAGE_MARKS)
    finally:
        driver.quit()
    drawn_marks = collections.Counter()
    for item in page["data"] or []:
        v = item["value"] if isinstance(item, dict) else item
        loc, start, end, pattern, cause, wait, region = v
        expect(end - start == wait, "%s: a drawn mark from %s to %s of %s ns" % (label, start, end, wait))
        drawn_marks[(key_of[det["wait_patterns"][pattern]], loc, data["region_names"][region], start, wait, cause)] += 1
    expect(drawn_marks == marks, "%s: the chart draws %d wait marks, the data holds %d"
           % (label, sum(drawn_marks.values()), sum(marks.values())))
    expect("waits" in page["legend"] and str(len(det["waits"])) in page["note"],
           "%s: the legend %s or the note %r lacks the waits" % (label, page["legend"], page["note"]))
    return len(det["waits"])


def case_traced():
    raw, _ = trace("pingpong")
    corrected = raw + "-corrected"
    run([CORRECT, "--no-progress", raw, corrected], ok=(0, 1))
    archives = [(raw, "raw"), (corrected, "corrected")]
    hybrid = trace_hybrid()
    if hybrid:
        archives.append((hybrid, "hybrid"))
    archives.append((trace("collectives", program=COLLECTIVES, args=())[0], "collectives"))
    for archive, label in archives:
        waits = check_consistent(archive, label, browser=label == "raw")
        if label == "corrected":
            for key in ("late_sender", "wait_at_barrier"):
                expect(waits["wait_states"][key]["total_ns"] > 0, "corrected: no %s time" % key)
    check_before(raw, corrected)


def check_consistent(archive, label, browser=False, window=True):
    """htrace-report's wait states and efficiency of an archive against every check above (the
    detail timeline's marks drawn by headless Chromium with `browser`; `window`: the archive has
    MPI_Init and MPI_Finalize); returns them."""
    waits = wait_states(archive)
    check_sums(waits, label)
    check_bounded(archive, waits, label)
    check_oracle(archive, waits, label)
    check_marks(archive, waits, label, browser=browser)
    check_efficiency(archive, waits, label, window=window)
    print(label, {k: p["total_ns"] for k, p in waits["wait_states"].items() if p["total_ns"]})
    return waits


def case_application(name):
    """A Debian-packaged application nobody here wrote, traced on two emulated nodes whose clocks
    differ by 2 ms, raw and corrected: every consistency check of the traced case, and the
    oracle's figures."""
    run_dir = os.path.join(WORK, name + "-run")
    os.makedirs(run_dir)
    if name == "hpcc":
        with open(os.path.join(run_dir, "hpccinf.txt"), "w") as f:
            f.write(hpcc.hpcc_input(2))
        raw, _ = trace(name, per_node=1, program=hpcc.HPCC, args=(), cwd=run_dir)
        expect(hpcc.succeeded(run_dir), "hpcc's own result check failed under the tracer")
    else:
        command = pwscf.prepare(run_dir)
        # Four ranks on two cores: waiting ranks must yield for pw.x to finish in seconds.
        raw, out = trace(name, program=command[0], args=command[1:], cwd=run_dir,
                         forward=["OMPI_MCA_mpi_yield_when_idle=1"])
        expect(pwscf.converged(out), "pw.x did not converge under the tracer")
    corrected = raw + "-corrected"
    run([CORRECT, "--no-progress", raw, corrected], ok=(0, 1))
    check_consistent(raw, name + " raw")
    check_consistent(corrected, name + " corrected")


def case_scorep():
    """The archive in Score-P's layout that tests/report writes (two ranks, a CUDA stream, a
    pthread, PAPI counters, calling-context samples): every consistency check and the oracle."""
    archive = os.path.join(WORK, "scorep")
    run([sys.executable, os.path.join(HERE, "..", "report", "make_scorep_archive.py"), archive])
    check_consistent(archive, "scorep", window=False)


def check_efficiency(archive, waits, label, window=True):
    """The POP metrics of a traced run: in [0, 1], the model's identities, each location's
    waiting time equal to the sum of its patterns' (no call waits in two patterns here) and its
    MPI time the oracle's, the window htrace's MPI_Init..MPI_Finalize (none without `window`:
    the archive lacks those calls); the CSV the same figures."""
    eff = waits["efficiency"]
    per_location, _, _ = mpi_times(archive)[otf2.Paradigm.MPI]
    names = [(l["process"], l["name"]) for l in waits["locations"]]
    expect((eff["window"] is not None) == window, "%s: window %s" % (label, eff["window"]))
    for scope in ("run", "window")[:1 + window]:
        e = eff[scope]
        expect(e is not None, "%s: no %s efficiency" % (label, scope))
        if e is None:
            continue
        efficiency_checks.check_identities(expect, e, "%s %s" % (label, scope))
        expect(e["ranks"] > 0 and e["end_ns"] - e["begin_ns"] == e["runtime_ns"],
               "%s %s: %d ranks, runtime %d" % (label, scope, e["ranks"], e["runtime_ns"]))
        print(label, scope, {m: round(e[m], 4) for m in efficiency_checks.METRICS})
    if eff["window"]:
        expect(eff["window"]["from"] == "MPI_Init..MPI_Finalize", "%s: window from %r" % (label, eff["window"]["from"]))
        expect(eff["window"]["runtime_ns"] < eff["run"]["runtime_ns"], "%s: the window is not inside the run" % label)
    for i, l in enumerate(eff["run"]["locations"]):
        waited = sum(p["by_location"][i] for p in waits["wait_states"].values())
        expect(l["waiting_ns"] <= waited, "%s: %s waits %d ns, its patterns %d ns" % (label, names[i], l["waiting_ns"], waited))
        expect(l["mpi_ns"] == per_location[names[i]] or label == "hybrid",
               "%s: %s in MPI %d ns, the oracle %d ns" % (label, names[i], l["mpi_ns"], per_location[names[i]]))
    out = archive.rstrip("/") + ".waits.csv"
    run([REPORT, "--no-progress", "--format", "csv", "-o", out, archive])
    with open(out, newline="") as f:
        rows = sorted(efficiency_checks.csv_rows(list(csv.reader(f))[1:]))
    expect(rows == sorted(efficiency_checks.json_rows(waits)), "%s: the CSV differs from the JSON" % label)


def check_before(raw, corrected):
    """--before on the traced pair: each side as --format json writes it alone."""
    out = corrected + ".before.json"
    run([REPORT, "--no-progress", "--format", "json", "-o", out, "--before", raw, corrected])
    with open(out) as f:
        doc = json.load(f)
    alone_raw, alone = wait_states(raw), wait_states(corrected)
    for key in ("wait_states", "efficiency"):
        expect(doc["before"][key] == alone_raw[key], "traced --before: the raw %s differ" % key)
        expect(doc[key] == alone[key], "traced --before: the corrected %s differ" % key)
    for h in doc["comparison"]["headline"]:
        print("traced before/after: %s (%s) %s -> %s%s" % (h["figure"], h["scope"], h["before"], h["after"],
                                                           " material" if h["material"] else ""))


if case == "traced":
    case_traced()
elif case == "scorep":
    case_scorep()
elif case in ("hpcc", "pwscf"):
    case_application(case)
else:
    case_generated(case)
if failures:
    sys.exit("%d failure(s)" % len(failures))
print("ok")
