#!/usr/bin/python3
"""htrace-score against an independent reader (python3-otf2) and the file system. One case per
invocation:

    score_test.py generated GEN_ARCHIVE   bench/correct's generator: 16 processes read back record
                                          for record; 4,096 under `ulimit -n 256` with a bound on
                                          peak memory
    score_test.py scorep                  an archive in Score-P's layout (another tool's writer)
    score_test.py traced PROGRAM          tests/score/score_steady traced under MPIRUN; --limit's
                                          exclusion applied to a second run (HTRACE_MPI_EXCLUDE)
                                          and a third (its filter file, HTRACE_FILTER_FILE), whose
                                          projections for the same ranks and seconds must be under
                                          the limit
    score_test.py errors                  unreadable archives (exit 3), unwritable outputs (exit 4)

Every case checks, from the archive itself: the records of each region (each event counted for
the innermost region open on its location, Enter for the region it opens, Leave for the one it
closes) and the calls (Leaves, a run of polls counting its HTRACE::POLLS); that the regions' bytes
add up to the event files' sizes; and the projection's arithmetic (N ranks, T seconds) against
the archive's own figures. Environment from ctest: HTRACE_BUILD_DIR, HTRACE_SOURCE_DIR, MPIRUN,
HTRACE_LIB."""
import collections
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import otf2

from htrace_test.archive import anchor_path
from htrace_test.build import tool
from htrace_test.check import Expectations, fail, run_or_exit
from htrace_test.mpi import mpirun_command
from htrace_test.rank_output import RankOutput

SCORE = tool("htrace-score")
POLLS = "HTRACE::POLLS"
OUTSIDE = "(outside any region)"
expect = Expectations()


def score(archive, *options, ok=(0,)):
    """htrace-score --json ARCHIVE OPTIONS: the parsed report."""
    done = run_or_exit([SCORE, "--json", archive, *options], ok=ok)
    return json.loads(done.stdout)


def rank_of(group):
    """A process's location group, or the one that created a group of another kind (Score-P's
    CUDA contexts belong to their process's rank)."""
    creator = getattr(group, "creating_location_group", None)
    if group.location_group_type != otf2.LocationGroupType.PROCESS and creator is not None:
        return creator._ref
    return group._ref


def read_back(archive):
    """The archive as python3-otf2 reads it: ({region: records}, {region: calls}, {rank: records},
    {rank: (first, last) tick}, {rank: (end of MPI_Init, start of MPI_Finalize)}, resolution)."""
    records, calls = collections.Counter(), collections.Counter()
    by_rank = collections.Counter()
    span, window = {}, {}
    with otf2.reader.open(anchor_path(archive)) as trace:
        resolution = trace.definitions.clock_properties.timer_resolution
        stacks = collections.defaultdict(list)
        for location, event in trace.events:
            rank = rank_of(location.group)
            by_rank[rank] += 1
            first, last = span.get(rank, (event.time, event.time))
            span[rank] = (min(first, event.time), max(last, event.time))
            stack = stacks[location]
            if isinstance(event, otf2.events.Enter):
                stack.append(event.region.name)
                region = event.region.name
                if region == "MPI_Finalize":
                    window.setdefault(rank, [None, None])[1] = event.time
            elif isinstance(event, otf2.events.Leave):
                region = event.region.name
                if stack and stack[-1] == region:
                    stack.pop()
                polls = [v for a, v in (event.attributes or {}).items() if a.name == POLLS]
                calls[region] += polls[0] if polls else 1
                if region in ("MPI_Init", "MPI_Init_thread"):
                    window.setdefault(rank, [None, None])[0] = event.time
            else:
                region = stack[-1] if stack else OUTSIDE
            records[region] += 1
    return records, calls, by_rank, span, window, resolution


def event_file_bytes(archive):
    return sum(os.path.getsize(f) for f in glob.glob(os.path.join(archive, "traces", "*.evt")))


def archive_bytes(archive):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(archive) for f in files)


