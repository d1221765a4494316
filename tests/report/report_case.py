#!/usr/bin/python3
"""htrace-report end to end, one behaviour per case (usage: report_case.py CASE):
  html      a real run on two emulated nodes whose clocks differ by 2 ms, traced without clock
            synchronization (so messages violate the clock condition), its report and the report
            of its htrace-correct output (with --before: the raw archive) rendered in headless
            Chromium: no console message, every chart drawn, every number on the page equal to the
            otf2 Python reader's, the violations of every kind equal to htrace-correct --check's
            (zero latency, no clock model), the most violated message before and after correction
            equal to the reader's; the efficiency table, and with --before the headline figures and
            wait-state changes, equal to --format json's; a screenshot of each section is kept in
            the test's directory
  html_scale an archive of 2048 ranks (make_wide_archive.py): the page stays below 2.5 MB, loads in
            headless Chromium within 60 s with no console message and every chart drawn, and
            summarizes what a screen cannot show one by one: the matrix in at most 64 x 64 blocks
            of ranks that sum to the archive's messages and bytes, the overview and the detail
            timeline in at most 64 rows, per-rank times as quartiles, histogram and extreme ranks
            (the slow rank first), the block size stated on the page
  conditions a hybrid MPI+OpenMP run on two emulated nodes, and tests/correct's generated archives
            with injected process and thread clock errors (OpenMP forks, joins, barriers, locks,
            tasks, taskwaits, taskgroups; a task completed in a barrier; a 0-byte bcast; a
            neighbourhood collective; Irecvs completed out of posting order and a send on a
            cancelled Isend's channel, matched in posting order): the report's p2p, collective and OpenMP counts equal htrace-correct
            --check's (zero latency, no clock model), raw and corrected
  perfetto  the JSON export checked record for record: every slice with its exact nanoseconds,
            every message flow from its send's slice to its receive's slice, every collective
            participation flow, process and thread names
  perfetto_limits
            the JSON export with --window and --max-events on a longer run: with a window, exactly
            the slices overlapping it (whole) and the message and collective flows whose two
            records lie in it; with a cap, at most that many trace events, exactly the slices that
            start before the cut (whole) and the flows whose two records are before it; the default
            cap leaves this run whole; what was left out, by rule, on stderr and in otherData
  vite      ViTE 1.2 under Xvfb on the --format vite copies of raw and corrected archives of an MPI
            and a hybrid MPI+OpenMP run and of a salvaged one (a rank called MPI_Abort): nothing on
            stderr but ViTE's start-up noise, every message drawn as an arrow, the copy's events
            those of the original without its BufferFlush, ThreadFork and ThreadJoin records
            (otf2-print), which the tool counts on stderr, and its local definition files the
            original's byte for byte (the events copied record by record, not re-encoded with
            global ids); on the original archives ViTE warns once
            per message record and per such record (what the copy is for)
  scorep    an archive in Score-P's layout written with OTF2's writer (make_scorep_archive.py:
            system tree, CPU threads, a POSIX thread and a CUDA stream in an accelerator location
            group, PAPI and asynchronous GPU metrics, a metric instance, MPI p2p and a collective,
            an RMA window, calling-context samples, parameters, attributes): its ViTE copy, read
            back with the otf2 module, holds exactly the original's events without those the copy
            leaves out, whose
            counts by kind (and the definitions') the tool states on stderr; ViTE reads it with no
            message but its COMM_SELF notes and draws every message and the metric classes; the
            Perfetto export holds exactly one counter event per metric value, with the time and
            the value scaled by the member's base and exponent as the otf2 module reads them, one
            track per member and location, and its summary counts the records it does not draw
  errors    exit codes and messages: missing archive, bad option values, unwritable output (no
            file left behind)"""
import collections
import decimal
import glob
import json
import os
import re
import shutil
import subprocess
import sys

import archive_truth
import otf2
from htrace_test.mpi import mpirun_command
from htrace_test.build import tool
from htrace_test.check import Expectations, run_or_exit
from htrace_test.report_page import html_data

BUILD = os.environ["HTRACE_BUILD_DIR"]
REPORT = tool("htrace-report")
CORRECT = tool("htrace-correct")
PROGRAM = os.path.join(BUILD, "examples", "pingpong-ring", "pingpong-ring")
case = sys.argv[1]
WORK = os.path.join(BUILD, "tests", "report", "out-" + case)  # kept: screenshots for reviewers
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
expect = Expectations()
failures = expect.failures
run = run_or_exit


def trace(name, offsets="0,0.002", sync="none", program=PROGRAM, args=("3",), per_node=2, extra=""):
    """pingpong-ring, 4 ranks on 2 emulated nodes (or one node where namespaces are missing)."""
    adir = os.path.join(WORK, "traces")
    os.makedirs(adir, exist_ok=True)
    extra = "-x LD_PRELOAD=%s -x HTRACE_SYNC=%s -x HTRACE_ARCHIVE_DIR=%s -x HTRACE_ARCHIVE_NAME=%s %s" % (
        os.environ["HTRACE_LIB"], sync, adir, name, extra)
    p = subprocess.run([os.environ["HTRACE_CLUSTER_RUN"], "--offsets", offsets, "--ranks-per-node", str(per_node), "--",
                        program] + list(args), capture_output=True, text=True, timeout=180,
                       env=dict(os.environ, MPIRUN_EXTRA=extra))
    if p.returncode != 0:  # no time namespaces here: one node, no violations to show
        print("emulated cluster unavailable (%d); tracing on one node" % p.returncode)
        nodes = len(offsets.split(","))
        run(mpirun_command(nodes * per_node, [program] + list(args), options=extra.split()))
    archive = os.path.join(adir, name)
    expect(os.path.exists(os.path.join(archive, "traces.otf2")), "archive written")
    return archive


def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    o = Options()
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1400,1000", "--no-proxy-server"):
        o.add_argument(a)
    o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)


# A chart is drawn when its canvas has pixels of more than one colour.
CHART_PIXELS = """
const out = {};
for (const [id, c] of Object.entries(window.HTRACE_CHARTS)) {
  const canvas = document.getElementById(id).querySelector("canvas");
  if (!canvas) { out[id] = 0; continue; }
  const ctx = canvas.getContext("2d");
  const px = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
  const colours = new Set();
  for (let i = 0; i < px.length && colours.size < 50; i += 4 * 97)
    colours.add((px[i] << 24) | (px[i + 1] << 16) | (px[i + 2] << 8) | px[i + 3]);
  out[id] = colours.size;
}
return out;"""


def conditions_of(archive):
    """htrace-correct --check with zero latencies and no clock model: {kind: (messages, violations)}."""
    p = run([CORRECT, "--check", "--json", "--no-progress", "--no-presync", "--lmin-intra", "0", "--lmin-inter", "0",
             "--lmin-omp", "0", archive], ok=(0, 1))
    r = json.loads(p.stdout)
    return {k: (r["messages"][k], r["violations_before"][k]) for k in ("p2p", "collective", "OpenMP")}


def worst_message(t):
    """(violation ns, channel key, index) of the most violated message, or None."""
    best = None
    for key, sends in t["sends"].items():
        for k, (s, r) in enumerate(zip(sends, t["recvs"].get(key, []))):
            if s[1] - r[1] > 0 and (best is None or s[1] - r[1] > best[0]):
                best = (s[1] - r[1], key, k)
    return best


