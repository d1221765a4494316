#!/usr/bin/python3
"""htrace-report end to end, one behaviour per case (usage: report_case.py CASE):
  html      a real run on two emulated nodes whose clocks differ by 2 ms, traced without clock
            synchronization (so messages violate the clock condition), its report and the report
            of its htrace-correct output rendered in headless Chromium: no console message, every
            chart drawn, every number on the page equal to the otf2 Python reader's; a screenshot
            of each section is kept in the test's directory
  perfetto  the JSON export checked record for record: every slice with its exact nanoseconds,
            every message flow from its send's slice to its receive's slice, every collective
            participation flow, process and thread names
  vite      ViTE 1.2 under Xvfb on the --format vite copies of raw and corrected archives of an MPI
            and a hybrid MPI+OpenMP run: no warning, every message drawn as an arrow; on the
            original archives it warns once per message record (what the copy is for)
  errors    exit codes and messages: missing archive, bad option values, unwritable output (no
            file left behind)"""
import decimal
import glob
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import archive_truth  # noqa: E402

BUILD = os.environ["HTRACE_BUILD_DIR"]
REPORT = os.path.join(BUILD, "tools", "htrace-report", "htrace-report")
CORRECT = os.path.join(BUILD, "tools", "htrace-correct", "htrace-correct")
PROGRAM = os.path.join(BUILD, "examples", "pingpong-ring", "pingpong-ring")
case = sys.argv[1]
WORK = os.path.join(BUILD, "tests", "report", "out-" + case)  # kept: screenshots for reviewers
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(cmd, ok=(0,), **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)
    if p.returncode not in ok:
        sys.exit("'%s' exited %d:\n%s\n%s" % (" ".join(cmd), p.returncode, p.stdout[-3000:], p.stderr[-3000:]))
    return p


def trace(name, offsets="0,0.002", sync="none"):
    """pingpong-ring, 4 ranks on 2 emulated nodes (or one node where namespaces are missing)."""
    adir = os.path.join(WORK, "traces")
    os.makedirs(adir, exist_ok=True)
    extra = "-x LD_PRELOAD=%s -x HTRACE_SYNC=%s -x HTRACE_ARCHIVE_DIR=%s -x HTRACE_ARCHIVE_NAME=%s" % (
        os.environ["HTRACE_LIB"], sync, adir, name)
    p = subprocess.run([os.environ["HTRACE_CLUSTER_RUN"], "--offsets", offsets, "--ranks-per-node", "2", "--",
                        PROGRAM, "3"], capture_output=True, text=True, timeout=180,
                       env=dict(os.environ, MPIRUN_EXTRA=extra))
    if p.returncode != 0:  # no time namespaces here: one node, no violations to show
        print("emulated cluster unavailable (%d); tracing on one node" % p.returncode)
        run(os.environ["MPIRUN"].split() + ["-np", "4"] + extra.split() + [PROGRAM, "3"])
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


def check_page(driver, path, truth, label, correction=None):
    driver.get("file://" + path)
    logs = driver.get_log("browser")
    expect(not logs, "%s: no console message: %s" % (label, logs))
    colours = driver.execute_script(CHART_PIXELS)
    expected_charts = {"chart-imbalance", "chart-heatmap", "chart-matrix-messages", "chart-matrix-bytes",
                       "chart-overview", "chart-detail", "chart-clocks", "chart-violation"}
    if correction:
        expected_charts.add("chart-deviation")
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
    for section in ("summary", "profile", "matrix", "timeline", "clocks"):
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
    run([REPORT, corrected, "--correction", rep_path, "-o", cor_html])
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
    driver = browser()
    try:
        check_page(driver, raw_html, raw, "raw")
        check_page(driver, cor_html, cor, "corrected", correction)
    finally:
        driver.quit()


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
        for rank, (ref, start, _) in members.items():
            if rank != root and root in members:
                want_coll.append(((members[root][0], members[root][1]), (ref, start)))
    expect(coll == sorted(want_coll), "collective flows: root -> every member (%d exported, %d expected)" % (len(coll), len(want_coll)))
    expect("%d slices" % len(want) in p.stderr, "summary line: " + p.stderr)


def vite(anchor, svg):
    p = subprocess.run(["xvfb-run", "-a", "vite", anchor, "-e", svg], capture_output=True, text=True, timeout=120)
    return p.returncode, [l for l in (p.stdout + p.stderr).splitlines()
                          if l.strip() and not l.startswith("QStandardPaths")]