def check_against_reader(archive, report, what):
    """Per-region records and calls, per-rank records, bytes and the window against python3-otf2."""
    records, calls, by_rank, span, window, resolution = read_back(archive)
    regions = {r["name"]: r for r in report["regions"]}
    for name in set(records) | {n for n, r in regions.items() if r["records"]}:
        got = regions.get(name, {}).get("records", 0)
        expect(got == records[name], f"{what}: {name}: htrace-score {got} records, otf2 {records[name]}")
    for name, n in calls.items():
        got = regions.get(name, {}).get("calls", 0)
        expect(got == n, f"{what}: {name}: htrace-score {got} calls, otf2 {n}")
    expect(report["records"] == sum(records.values()),
           f"{what}: {report['records']} records in all, otf2 {sum(records.values())}")
    ranks = report["by_rank"]["all"] or []
    for r in ranks:
        expect(r["records"] == by_rank[r["rank"]],
               f"{what}: rank {r['rank']}: {r['records']} records, otf2 {by_rank[r['rank']]}")
    # Bytes: the regions add up to the event files exactly, and so do the ranks.
    files = event_file_bytes(archive)
    total = sum(r["bytes"] for r in report["regions"])
    expect(total == files, f"{what}: regions' bytes {total} != event files' {files}")
    expect(report["files"]["event_bytes"] == files, f"{what}: event_bytes {report['files']}")
    if ranks:
        expect(sum(r["bytes"] for r in ranks) == files, f"{what}: ranks' bytes != event files")
    # The window: MPI_Init's end to MPI_Finalize's start where both exist, else the events' span.
    seconds = 0.0
    for rank, (first, last) in span.items():
        begin, end = window.get(rank, [None, None])
        mpi = begin is not None and end is not None and end > begin
        seconds += ((end - begin) if mpi else (last - first)) / resolution
    expect(abs(report["model"]["rank_seconds"] - seconds) <= 1e-9 * max(seconds, 1),
           f"{what}: rank-seconds {report['model']['rank_seconds']}, otf2 {seconds}")
    return records


def check_projection(archive, report, what):
    """At the archive's own ranks and mean window the projection is the archive's size; for N ranks
    and T seconds run bytes scale by N*T/rank-seconds, the rest as the model says."""
    m, p = report["model"], report["projection"]
    size = archive_bytes(archive)
    expect(abs(p["total_bytes"] - size) <= 1,
           f"{what}: default projection {p['total_bytes']} != the archive's {size} bytes")
    fixed = sum(r["bytes"] for r in report["regions"] if r["fixed"])
    expect(m["fixed_bytes"] == fixed and m["run_bytes"] == report["files"]["event_bytes"] - fixed,
           f"{what}: model {m} against {fixed} fixed bytes")
    ranks, seconds = 3 * report["ranks"], 2.5 * m["seconds"]
    q = score(archive, "--ranks", str(ranks), "--seconds", repr(seconds))["projection"]
    run = m["run_bytes"] * ranks * seconds / m["rank_seconds"]
    fixed_part = m["fixed_bytes"] * 3
    definitions = m["definitions_fixed_bytes"] + m["definitions_rank_bytes"] * 3
    for key, want in (("run_bytes", run), ("fixed_bytes", fixed_part),
                      ("definition_bytes", definitions), ("total_bytes", run + fixed_part + definitions)):
        expect(abs(q[key] - want) <= 1e-6 * max(want, 1), f"{what}: projected {key} {q[key]}, expected {want}")
    # --work-factor K: K times this run's window, the run bytes K times.
    w = score(archive, "--work-factor", "4")["projection"]
    expect(abs(w["run_bytes"] - 4 * m["run_bytes"]) <= 1e-6 * max(m["run_bytes"], 1) and
           abs(w["seconds"] - 4 * m["seconds"]) <= 1e-9 * max(m["seconds"], 1),
           f"{what}: --work-factor 4: {w}")
    expect(m["definitions_fixed_bytes"] + m["definitions_rank_bytes"] ==
           size - report["files"]["event_bytes"], f"{what}: definitions {m} of {size} bytes")


def generated(gen):
    work = tempfile.mkdtemp(prefix="htrace-score-gen-")
    small = os.path.join(work, "g16")
    run_or_exit([gen, small, "--processes", "16", "--events", "200000", "--chunk", str(256 * 1024)])
    report = score(small)
    check_against_reader(small, report, "16 processes")
    check_projection(small, report, "16 processes")
    expect(not report["model"]["mpi_windows"], "no MPI_Init in the generated archive: whole spans")

    # Many locations: one at a time, no file open per location, memory flat.
    big = os.path.join(work, "g4096")
    done = run_or_exit([gen, big, "--processes", "4096", "--events", "400000", "--chunk",
                        str(256 * 1024)])
    events = int(re.search(r": (\d+) events", done.stdout).group(1))
    measure = ("import resource, subprocess, sys\n"
               "p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE)\n"
               "sys.stdout.buffer.write(p.stdout)\n"
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
               "sys.exit(p.returncode)\n")
    p = subprocess.run(["bash", "-c", 'ulimit -n 256; exec "$@"', "bash", sys.executable, "-c",
                        measure, SCORE, "--json", big], capture_output=True, text=True, timeout=300)
    expect(p.returncode == 0, f"4096 locations under ulimit -n 256: exit {p.returncode}: {p.stderr}")
    if p.returncode == 0:
        big_report = json.loads(p.stdout)
        rss_kb = int(p.stderr.strip().splitlines()[-1])
        print(f"4096 locations: {big_report['records']} records, peak RSS {rss_kb} kB")
        # The tool's own ~10 MB, the definitions of 4,096 locations and a few hundred bytes per
        # rank; an event file is read in place and given back as it is read.
        expect(rss_kb < 48 * 1024, f"peak RSS {rss_kb} kB at 4096 locations")
        expect(big_report["records"] == events, f"{big_report['records']} records, generated {events}")
        expect(sum(r["bytes"] for r in big_report["regions"]) == event_file_bytes(big),
               "4096 locations: the regions' bytes != the event files'")
        expect(big_report["by_rank"]["all"] is None and len(big_report["by_rank"]["top"]) == 10,
               "many ranks: summarized, not listed")
    return work