def around(t, ev):
    """(begin, end) in ns from the start of the innermost region around a send/receive record."""
    ref, time, start = ev
    inside = [(e - b, b, e) for name, _, b, e in t["slices"][ref] if b == start and b <= time <= e]
    if not inside:
        return (time - t["offset"], time - t["offset"])
    _, b, e = min(inside)
    return (b - t["offset"], e - t["offset"])


def check_before_after(page, raw, cor, label):
    worst = worst_message(raw)
    if worst is None:
        expect(page["ba_message"] is None, "%s: no violated message before, none drawn" % label)
        return
    v, _, _ = worst
    m = page["ba_message"]
    expect(m is not None, "%s: the most violated message is drawn" % label)
    if m is None:
        return
    # The page names the channel by rank names, tag and index; ties in the violation are possible.
    keys = [key for key in raw["sends"] if key[0] == m["src"] and key[1] == m["dst"] and key[3] == m["tag"]
            and m["index"] < min(len(raw["sends"][key]), len(raw["recvs"].get(key, [])))
            and raw["sends"][key][m["index"]][1] - raw["recvs"][key][m["index"]][1] == v]
    expect(len(keys) == 1, "%s: the page's message (%s) is a most violated one (%d ns)" % (label, m, v))
    if len(keys) != 1:
        return
    key, k = keys[0], m["index"]
    for phase, t in (("before", raw), ("after", cor)):
        for side, events in (("send", t["sends"]), ("recv", t["recvs"])):
            ev = events[key][k]
            begin, end = around(t, ev)
            want = {"t": ev[1] - t["offset"], "begin": begin, "end": end}
            for f, w in want.items():
                got = page["ba"].get("%s.%s.%s" % (phase, side, f))
                expect(got == str(w), "%s: %s %s %s: page %s, archive %d" % (label, phase, side, f, got, w))
    expect(cor["sends"][key][k][1] <= cor["recvs"][key][k][1], "%s: the message is no violation after correction" % label)


def check_page(driver, path, truth, label, correction=None, conditions=None, before_after=None):
    driver.get("file://" + path)
    logs = driver.get_log("browser")
    expect(not logs, "%s: no console message: %s" % (label, logs))
    colours = driver.execute_script(CHART_PIXELS)
    expected_charts = {"chart-imbalance", "chart-heatmap", "chart-matrix-messages", "chart-matrix-bytes",
                       "chart-overview", "chart-detail", "chart-clocks", "chart-violation"}
    if correction:
        expected_charts.add("chart-deviation")
    if before_after and worst_message(before_after[0]):
        expected_charts.add("chart-before-after")
    expect(set(colours) == expected_charts, "%s: charts %s" % (label, sorted(colours)))
    for cid, n in colours.items():
        expect(n >= 3, "%s: %s is drawn (%d colours)" % (label, cid, n))
    # Every number the checks need, read from the page's DOM in one round trip.
    page = driver.execute_script("""
      const pick = (sel, key) => Object.fromEntries([...document.querySelectorAll(sel)].map(e => [e.getAttribute(key), e.textContent]));
      return {calls: pick("[data-calls]", "data-calls"), sent: pick("[data-bytes-sent]", "data-bytes-sent"),
              received: pick("[data-bytes-received]", "data-bytes-received"),
              violations: pick("#violation-table [data-key]", "data-key"), summary: pick("#summary-table [data-key]", "data-key"),
              correction: pick("[data-correction]", "data-correction"),
              conditions: pick("[data-condition]", "data-condition"), ba_count: pick("[data-ba-count]", "data-ba-count"),
              ba: Object.fromEntries([...document.querySelectorAll("[data-ba]")].map(e => [e.dataset.ba, e.dataset.ns])),
              ba_message: window.HTRACE_DATA.before_after && window.HTRACE_DATA.before_after.message,
              matrix: [...document.querySelectorAll("[data-src]")].map(e => [+e.dataset.src, +e.dataset.dst, +e.dataset.messages, +e.dataset.bytes, e.textContent]),
              profile_rows: document.querySelectorAll("#profile-table tr").length,
              ranks: window.HTRACE_DATA.ranks.map(r => r.name)};""")
    for name, calls in truth["calls"].items():
        expect(page["calls"].get(name) == str(calls), "%s: calls of %s: page %s, archive %d" % (label, name, page["calls"].get(name), calls))
        for what, key in (("sent", "sent"), ("received", "received")):
            expect(page[key].get(name) == str(truth[key][name]),
                   "%s: bytes %s in %s: page %s, archive %d" % (label, what, name, page[key].get(name), truth[key][name]))
    expect(page["profile_rows"] == len(truth["calls"]) + 1, "%s: one profile row per region" % label)
    ranks = page["ranks"]
    expect(ranks == truth["groups"], "%s: ranks %s" % (label, ranks))
    cells = {(s, d): (m, b, text) for s, d, m, b, text in page["matrix"]}
    expect(len(cells) == len(ranks) ** 2, "%s: a matrix cell per rank pair" % label)
    for s, src in enumerate(ranks):
        for d, dst in enumerate(ranks):
            want = (truth["matrix"][(src, dst)], truth["matrix_bytes"][(src, dst)])
            got = cells.get((s, d), (None, None, ""))
            expect(got[:2] == want and got[2] == "%d (%d)" % want, "%s: %s -> %s: page %s, archive %s" % (label, src, dst, got, want))
    for key, want in (("messages", truth["messages"]), ("matched", len(truth["pairs"])),
                      ("violations", truth["violations"])):
        expect(page["violations"].get(key) == str(want), "%s: %s: page %s, archive %d" % (label, key, page["violations"].get(key), want))
    expect(page["summary"].get("events") == str(truth["events"]),
           "%s: events: page %s, archive %d" % (label, page["summary"].get("events"), truth["events"]))
    if correction:
        for k in ("violations_before", "violations_after", "messages"):
            for x in ("p2p", "collective", "OpenMP"):
                got = page["correction"].get("%s.%s" % (k, x))
                expect(got == str(correction[k][x]), "%s: correction %s.%s: page %s, report %s" % (label, k, x, got, correction[k][x]))
    for phase, want in (("", conditions), ("before.", before_after and before_after[2]),
                        ("after.", before_after and conditions)):
        for kind, (messages, violations) in (want or {}).items():
            got = page["ba_count" if phase else "conditions"]
            for what, w in (("messages", messages), ("violations", violations)):
                g = got.get("%s%s.%s" % (phase, kind, what))
                expect(g == str(w), "%s: %s%s %s: page %s, htrace-correct --check %d" % (label, phase, kind, what, g, w))
    if before_after:
        check_before_after(page, before_after[0], before_after[1], label)
    for section in ("summary", "profile", "matrix", "timeline", "clocks", "before-after", "waits"):
        el = driver.find_element("id", section)
        driver.execute_script("arguments[0].scrollIntoView()", el)
        el.screenshot(os.path.join(WORK, "%s-%s.png" % (label, section)))