def case_vite():
    if not shutil.which("vite") or not shutil.which("xvfb-run"):
        print("vite or xvfb-run not installed")
        sys.exit(77)
    runs = {"mpi": trace("pingpong")}
    adir = os.path.join(WORK, "traces")
    hybrid = os.path.join(BUILD, "examples", "hybrid-jacobi", "hybrid-jacobi-gcc")
    if os.access(hybrid, os.X_OK):
        run(os.environ["MPIRUN"].split() + ["-np", "2", "-x", "OMP_NUM_THREADS=2", "-x", "LD_PRELOAD=" + os.environ["HTRACE_LIB"],
            "-x", "HTRACE_ARCHIVE_DIR=" + adir, "-x", "HTRACE_ARCHIVE_NAME=hybrid", hybrid])
        runs["hybrid"] = os.path.join(adir, "hybrid")
    else:
        expect(False, "hybrid example built: " + hybrid)
    for name, archive in list(runs.items()):
        run([CORRECT, "--no-progress", archive, archive + "-corrected"], ok=(0, 1))
        runs[name + "-corrected"] = archive + "-corrected"
    for name, archive in runs.items():
        truth = archive_truth.read(archive)
        records = truth["messages"] + sum(len(v) for v in truth["recvs"].values())
        copy = os.path.join(WORK, name + "-vite")
        p = run([REPORT, "--format", "vite", archive, "-o", copy])
        expect("vite %s/traces.otf2" % copy in p.stderr, "%s: the command to open it: %s" % (name, p.stderr))
        rc, lines = vite(os.path.join(copy, "traces.otf2"), os.path.join(WORK, name + ".svg"))
        # ViTE 1.2 implements no BufferFlush callback and says so once per record. The copy keeps
        # them (they mark the tracer's own pauses; runs with the default 64 KiB buffer have one per
        # ~1365 events): a known gap, counted exactly so that any other warning still fails.
        flush_warnings = [l for l in lines if "callback_BufferFlush not implemented" in l]
        flushes = subprocess.run(["otf2-print", os.path.join(copy, "traces.otf2")], capture_output=True,
                                 text=True).stdout.count("BUFFER_FLUSH")
        expect(len(flush_warnings) == flushes, "%s: one BufferFlush warning per BufferFlush record (%d, %d)"
               % (name, len(flush_warnings), flushes))
        noise = [l for l in lines if any(w in l.lower() for w in ("warning", "error", "not yet implemented", "cannot"))
                 and "0 errors and 0 warnings" not in l and l not in flush_warnings]
        expect(rc == 0 and not noise, "%s: ViTE reads the copy without a warning: rc %d, %s" % (name, rc, noise[:5]))
        with open(os.path.join(WORK, name + ".svg")) as f:
            arrows = f.read().count("<line")
        expect(arrows == len(truth["pairs"]), "%s: ViTE draws every message (%d arrows, %d messages)" % (name, arrows, len(truth["pairs"])))
        copied = archive_truth.read(copy)
        expect(copied["slices"] == truth["slices"] and copied["pairs"] == truth["pairs"], "%s: the copy has the same events" % name)
        rc, lines = vite(os.path.join(archive, "traces.otf2"), os.path.join(WORK, name + "-original.svg"))
        warned = sum(1 for l in lines if "cannot find rank" in l)
        expect(warned == records, "%s: ViTE warns once per message record on the original (%d warnings, %d records)" % (name, warned, records))


def case_errors():
    missing = os.path.join(WORK, "nope")
    p = run([REPORT, missing, "-o", os.path.join(WORK, "x.html")], ok=(1,))
    expect("htrace-report: error:" in p.stderr and missing in p.stderr, "missing archive named: " + p.stderr)
    expect(not os.path.exists(os.path.join(WORK, "x.html")), "no output for a missing archive")
    for args, text in ((["--format", "svg"], "--format"), (["--window", "2:1"], "--window"), ([], "-o")):
        p = run([REPORT, missing] + (["-o", "x"] if args else []) + args, ok=(2,))
        expect(text in p.stderr and "--help" in p.stderr, "usage error for %s: %s" % (args, p.stderr))
    not_archive = os.path.join(WORK, "empty")
    os.makedirs(not_archive)
    with open(os.path.join(not_archive, "traces.otf2"), "w") as f:
        f.write("not an anchor file\n")
    p = run([REPORT, not_archive, "-o", os.path.join(WORK, "y.html")], ok=(1,))
    expect("error" in p.stderr and not os.path.exists(os.path.join(WORK, "y.html")), "a damaged anchor: " + p.stderr)
    archive = trace("small", offsets="0,0")
    p = run([REPORT, archive, "-o", "/proc/htrace-report-cannot-write.html"], ok=(1,))
    expect("/proc/htrace-report-cannot-write.html" in p.stderr, "unwritable output named: " + p.stderr)
    p = run([REPORT, archive, "--correction", missing, "-o", os.path.join(WORK, "z.html")], ok=(1,))
    expect(missing in p.stderr and not os.path.exists(os.path.join(WORK, "z.html")), "missing correction report")
    expect(not glob.glob(os.path.join(WORK, "*.tmp.*")), "no temporary left")


{"html": case_html, "perfetto": case_perfetto, "vite": case_vite, "errors": case_errors}[case]()
if failures:
    sys.exit("%d failure(s)" % len(failures))
print("ok")