def scorep():
    work = tempfile.mkdtemp(prefix="htrace-score-scorep-")
    archive = os.path.join(work, "scorep")
    run_or_exit([sys.executable, os.path.join(os.environ["HTRACE_SOURCE_DIR"], "tests", "report",
                                              "make_scorep_archive.py"), archive])
    report = score(archive)
    check_against_reader(archive, report, "Score-P layout")
    check_projection(archive, report, "Score-P layout")
    families = {f["family"] for f in report["families"]}
    expect("p2p" in families and "coll" in families, f"MPI families of Score-P's regions: {families}")
    return work


def trace(program, seconds, workdir, name, settings=()):
    """One traced run of PROGRAM on 2 ranks with HTRACE_* `settings`: its archive's path."""
    archive_dir = os.path.join(workdir, name)
    output = RankOutput(os.path.join(workdir, name + "-output"))
    forward = ["HTRACE_ARCHIVE_DIR=" + workdir, "HTRACE_ARCHIVE_NAME=" + name, *settings]
    command = mpirun_command(2, [program, str(seconds)], bind_none=True,
                             preload=os.environ["HTRACE_LIB"], output=output, forward=forward)
    done = subprocess.run(command, capture_output=True, text=True, timeout=240)
    if done.returncode != 0 or "score_steady:" not in output.stdout(0):
        fail(f"{name}: exit {done.returncode}\n{output.describe()}{done.stdout}\n{done.stderr}")
    if not os.path.exists(os.path.join(archive_dir, "traces.otf2")):
        fail(f"{name}: no archive\n{output.describe()}")
    return archive_dir, output


def traced(program):
    work = tempfile.mkdtemp(prefix="htrace-score-traced-")
    first, _ = trace(program, 2, work, "first")
    report = score(first)
    check_against_reader(first, report, "traced")
    check_projection(first, report, "traced")
    expect(report["polls_folded"], "libhtrace folds runs of polls: HTRACE::POLLS defined")
    expect(report["model"]["mpi_windows"], "windows from MPI_Init to MPI_Finalize")
    regions = {r["name"]: r for r in report["regions"]}
    # What an exclusion removes: every MPI_Isend call, and the completions of its requests in the
    # MPI_Waitall calls (recorded anyway); of MPI_Test only the runs of unsuccessful polls (a test
    # that completes its receive is recorded anyway); of MPI_Waitall nothing.
    isend, test, waitall = regions["MPI_Isend"], regions["MPI_Test"], regions["MPI_Waitall"]
    expect(isend["removable_bytes"] == isend["bytes"] + isend["follow_on_bytes"] and
           isend["follow_on_records"] == isend["calls"], f"MPI_Isend: {isend}")
    expect(0 < test["removable_bytes"] < test["bytes"] and test["follow_on_bytes"] == 0,
           f"MPI_Test: {test}")
    expect(waitall["removable_bytes"] == 0, f"MPI_Waitall: {waitall}")
    expect(not regions["MPI_Init"]["excludable"] and regions["MPI_Init"]["fixed"], "MPI_Init")

    # --limit: 60 % of the projection for this run's ranks and seconds.
    ranks, seconds = report["ranks"], report["model"]["seconds"]
    limit = int(0.6 * report["projection"]["total_bytes"])
    filter_file = os.path.join(work, "filter.txt")
    plan = score(first, "--limit", str(limit), "--filter-file", filter_file)["limit"]
    print(f"limit {limit}: exclude {plan['htrace_mpi_exclude']}, projected {plan['projected_after']:.0f}")
    expect(plan["reached"] and plan["projected_after"] <= limit, f"limit not reached: {plan}")
    names = [s["name"] for s in plan["exclude"]]
    expect(plan["htrace_mpi_exclude"] == ",".join(names) and names, f"HTRACE_MPI_EXCLUDE: {plan}")
    expect(all(regions[n]["excludable"] for n in names), f"only excludable functions: {names}")
    with open(filter_file) as f:
        expect(f.read() == "SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE\n" +
               "".join(f"    {n}\n" for n in names) + "SCOREP_REGION_NAMES_END\n",
               "the Score-P filter file names the excluded functions")
    # Greedy: no exclusion left out removes more than the last one taken.
    if plan["exclude"]:
        smallest = min(s["removed_bytes"] for s in plan["exclude"])
        others = [r for n, r in regions.items() if r["excludable"] and n not in names]
        expect(all(r["projected_removable_bytes"] <= smallest for r in others),
               f"greedy by removable bytes: {plan['exclude']}")

    # Applied: the second run's projection for the same ranks and seconds is under the limit; so is
    # a third run's that reads the filter file instead (HTRACE_FILTER_FILE).
    for name, setting in (("second", "HTRACE_MPI_EXCLUDE=" + plan["htrace_mpi_exclude"]),
                          ("third", "HTRACE_FILTER_FILE=" + filter_file)):
        archive, output = trace(program, 2, work, name, [setting])
        after = score(archive, "--ranks", str(ranks), "--seconds", repr(seconds))
        print(f"with {setting}: {archive_bytes(archive)} bytes, projected "
              f"{after['projection']['total_bytes']:.0f} for {ranks} ranks, {seconds:.3f} s")
        expect(after["projection"]["total_bytes"] <= limit,
               f"{setting}: the run projects to {after['projection']['total_bytes']} > {limit}")
        left = {r["name"]: r for r in after["regions"]}
        for n in names:
            expect(left.get(n, {}).get("removable_bytes", 0) == 0,
                   f"{setting}: {n}: excluded, still {left.get(n)} removable bytes")
        expect(any("calls excluded by HTRACE_MPI_EXCLUDE" in line for line in output.log()),
               f"{setting}: the run says what it left out: {output.log()}")

    # A limit no exclusion reaches: said so, the best there is, exit 0.
    tiny = score(first, "--limit", "1k")["limit"]
    expect(not tiny["reached"] and tiny["exclude"], f"--limit 1k: {tiny}")
    text = run_or_exit([SCORE, first, "--limit", "1k"]).stdout
    expect("No exclusion brings the projection under the limit" in text, "--limit 1k says so")
    return work