def case_html():
    archive = trace("pingpong")
    corrected = archive + "-corrected"
    rep = run([CORRECT, "--no-progress", "--json", archive, corrected], ok=(0, 1)).stdout
    rep_path = os.path.join(WORK, "correction.json")
    with open(rep_path, "w") as f:
        f.write(rep)
    correction = json.loads(rep)
    raw_html, cor_html = os.path.join(WORK, "raw.html"), os.path.join(WORK, "corrected.html")
    before = {p: os.path.getmtime(p) for p in glob.glob(archive + "/**", recursive=True)}
    run([REPORT, archive, "-o", raw_html])
    run([REPORT, corrected, "--correction", rep_path, "--before", archive, "-o", cor_html])
    expect(before == {p: os.path.getmtime(p) for p in glob.glob(archive + "/**", recursive=True)}, "input untouched")
    for page in (raw_html, cor_html):
        with open(page) as f:
            text = f.read()
        expect("http://" not in text.split("<script>")[0] and "src=\"http" not in text and "<link" not in text,
               "%s: nothing loaded from the network" % page)
    raw, cor = archive_truth.read(archive), archive_truth.read(corrected)
    print("raw: %d messages, %d violations; corrected: %d violations" % (raw["messages"], raw["violations"], cor["violations"]))
    if os.environ.get("HTRACE_REPORT_EXPECT_VIOLATIONS", "1") == "1" and raw["violations"] == 0:
        print("note: the raw trace has no violation (one node?)")
    expect(cor["violations"] == 0, "the corrected archive has no violation")
    raw_conditions, cor_conditions = conditions_of(archive), conditions_of(corrected)
    print("htrace-correct --check (zero latency): raw %s, corrected %s" % (raw_conditions, cor_conditions))
    expect(all(v == 0 for _, v in cor_conditions.values()), "no violation of any kind after correction")
    raw_json, cor_json = os.path.join(WORK, "raw.json"), os.path.join(WORK, "corrected.json")
    run([REPORT, "--format", "json", archive, "-o", raw_json])
    run([REPORT, "--format", "json", corrected, "--before", archive, "-o", cor_json])
    with open(raw_json) as f, open(cor_json) as g:
        raw_doc, cor_doc = json.load(f), json.load(g)
    driver = browser()
    try:
        check_page(driver, raw_html, raw, "raw", conditions=raw_conditions)
        check_efficiency(driver, raw_doc, "raw")
        check_page(driver, cor_html, cor, "corrected", correction, conditions=cor_conditions,
                   before_after=(raw, cor, raw_conditions))
        check_efficiency(driver, cor_doc, "corrected")
    finally:
        driver.quit()


# The bound the scale test holds the page to at 2048 ranks (ECharts alone is 1.1 MB).
SCALE_RANKS, SCALE_MAX_BYTES, SCALE_MAX_LOAD_S = 2048, 2_500_000, 60


def case_html_scale():
    import time
    archive = os.path.join(WORK, "wide")
    run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "make_wide_archive.py"), archive,
         str(SCALE_RANKS)])
    page = os.path.join(WORK, "wide.html")
    run([REPORT, archive, "-o", page])
    size = os.path.getsize(page)
    expect(size < SCALE_MAX_BYTES, "the page of %d ranks is %d bytes, below %d" % (SCALE_RANKS, size, SCALE_MAX_BYTES))
    messages = SCALE_RANKS * 2
    driver = browser()
    try:
        t = time.time()
        driver.get("file://" + page)
        wall = time.time() - t
        logs = driver.get_log("browser")
        expect(not logs, "no console message: %s" % logs[:5])
        expect(wall < SCALE_MAX_LOAD_S, "loaded and drawn in %.1f s, within %d s" % (wall, SCALE_MAX_LOAD_S))
        colours = driver.execute_script(CHART_PIXELS)
        expect({"chart-histogram", "chart-matrix-messages", "chart-overview", "chart-detail", "chart-heatmap"} <= set(colours),
               "charts %s" % sorted(colours))
        for cid, n in colours.items():
            expect(n >= 3, "%s is drawn (%d colours)" % (cid, n))
        d = driver.execute_script("""
          const D = window.HTRACE_DATA;
          const sum = m => m.flat().reduce((a, b) => a + b, 0);
          const compute = D.profile.find(p => p.name === "compute");
          return {scale: D.scale, side: D.matrix.labels.length, rows: D.matrix.messages.length, block: D.matrix.block,
                  messages: sum(D.matrix.messages), bytes: sum(D.matrix.bytes), overview: D.timeline.share.length,
                  detail: D.detail.rows.length, detail_max: Math.max(...D.detail.slices.map(s => s[0])),
                  ranks: D.ranks.length, locations: Object.keys(D.locations).length,
                  top: compute.per_rank.top[0], dist: compute.per_rank.dist, hist: compute.per_rank.hist.counts,
                  extremes: document.querySelectorAll("#rank-extremes tr").length,
                  notes: [...document.querySelectorAll(".note")].map(e => e.textContent).join(" ")};""")
        print("%d ranks: %d bytes, loaded in %.1f s; matrix %d x %d (blocks of %d), overview %d rows, detail %d rows, "
              "%d locations named" % (SCALE_RANKS, size, wall, d["side"], d["side"], d["block"], d["overview"], d["detail"],
                                      d["locations"]))
        expect(d["scale"]["summarized"] and d["side"] == d["rows"] <= 64 and d["block"] == SCALE_RANKS // 64,
               "matrix in at most 64 x 64 blocks: %s" % d)
        expect(d["messages"] == messages and d["bytes"] == messages * 1024,
               "the blocks sum to every message (%d) and byte" % d["messages"])
        expect(d["overview"] <= 64 and d["detail"] <= 64 and d["detail_max"] < d["detail"], "timeline rows bounded: %s" % d)
        expect(d["ranks"] == 0 and d["locations"] < 200, "no list of every rank or location: %s" % d)
        expect(d["top"][0] == 7 and d["dist"][0] < d["dist"][2] < d["dist"][4] and sum(d["hist"]) == SCALE_RANKS,
               "per-rank time of compute: quartiles, histogram, the slow rank 7 first: %s" % d)
        expect(d["extremes"] > 1, "the extreme ranks listed")
        expect("a block of %d consecutive senders" % d["block"] in d["notes"] and "evenly spaced" in d["notes"],
               "the page states the block size and the sampling")
        el = driver.find_element("id", "profile")
        driver.execute_script("arguments[0].scrollIntoView()", el)
        el.screenshot(os.path.join(WORK, "wide-profile.png"))
    finally:
        driver.quit()


def check_efficiency(driver, doc, label):
    """The page's wait totals and efficiency table (and with --before their before columns, the
    headline figures and wait-state changes) hold exactly the numbers of --format json of the
    same archives."""
    page = driver.execute_script("""
      const all = sel => [...document.querySelectorAll(sel)];
      return {eff: Object.fromEntries(all("[data-eff]").map(e => [e.dataset.eff, e.dataset.value])),
              headline: Object.fromEntries(all("[data-headline]").map(e => [e.dataset.headline, e.dataset.material])),
              changes: all("[data-change]").map(e => [e.dataset.change, +e.dataset.before, +e.dataset.after, e.textContent]),
              box: getComputedStyle(document.getElementById("analysis-changes-box")).display,
              waits: Object.fromEntries(all("[data-wait]").map(e => [e.dataset.wait, +e.dataset.ns])),
              waits_before: Object.fromEntries(all("[data-wait-before]").map(e => [e.dataset.waitBefore, +e.dataset.ns]))};""")
    expect(page["waits"] == {k: p["total_ns"] for k, p in doc["wait_states"].items()},
           "%s: wait totals %s, the JSON's %s" % (label, page["waits"], doc["wait_states"]))
    expect(page["waits_before"] == ({k: p["total_ns"] for k, p in doc["before"]["wait_states"].items()}
                                    if "before" in doc else {}), "%s: wait totals before %s" % (label, page["waits_before"]))
    want = {}
    sides = [("", doc)] + ([("before.", doc["before"])] if "before" in doc else [])
    for prefix, d in sides:
        for scope in ("run", "window"):
            e = d["efficiency"][scope]
            if e is None:
                continue
            for key in ("parallel_efficiency", "load_balance", "communication_efficiency", "serialization_efficiency",
                        "transfer_efficiency", "runtime_ns", "ideal_runtime_ns", "max_useful_ns", "avg_useful_ns", "ranks"):
                want[prefix + scope + "." + key] = e[key]
    got = {k: (None if v in ("null", "undefined") else float(v)) for k, v in page["eff"].items()}
    expect(set(got) == set(want), "%s: efficiency cells %s, the JSON's %s" % (label, sorted(got), sorted(want)))
    for k, v in want.items():
        expect(got.get(k) == (None if v is None else float(v)), "%s: efficiency %s: page %s, JSON %s" % (label, k, got.get(k), v))
    expect(want.get("window.parallel_efficiency") is not None, "%s: no efficiency window (MPI_Init..MPI_Finalize)" % label)
    if "comparison" not in doc:
        expect(page["box"] == "none" and not page["changes"], "%s: a comparison without --before" % label)
        return
    c = doc["comparison"]
    expect(page["headline"] == {h["scope"] + "." + h["figure"]: str(h["material"]).lower() for h in c["headline"]},
           "%s: headline %s, the JSON's %s" % (label, page["headline"], c["headline"]))
    expect(page["changes"] == [["|".join((w["pattern"], w["split"], w["item"])), w["before_ns"], w["after_ns"], w["change"]]
                               for w in c["wait_states"]], "%s: changes %s, the JSON's %s" % (label, page["changes"], c["wait_states"]))
    print("%s: efficiency %s; %d wait-state figures changed by the correction" % (
        label, {k: round(v, 4) for k, v in want.items() if k.endswith("efficiency") and v is not None}, len(page["changes"])))


def exact_ns(text_number, offset_ns=0):
    """Microseconds with 3 decimals (a JSON number parsed as Decimal) -> integer nanoseconds."""
    v = text_number * 1000
    expect(v == v.to_integral_value(), "timestamp %s is whole nanoseconds" % text_number)
    return int(v) + offset_ns


def case_perfetto():
    archive = trace("pingpong")
    out = os.path.join(WORK, "trace.json")
    p = run([REPORT, "--format", "perfetto", archive, "-o", out])
    with open(out) as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    truth = archive_truth.read(archive)
    origin = doc["otherData"]["time_origin_ns"]
    expect(origin == truth["offset"] and doc["displayTimeUnit"] == "ns", "time origin %s" % origin)
    ev = doc["traceEvents"]
    names = {(e["pid"], e.get("tid")): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"].endswith("_name")}
    # Threads -> OTF2 locations, processes -> location groups (ranks).
    thread_of = {}
    for ref, (group, lname) in truth["locations"].items():
        matches = [k for k, v in names.items() if k[1] is not None and v == "%s (location %d)" % (lname, ref)
                   and names.get((k[0], None)) == group]
        expect(len(matches) == 1, "location %d (%s / %s) is one named thread" % (ref, group, lname))
        if matches:
            thread_of[matches[0]] = ref
    slices = sorted((thread_of.get((e["pid"], e["tid"])), e["name"], exact_ns(e["ts"], origin),
                     exact_ns(e["ts"], origin) + exact_ns(e["dur"])) for e in ev if e["ph"] == "X")
    want = sorted((ref, name, start, end) for ref, ss in truth["slices"].items() for name, _, start, end in ss)
    expect(slices == want, "slices equal the archive's Enter/Leave pairs (%d exported, %d in the archive)" % (len(slices), len(want)))
    # Flows: every message pair is one s -> f arrow between the slices around the send and the receive.
    ends = {}
    for e in ev:
        if e["ph"] in ("s", "f"):
            ends.setdefault((e["cat"], e["id"]), {}).setdefault(e["ph"], []).append(
                (thread_of.get((e["pid"], e["tid"])), exact_ns(e["ts"], origin)))
    msg = sorted((v["s"][0], v["f"][0]) for (cat, _), v in ends.items() if cat == "message" and "s" in v and "f" in v)
    want_msg = sorted(((s[0], s[2]), (r[0], r[2])) for s, r in truth["pairs"])
    expect(msg == want_msg, "message flows equal the archive's send/receive pairs (%d exported, %d in the archive)" % (len(msg), len(want_msg)))
    expect(all(len(v.get("s", [])) == 1 and len(v.get("f", [])) == 1 for v in ends.values()),
           "every flow id has one start and one end")
    coll = sorted((v["s"][0], v["f"][0]) for (cat, _), v in ends.items() if cat == "collective")
    want_coll = []
    for (comm, k), members in truth["collectives"].items():
        root = next(iter(members.values()))[2]
        for rank, (ref, start, _, _) in members.items():
            if rank != root and root in members:
                want_coll.append(((members[root][0], members[root][1]), (ref, start)))
    expect(coll == sorted(want_coll), "collective flows: root -> every member (%d exported, %d expected)" % (len(coll), len(want_coll)))
    expect("%d slices" % len(want) in p.stderr, "summary line: " + p.stderr)


def perfetto_export(archive, name, *options):
    """Runs the Perfetto export; (its document, stderr)."""
    out = os.path.join(WORK, name)
    p = run([REPORT, "--format", "perfetto", archive, "-o", out] + list(options))
    with open(out) as f:
        return json.load(f, parse_float=decimal.Decimal), p.stderr


def exported(doc):
    """The slices as (pid, tid, name, start ns, end ns) and the flows as {(cat, id): {ph: [(pid, tid, ts ns)]}},
    times from the trace start."""
    ev = doc["traceEvents"]
    slices = sorted((e["pid"], e["tid"], e["name"], exact_ns(e["ts"]), exact_ns(e["ts"]) + exact_ns(e["dur"]))
                    for e in ev if e["ph"] == "X")
    flows = {}
    for e in ev:
        if e["ph"] in ("s", "f"):
            flows.setdefault((e["cat"], e["id"]), {}).setdefault(e["ph"], []).append((e["pid"], e["tid"], exact_ns(e["ts"])))
    return slices, flows


def flow_pairs(flows, cat):
    return sorted((v["s"][0], v["f"][0]) for (c, _), v in flows.items() if c == cat)


def case_perfetto_limits():
    archive = trace("pingpong", args=("40",))
    truth = archive_truth.read(archive)
    off = truth["offset"]
    full, err = perfetto_export(archive, "full.json")
    other = full["otherData"]
    expect(other["max_events"] == 2000000 and other["left_out"] == "" and "left out" not in err,
           "the default cap (%s) leaves this run whole: %s" % (other["max_events"], err))
    expect(other["trace_events"] == len(full["traceEvents"]), "otherData counts the trace events")
    # Threads by location ref, from the full export's names (as case_perfetto checks them).
    tid = {}
    for e in full["traceEvents"]:
        if e["ph"] == "M" and e["name"] == "thread_name":
            ref = int(re.search(r"\(location (\d+)\)$", e["args"]["name"]).group(1))
            tid[ref] = (e["pid"], e["tid"])
    slices = sorted(tid[ref] + (name, b - off, e - off) for ref, ss in truth["slices"].items() for name, _, b, e in ss)
    all_slices, all_flows = exported(full)
    expect(all_slices == slices, "the full export holds every slice (%d, %d in the archive)" % (len(all_slices), len(slices)))
    # Flows as ((sender thread, anchor), (receiver thread, anchor)) with the two records' times.
    messages = [((tid[s[0]] + (s[2] - off,), tid[r[0]] + (r[2] - off,)), s[1] - off, r[1] - off) for s, r in truth["pairs"]]
    collectives = []
    for members in truth["collectives"].values():
        root = next(iter(members.values()))[2]
        if root in members:
            rref, rstart, _, rend = members[root]
            collectives += [((tid[rref] + (rstart - off,), tid[ref] + (start - off,)), rend - off, end - off)
                            for rank, (ref, start, _, end) in members.items() if rank != root]
    expect(len(messages) > 100 and collectives, "the run has messages (%d) and collective flows (%d)"
           % (len(messages), len(collectives)))
    flows_total = len(messages) + len(collectives)

    # A window over the middle third of the messages (MPI_Init can outlast them), given with units.
    first, last = min(f[1] for f in messages), max(f[2] for f in messages)
    t0, t1 = first + (last - first) // 3, first + 2 * (last - first) // 3
    doc, err = perfetto_export(archive, "window.json", "--window", "%dus:%dus" % (t0 // 1000, t1 // 1000))
    t0, t1 = t0 // 1000 * 1000, t1 // 1000 * 1000
    got_slices, got_flows = exported(doc)
    want = [s for s in slices if s[3] <= t1 and s[4] >= t0]
    expect(got_slices == want and 0 < len(want) < len(slices),
           "window: the slices overlapping %d..%d ns, whole (%d exported, %d expected of %d)" % (t0, t1, len(got_slices), len(want), len(slices)))
    inside = lambda f: t0 <= f[1] <= t1 and t0 <= f[2] <= t1
    want_msg = sorted(f[0] for f in messages if inside(f))
    want_coll = sorted(f[0] for f in collectives if inside(f))
    expect(flow_pairs(got_flows, "message") == want_msg and want_msg,
           "window: the messages sent and received in it (%d exported, %d expected)" % (len(flow_pairs(got_flows, "message")), len(want_msg)))
    expect(flow_pairs(got_flows, "collective") == want_coll,
           "window: the collective flows in it (%d exported, %d expected)" % (len(flow_pairs(got_flows, "collective")), len(want_coll)))
    expect(all(len(v.get("s", [])) == 1 and len(v.get("f", [])) == 1 for v in got_flows.values()), "window: every flow has both ends")
    o = doc["otherData"]
    kept_flows = len(want_msg) + len(want_coll)
    expect((o["window_begin_ns"], o["window_end_ns"]) == (t0, t1), "window in otherData: %s" % o)
    expect(o["outside_window_slices"] == len(slices) - len(want) and o["outside_window_flows"] == flows_total - kept_flows,
           "window: otherData counts what it left out: %s" % o)
    line = "left out %d slices, %d flows outside the window" % (len(slices) - len(want), flows_total - kept_flows)
    expect(line in err and line in o["left_out"], "window: stderr says '%s': %s" % (line, err))
    # Seconds give the same window.
    doc_s, _ = perfetto_export(archive, "window-s.json", "--window", "%.6f:%.6f" % (t0 / 1e9, t1 / 1e9))
    expect(exported(doc_s) == (got_slices, got_flows), "window in seconds equals the window in us")

    # A cap at half of the full export: cut by time, spans whole, both ends of every flow.
    cap = len(full["traceEvents"]) // 2
    doc, err = perfetto_export(archive, "cap.json", "--max-events", str(cap))
    o = doc["otherData"]
    cut = o.get("cut_ns")
    got_slices, got_flows = exported(doc)
    expect(len(doc["traceEvents"]) <= cap and o["trace_events"] == len(doc["traceEvents"]) and cut is not None,
           "cap: %d trace events of at most %d, cut at %s ns" % (len(doc["traceEvents"]), cap, cut))
    if cut is not None:
        must = [s for s in slices if s[3] < cut]
        may = [s for s in slices if s[3] <= cut]
        expect(set(must) <= set(got_slices) <= set(may) and len(got_slices) < len(slices),
               "cap: exactly the slices that start before the cut, whole (%d exported, %d start before it)" % (len(got_slices), len(must)))
        before = lambda f: f[1] < cut and f[2] < cut
        for cat, fl in (("message", messages), ("collective", collectives)):
            got = set(flow_pairs(got_flows, cat))
            expect({f[0] for f in fl if before(f)} <= got <= {f[0] for f in fl if f[1] <= cut and f[2] <= cut},
                   "cap: the %s flows whose records are before the cut (%d exported)" % (cat, len(got)))
        expect(all(len(v.get("s", [])) == 1 and len(v.get("f", [])) == 1 for v in got_flows.values()), "cap: every flow has both ends")
        left = (len(slices) - len(got_slices), flows_total - sum(1 for k in got_flows))
        expect((o["after_cut_slices"], o["after_cut_flows"]) == left and o["outside_window_slices"] == 0,
               "cap: otherData counts what it left out %s: %s" % (left, o))
        line = "left out %d slices, %d flows from " % left
        expect(line in err and "past the cap of %d trace events (--max-events)" % cap in err,
               "cap: stderr says what was left out: %s" % err)
    print("perfetto: %d slices, %d flows; window %d..%d ns: %d slices; cap %d: %d trace events, cut at %s ns"
          % (len(slices), flows_total, t0, t1, len(want), cap, len(doc["traceEvents"]), cut))


# What ViTE 1.2 prints on every export: its progress, and its closing count.
VITE_PROGRESS = ("QStandardPaths", "export of ", "Loading of the trace", "Exporting trace to",
                 "0 errors and 0 warnings were found during parsing.")


def vite(anchor, svg):
    """ViTE's exit code and every line it printed besides its progress lines."""
    p = subprocess.run(["xvfb-run", "-a", "vite", anchor, "-e", svg], capture_output=True, text=True, timeout=120)
    return p.returncode, [l for l in (p.stdout + p.stderr).splitlines()
                          if l.strip() and not l.startswith(VITE_PROGRESS)]


def otf2_events(anchor):
    """otf2-print's event lines without the location names of ranks (peer, root, creating thread):
    otf2-print resolves a rank through a rank group, which the ViTE copy writes as a location list
    ('INVALID' there)."""
    p = run(["otf2-print", anchor])
    return [re.sub(r"(Receiver|Sender|Root|Creating Thread): (\d+) \([^)]*\)", r"\1: \2", l) for l in p.stdout.splitlines()
            if l and l.split()[0].isupper() and not l.startswith("===")]


def local_definitions(archive):
    """Each location's local definition file in an archive: its bytes by file name."""
    d = os.path.join(archive, "traces")
    return {f: open(os.path.join(d, f), "rb").read() for f in sorted(os.listdir(d)) if f.endswith(".def")}


def salvaged_archive(adir):
    """A run whose rank 1 called MPI_Abort, rebuilt by htrace-salvage (tests/salvage's program)."""
    app = os.path.join(BUILD, "tests", "salvage", "salvage_fail_app")
    salvage = tool("htrace-salvage")
    if not (os.access(app, os.X_OK) and os.access(salvage, os.X_OK)):
        expect(False, "salvage_fail_app and htrace-salvage built")
        return None
    counts = os.path.join(WORK, "counts")
    os.makedirs(counts, exist_ok=True)
    p = subprocess.run(mpirun_command(2, [app, "abort", "3000", counts], bind_none=True, preload=os.environ["HTRACE_LIB"],
                                      forward=["HTRACE_ARCHIVE_DIR=" + adir, "HTRACE_ARCHIVE_NAME=aborted",
                                               "HTRACE_BUFFER_SIZE=4k"]),
                       capture_output=True, text=True, timeout=180)
    expect(p.returncode != 0, "the aborted run fails (%d)" % p.returncode)
    out = os.path.join(adir, "salvaged")
    run([salvage, os.path.join(adir, "aborted"), out])
    return out


def hybrid_program():
    """examples/hybrid-jacobi built with clang: LLVM's libomp reports OpenMP events (OMPT)."""
    return os.path.join(BUILD, "examples", "hybrid-jacobi", "hybrid-jacobi")


def case_vite():
    if not shutil.which("vite") or not shutil.which("xvfb-run"):
        print("vite or xvfb-run not installed")
        sys.exit(77)
    # 4 KiB event buffers: BufferFlush records every ~85 events even in these short runs.
    runs = {"mpi": trace("pingpong", extra="-x HTRACE_BUFFER_SIZE=4k")}
    adir = os.path.join(WORK, "traces")
    hybrid = hybrid_program()
    if os.access(hybrid, os.X_OK):
        run(mpirun_command(2, [hybrid], preload=os.environ["HTRACE_LIB"],
                           forward=["OMP_NUM_THREADS=2", "HTRACE_BUFFER_SIZE=4k", "HTRACE_ARCHIVE_DIR=" + adir,
                                    "HTRACE_ARCHIVE_NAME=hybrid"]))
        runs["hybrid"] = os.path.join(adir, "hybrid")
    else:
        expect(False, "hybrid example built: " + hybrid)
    for name, archive in list(runs.items()):
        run([CORRECT, "--no-progress", archive, archive + "-corrected"], ok=(0, 1))
        runs[name + "-corrected"] = archive + "-corrected"
    salvaged = salvaged_archive(adir)
    if salvaged:
        runs["salvaged"] = salvaged
    for name, archive in runs.items():
        truth = archive_truth.read(archive)
        records = truth["messages"] + sum(len(v) for v in truth["recvs"].values())
        original = otf2_events(os.path.join(archive, "traces.otf2"))
        left_out = ("BUFFER_FLUSH", "THREAD_FORK", "THREAD_JOIN")  # ViTE 1.2 has no handler for these
        n = {k: sum(1 for l in original if l.startswith(k + " ")) for k in left_out}
        flushes = n["BUFFER_FLUSH"]
        expect(flushes > 0, "%s: the original has BufferFlush records" % name)
        copy = os.path.join(WORK, name + "-vite")
        p = run([REPORT, "--format", "vite", archive, "-o", copy])
        expect("open it with: vite %s/traces.otf2" % copy in p.stdout, "%s: the command to open it: %s" % (name, p.stdout))
        kinds = {"BufferFlush": n["BUFFER_FLUSH"], "ThreadFork": n["THREAD_FORK"], "ThreadJoin": n["THREAD_JOIN"]}
        said = "htrace-report: %s: the ViTE copy leaves out %s ViTE 1.2 cannot show (the original keeps them)" % (
            copy, kinds_text({k: v for k, v in kinds.items() if v}, "records"))
        expect(said in p.stderr.splitlines(), "%s: says '%s': %s" % (name, said, p.stderr))
        rc, lines = vite(os.path.join(copy, "traces.otf2"), os.path.join(WORK, name + ".svg"))
        expect(rc == 0 and not lines, "%s: ViTE reads the copy without a message: rc %d, %s" % (name, rc, lines[:5]))
        with open(os.path.join(WORK, name + ".svg")) as f:
            arrows = f.read().count("<line")
        expect(arrows == len(truth["pairs"]), "%s: ViTE draws every message (%d arrows, %d messages)" % (name, arrows, len(truth["pairs"])))
        copied = archive_truth.read(copy)
        expect(copied["slices"] == truth["slices"] and copied["pairs"] == truth["pairs"], "%s: the copy has the same events" % name)
        kept = [l for l in original if not l.startswith(tuple(k + " " for k in left_out))]
        expect(otf2_events(os.path.join(copy, "traces.otf2")) == kept,
               "%s: otf2-print shows the copy's events as the original's without those records" % name)
        defs = local_definitions(archive)
        expect(defs and local_definitions(copy) == defs,
               "%s: the copy keeps every local definition file as it was (its events copied record by record)" % name)
        rc, lines = vite(os.path.join(archive, "traces.otf2"), os.path.join(WORK, name + "-original.svg"))
        warned = sum(1 for l in lines if "cannot find rank" in l)
        expect(warned == records, "%s: ViTE warns once per message record on the original (%d warnings, %d records)" % (name, warned, records))
        for k, callback in (("BUFFER_FLUSH", "BufferFlush"), ("THREAD_FORK", "ThreadFork"), ("THREAD_JOIN", "ThreadJoin")):
            warnings = sum(1 for l in lines if "callback_%s not implemented" % callback in l)
            expect(warnings == n[k], "%s: and once per %s record (%d warnings, %d records)" % (name, callback, warnings, n[k]))
        print("%s: %d events, %s left out, %d messages drawn" % (name, len(original), n, arrows))


# What the ViTE copy leaves out (README.md, tools/htrace-report/vite_contents.h): records ViTE 1.2
# has no handler for, records of the definitions it leaves out, and those definitions.
VITE_NO_HANDLER = ("BufferFlush", "ThreadFork", "ThreadJoin", "ThreadCreate", "ParameterString", "ParameterInt",
                   "ParameterUnsignedInt")
VITE_LEFT_OUT_PREFIXES = ("Rma", "Io", "CallingContext")
VITE_LEFT_OUT_DEFINITIONS = ("metric_instances", "metric_class_recorders", "calling_contexts",
                             "calling_context_properties", "source_code_locations", "interrupt_generators",
                             "rma_wins", "io_paradigms", "io_files", "io_handles", "io_file_properties",
                             "io_pre_created_handle_states", "cart_dimensions", "cart_topologies",
                             "cart_coordinates", "callsites", "callpaths", "callpath_parameters")


def plain(v):
    """A field of an event from the otf2 module, comparable across archives (definitions by id)."""
    if hasattr(v, "_ref"):
        return (type(v).__name__, v._ref)
    if isinstance(v, dict):
        return tuple(sorted((plain(k), plain(x)) for k, x in v.items()))
    if isinstance(v, (list, tuple)):
        return tuple(plain(x) for x in v)
    return v if isinstance(v, (int, float, str, type(None))) else str(v)


def events_of(archive):
    """Every event of an archive in the otf2 module's merged order: (location id, kind, fields)."""
    with otf2.reader.open(os.path.join(archive, "traces.otf2")) as trace:
        return [(loc._ref, type(ev).__name__, plain(vars(ev))) for loc, ev in trace.events]


def vite_leaves_out(kind, fields, instances):
    if kind == "Metric":
        return dict(fields)["metric"] in instances
    return kind in VITE_NO_HANDLER or kind.startswith(VITE_LEFT_OUT_PREFIXES)


def kinds_text(counts, what):
    return "%d %s (%s)" % (sum(counts.values()), what, ", ".join("%d %s" % (n, k) for k, n in sorted(counts.items())))


def scaled(member, value, base):
    """A metric value times base^exponent: exact, except for doubles with an exponent, which the
    export rounds once to the nearest double (compared as doubles)."""
    with decimal.localcontext() as c:
        c.prec = 1000  # exact for these values
        v = decimal.Decimal(value) * decimal.Decimal(base) ** member.exponent
    return float(v) if isinstance(value, float) and member.exponent else v


def case_scorep():
    """An archive in Score-P's layout (make_scorep_archive.py): its ViTE copy and Perfetto export."""
    archive = os.path.join(WORK, "scorep")
    run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "make_scorep_archive.py"), archive])
    events = events_of(archive)
    with otf2.reader.open(os.path.join(archive, "traces.otf2")) as trace:
        defs = trace.definitions
        instances = {("MetricInstance", m._ref) for m in defs.metric_instances}
        left_out_defs = collections.Counter(type(d).__name__ for reg in VITE_LEFT_OUT_DEFINITIONS
                                            for d in getattr(defs, reg, []))
        comm_self_groups = sum(1 for g in defs.groups if str(g.group_type).endswith("COMM_SELF"))
        members = {m._ref: m for m in defs.metric_members}
        locations = {l._ref: l.name for l in defs.locations}
        offset, resolution = defs.clock_properties.global_offset, defs.clock_properties.timer_resolution
        metric_values = []  # (location, member, time, value in the member's unit)
        for loc, ev in trace.events:
            if type(ev).__name__ == "Metric":
                for member, value in zip(ev.metric.members, ev.values):
                    base = 2 if str(member.base).endswith("BINARY") else 10
                    metric_values.append((loc._ref, member._ref, ev.time, scaled(member, value, base)))
    left_out = collections.Counter(
        ("Metric of metric instances" if kind == "Metric" else kind)
        for _, kind, fields in events if vite_leaves_out(kind, fields, instances))
    for kind in ("Metric of metric instances", "CallingContextSample", "RmaPut", "ParameterInt", "ThreadCreate"):
        expect(left_out[kind] > 0, "the archive has %s records the ViTE copy leaves out" % kind)
    expect(sum(1 for _, k, f in events if k == "Metric" and not vite_leaves_out(k, f, instances)) > 0,
           "and Metric records of metric classes it carries")

    # The ViTE copy: what it leaves out, said on stderr; the rest exactly as it was.
    copy = os.path.join(WORK, "scorep-vite")
    p = run([REPORT, "--format", "vite", archive, "-o", copy])
    said = "htrace-report: %s: the ViTE copy leaves out %s and %s ViTE 1.2 cannot show (the original keeps them)" % (
        copy, kinds_text(left_out, "records"), kinds_text(left_out_defs, "definitions"))
    expect(said in p.stderr.splitlines(), "says '%s': %s" % (said, p.stderr))
    kept = [e for e in events if not vite_leaves_out(e[1], e[2], instances)]
    copied = events_of(copy)
    expect(copied == kept, "the copy's events are the original's without those records (%d of %d, %d expected)"
           % (len(copied), len(events), len(kept)))
    with otf2.reader.open(os.path.join(copy, "traces.otf2")) as trace:
        d = trace.definitions
        expect(not any(list(getattr(d, reg, [])) for reg in VITE_LEFT_OUT_DEFINITIONS), "the copy has none of those definitions")
        expect(sorted(m.name for m in d.metric_members) == sorted(m.name for m in members.values())
               and len(list(d.metric_classes)) == len(list(defs.metric_classes)),
               "the copy carries the metric members and classes")
    if not shutil.which("vite") or not shutil.which("xvfb-run"):
        expect(False, "vite and xvfb-run installed")
        return
    svg = os.path.join(WORK, "scorep-vite.svg")
    rc, lines = vite(os.path.join(copy, "traces.otf2"), svg)
    # ViTE notes each COMM_SELF group once ("New comm self: ...", "Not yet implemented"): it keeps
    # only groups of locations, and MPI_COMM_SELF is none.
    notes = [l for l in lines if l.startswith("New comm self:") or l.strip() == "Not yet implemented"]
    expect(rc == 0 and len(notes) == 2 * comm_self_groups and len(lines) == len(notes),
           "ViTE reads the copy with no message but its COMM_SELF notes: rc %d, %s" % (rc, lines[:8]))
    with open(svg) as f:
        segments = re.findall(r'<line x1="([^"]+)" y1="([^"]+)" x2="([^"]+)" y2="([^"]+)"', f.read())
    arrows = sum(1 for x1, y1, x2, y2 in segments if x1 != x2 and y1 != y2)
    messages = sum(1 for _, k, _ in events if k in ("MpiSend", "MpiIsend"))
    expect(arrows == messages, "ViTE draws every message (%d arrows, %d messages)" % (arrows, messages))
    expect(len(segments) > arrows, "ViTE draws the metric classes' values (%d step segments)" % (len(segments) - arrows))
    rc, lines = vite(os.path.join(archive, "traces.otf2"), os.path.join(WORK, "scorep-original.svg"))
    print("ViTE on the original: rc %d, %d lines: %s" % (rc, len(lines), lines[:6]))

    # The Perfetto export: one counter event per metric value, on one track per member and location.
    out = os.path.join(WORK, "scorep.json")
    p = run([REPORT, "--format", "perfetto", archive, "-o", out])
    with open(out) as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    ev = doc["traceEvents"]
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}

    def track(loc, member):
        m = members[member]
        return "%s (location %d): %s%s" % (locations[loc], loc, m.name, " [%s]" % m.unit if m.unit else "")

    scaled_doubles = {m for m in members.values() if str(m.value_type).endswith("DOUBLE") and m.exponent}
    double_tracks = {track(loc, m._ref) for loc in locations for m in scaled_doubles}
    counters = sorted((threads.get((e["pid"], e["tid"])), e["name"], exact_ns(e["ts"]),
                       float(e["args"]["value"]) if e["name"] in double_tracks else decimal.Decimal(e["args"]["value"]))
                      for e in ev if e["ph"] == "C")
    want = sorted(("%s (location %d)" % (locations[loc], loc), track(loc, member),
                   (t - offset) * 10**9 // resolution, value) for loc, member, t, value in metric_values)
    expect(counters == want, "one counter event per metric value, its track, time and scaled value (%d exported, %d "
           "values in the archive)" % (len(counters), len(want)))
    if counters != want:
        print("exported:", counters[:40], "\nexpected:", want[:40])
    expect(len({(loc, m) for loc, m, _, _ in metric_values}) == len({c[1] for c in counters}) >= 4,
           "one track per metric member and location")
    drawn = sum(1 for _, k, _ in events if k in ("Enter", "Leave", "MpiSend", "MpiIsend", "MpiRecv", "MpiIrecv",
                                                    "MpiCollectiveEnd", "Metric"))
    flows = messages + 1  # and the MPI_Allreduce's, from rank 0 to rank 1
    summary = "%d events, %d slices, %d flows, %d counter values; %d records not drawn" % (
        len(events), sum(1 for _, k, _ in events if k == "Leave"), flows, len(metric_values), len(events) - drawn)
    expect(summary in p.stderr, "summary '%s': %s" % (summary, p.stderr))
    expect("metric values left out" not in p.stderr, "no metric value left out: " + p.stderr)
    print("scorep: %d events, %d left out of the ViTE copy, %d counter values" % (len(events), sum(left_out.values()),
                                                                                len(metric_values)))


def case_conditions():
    hybrid = hybrid_program()
    if not os.access(hybrid, os.X_OK):
        sys.exit("hybrid example not built: " + hybrid)
    archive = trace("hybrid", program=hybrid, args=(), per_node=1, extra="-x OMP_NUM_THREADS=2")
    corrected = archive + "-corrected"
    run([CORRECT, "--no-progress", archive, corrected], ok=(0, 1))
    raw_html, cor_html = os.path.join(WORK, "raw.html"), os.path.join(WORK, "corrected.html")
    run([REPORT, archive, "-o", raw_html])
    run([REPORT, corrected, "--before", archive, "-o", cor_html])
    raw, cor = conditions_of(archive), conditions_of(corrected)
    print("htrace-correct --check (zero latency): raw %s, corrected %s" % (raw, cor))
    expect(raw["collective"][0] > 0 and raw["OpenMP"][0] > 0, "the run has collectives and OpenMP hand-overs")
    raw_page, cor_page = html_data(raw_html), html_data(cor_html)
    cases = [("raw", raw_page["conditions"], raw), ("corrected", cor_page["conditions"], cor),
             ("corrected --before", cor_page["before_after"]["before"], raw)]
    # Known clock errors on a generated archive (no MPI run): violations of every OpenMP kind.
    generator = os.path.join(os.environ["HTRACE_SOURCE_DIR"], "tests", "correct", "make_archive.py")
    for n, opts in enumerate((["--shift", "20000", "--thread-shift", "3000"], ["--thread-shift", "-3000"],
                              ["--thread-shift", "3000", "--barrier-task"], ["--shift", "20000", "--thread-shift", "50000"],
                              ["--zero-bcast", "--shift", "5000"], ["--neighborhood", "--shift", "5000"],
                              ["--shift2", "7000", "--pivot"], ["--thread-shift", "3000", "--taskgroup"],
                              ["--shift", "20000", "--thread-shift", "50000", "--taskgroup"],
                              ["--posting-order", "--shift2", "-300"])):
        generated = os.path.join(WORK, "generated-%d" % n)
        run([sys.executable, generator, generated] + opts)
        page = os.path.join(WORK, "generated-%d.html" % n)
        run([REPORT, generated, "-o", page])
        cases.append((" ".join(opts), html_data(page)["conditions"], conditions_of(generated)))
    expect(any(want["OpenMP"][1] > 0 for _, _, want in cases), "OpenMP violations among the cases")
    for label, counts, want in cases:
        for kind, (messages, violations) in want.items():
            got = (counts[kind]["messages"], counts[kind]["violations"])
            expect(got == (messages, violations), "%s: %s (messages, violations): report %s, htrace-correct %s"
                   % (label, kind, got, (messages, violations)))


def case_errors():
    missing = os.path.join(WORK, "nope")
    p = run([REPORT, missing, "-o", os.path.join(WORK, "x.html")], ok=(3,))
    expect("htrace-report: error:" in p.stderr and missing in p.stderr, "missing archive named: " + p.stderr)
    expect(not os.path.exists(os.path.join(WORK, "x.html")), "no output for a missing archive")
    for args, text in ((["--format", "svg"], "--format"), (["--window", "2:1"], "--window"), ([], "-o"),
                       (["--format", "perfetto", "--before", missing], "--before"), (["--max-events", "5"], "--max-events"),
                       (["--format", "perfetto", "--max-events", "-1"], "--max-events"),
                       (["--format", "perfetto", "--window", "1min:2min"], "--window")):
        p = run([REPORT, missing] + (["-o", "x"] if args else []) + args, ok=(2,))
        expect(text in p.stderr and "--help" in p.stderr, "usage error for %s: %s" % (args, p.stderr))
    not_archive = os.path.join(WORK, "empty")
    os.makedirs(not_archive)
    with open(os.path.join(not_archive, "traces.otf2"), "w") as f:
        f.write("not an anchor file\n")
    p = run([REPORT, not_archive, "-o", os.path.join(WORK, "y.html")], ok=(3,))
    expect("error" in p.stderr and not os.path.exists(os.path.join(WORK, "y.html")), "a damaged anchor: " + p.stderr)
    archive = trace("small", offsets="0,0")
    p = run([REPORT, archive, "-o", "/proc/htrace-report-cannot-write.html"], ok=(4,))
    expect("/proc/htrace-report-cannot-write.html" in p.stderr, "unwritable output named: " + p.stderr)
    p = run([REPORT, archive, "--correction", missing, "-o", os.path.join(WORK, "z.html")], ok=(3,))
    expect(missing in p.stderr and not os.path.exists(os.path.join(WORK, "z.html")), "missing correction report")
    p = run([REPORT, archive, "--before", missing, "-o", os.path.join(WORK, "b.html")], ok=(3,))
    expect(missing in p.stderr and not os.path.exists(os.path.join(WORK, "b.html")), "missing --before archive: " + p.stderr)
    # An archive of another run (3 ranks, written by tests/correct's generator) is refused as --before.
    other = os.path.join(WORK, "other")
    run([sys.executable, os.path.join(os.environ["HTRACE_SOURCE_DIR"], "tests", "correct", "make_archive.py"), other])
    p = run([REPORT, archive, "--before", other, "-o", os.path.join(WORK, "c.html")], ok=(3,))
    expect("--before" in p.stderr and "not the archive" in p.stderr and not os.path.exists(os.path.join(WORK, "c.html")),
           "--before of another run refused: " + p.stderr)
    expect(not glob.glob(os.path.join(WORK, "*.tmp.*")), "no temporary left")
    check_missing_event_files()


def check_missing_event_files():
    """A writer may leave out the event file of a location without events (OTF2's own reader then
    fails, htrace-correct reads the archive): every format reads it as if the file were there and
    empty. The file of a location with events missing is an input error naming the location."""
    complete, missing_empty = os.path.join(WORK, "complete"), os.path.join(WORK, "missing_empty")
    with otf2.writer.open(complete, timer_resolution=1000000000) as t:
        root = t.definitions.system_tree_node("node")
        main = t.definitions.region("main")
        locations = [t.definitions.location("Master thread", group=t.definitions.location_group(
            "rank %d" % r, system_tree_parent=root)) for r in range(3)]
        for r in (0, 2):
            w = t.event_writer_from_location(locations[r])
            w.enter(1000 + r, main)
            w.leave(2000 + r, main)
    shutil.copytree(complete, missing_empty)
    os.remove(os.path.join(missing_empty, "traces", "1.evt"))
    for fmt in ("json", "csv", "html", "perfetto"):
        outs = [os.path.join(WORK, "%s.%s" % (os.path.basename(a), fmt)) for a in (complete, missing_empty)]
        for a, out in zip((complete, missing_empty), outs):
            run([REPORT, "--format", fmt, a, "-o", out])
        if fmt == "json":
            docs = [json.load(open(o)) for o in outs]
            for d in docs:
                d.pop("archive", None)
            expect(docs[0] == docs[1], "json: a location without events and without its event file "
                   "reads as with an empty one")
    copies = [os.path.join(WORK, os.path.basename(a) + ".vite") for a in (complete, missing_empty)]
    for a, out in zip((complete, missing_empty), copies):
        run([REPORT, "--format", "vite", a, "-o", out])
    expect(otf2_events(os.path.join(copies[0], "traces.otf2")) ==
           otf2_events(os.path.join(copies[1], "traces.otf2")) and
           os.path.exists(os.path.join(copies[1], "traces", "1.evt")),
           "vite: the copy has the location's empty event file, and the same events")
    os.remove(os.path.join(missing_empty, "traces", "2.evt"))
    p = run([REPORT, "--format", "json", missing_empty, "-o", os.path.join(WORK, "m.json")], ok=(3,))
    expect("location 2:" in p.stderr and "2.evt" in p.stderr and not os.path.exists(os.path.join(WORK, "m.json")),
           "the missing event file of a location with events named: " + p.stderr)


{"html": case_html, "html_scale": case_html_scale, "perfetto": case_perfetto, "perfetto_limits": case_perfetto_limits, "vite": case_vite,
 "errors": case_errors,
 "conditions": case_conditions, "scorep": case_scorep}[case]()
if failures:
    sys.exit("%d failure(s)" % len(failures))
print("ok")