def errors():
    work = tempfile.mkdtemp(prefix="htrace-score-errors-")
    archive = os.path.join(work, "a")
    run_or_exit([sys.executable, os.path.join(os.environ["HTRACE_SOURCE_DIR"], "tests", "report",
                                              "make_scorep_archive.py"), archive])

    def run(*args):
        return subprocess.run([SCORE, *args], capture_output=True, text=True, timeout=60)

    def expect_error(code, pattern, *args):
        p = run(*args)
        expect(p.returncode == code and re.search(pattern, p.stderr) and p.stderr.startswith(
            "htrace-score: error: ") and not p.stdout,
               f"{args}: exit {p.returncode} (expected {code}), stderr {p.stderr!r}, stdout {p.stdout[:200]!r}")

    expect_error(3, "no-such", os.path.join(work, "no-such"))
    os.makedirs(os.path.join(work, "empty"))
    expect_error(3, "empty", os.path.join(work, "empty"))
    # A damaged event file: named, with the byte offset.
    broken = os.path.join(work, "broken")
    shutil.copytree(archive, broken)
    evt = sorted(glob.glob(os.path.join(broken, "traces", "*.evt")), key=os.path.getsize)[-1]
    with open(evt, "r+b") as f:
        f.truncate(os.path.getsize(evt) // 2)
    expect_error(3, re.escape(os.path.basename(evt)) + ".* at byte [0-9]+", broken)
    missing = os.path.join(work, "missing")
    shutil.copytree(archive, missing)
    os.remove(sorted(glob.glob(os.path.join(missing, "traces", "*.evt")))[0])
    expect_error(3, "missing event file", missing)
    # Outputs: an unwritable place fails before reading (exit 4), and nothing is left behind.
    expect_error(4, "no-dir", archive, "-o", os.path.join(work, "no-dir", "r.txt"))
    expect_error(4, "no-dir", archive, "--limit", "1k", "--filter-file",
                 os.path.join(work, "no-dir", "f.txt"))
    out = os.path.join(work, "out")
    os.makedirs(out)
    expect_error(3, "no-such", os.path.join(work, "no-such"), "-o", os.path.join(out, "r.txt"))
    expect(os.listdir(out) == [], f"a failed run left {os.listdir(out)}")
    # -o writes what stdout would show.
    p = run(archive, "-o", os.path.join(out, "r.txt"))
    with open(os.path.join(out, "r.txt")) as f:
        expect(p.returncode == 0 and f.read() == run(archive).stdout, "-o FILE holds the report")
    expect(os.listdir(out) == ["r.txt"], f"-o left {os.listdir(out)}")
    return work


def main():
    case = sys.argv[1]
    work = {"generated": lambda: generated(sys.argv[2]), "scorep": scorep,
            "traced": lambda: traced(sys.argv[2]), "errors": errors}[case]()
    expect.finish(work)


if __name__ == "__main__":
    main()
