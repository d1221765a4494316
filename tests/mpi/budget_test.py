"""HTRACE_BUDGET: a per-rank limit on the bytes of OTF2 event data, on budget.c (a program whose
every location makes the same calls in the same order on every run), read back with python3-otf2.

  one_rank     2 ranks of 2 threads, rank 0's trace growing ~10x faster: only rank 0 reaches the
               budget, mid-run; rank 1 records everything.
  all_ranks    2 ranks, one thread, MPI_Pcontrol(0)/(1) around every 8th iteration: both ranks
               reach it; the summary tells paused calls from calls after the budget.
  not_reached  a budget far above the trace: the same records per location and kind as without
               one (BufferFlush aside, whose number follows timing), no MeasurementOnOff, no line.
  pcontrol     the budget reached inside MPI_Pcontrol(0) (HTRACE_BUFFER_SIZE=1k, HTRACE_BUDGET=1):
               the MPI_Pcontrol(1) after it must not switch recording back on.

Where the budget is reached, checked on the archive: each location of that rank ends with a
MeasurementOnOff (off) record, its only one but MPI_Pcontrol's; the calls each location recorded
are the program's own calls up to a point (a prefix, Enter/Leave balanced, times never
decreasing); the rank's event files hold at least the budget and at most the documented bound
past it; one log line per such rank (HTRACE_LOG_FILE) names the rank, the time and the budget.
Always: the program's output and exit status are those of an untraced run; rank 0's summary
counts, per function, exactly the calls the program made beyond what was recorded (and paused);
tests/lib/trace_check.py (one-sided relations allowed where a rank was cut), otf2-print,
htrace-correct (exit 0, no violation after) and htrace-report (html, json) read the archive.

usage: budget_test.py PROGRAM CASE   (environment from ctest: HTRACE_LIB, MPIRUN, ...)"""
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

import otf2

import trace_check
from htrace_test.archive import anchor_path, archive_properties
from htrace_test.build import tool
from htrace_test.check import Expectations, fail
from htrace_test.mpi import mpirun_command
from htrace_test.rank_output import RankOutput

RANKS = 2
RECORD_BYTES = 48  # an EventRecord in a thread's buffer (libtrace/record/event_record.h)
# The documented overshoot, per thread: what its buffer holds at the cut (HTRACE_BUFFER_SIZE / 48
# records) plus the rest of the call it is in, at most MAX_ENCODED bytes each, plus a chunk's end
# and the closing MeasurementOnOff.
MAX_ENCODED = 50
CALL_REST_RECORDS = 8
SLACK_BYTES = 512

CASES = {
    # program arguments, HTRACE_* of the budgeted run, threads per rank
    "one_rank": (["loop", "1000", "40", "1", "0"], {"HTRACE_BUDGET": "400k"}, 2),
    "all_ranks": (["loop", "2000", "3", "0", "1"], {"HTRACE_BUDGET": "48k"}, 1),
    "not_reached": (["loop", "400", "10", "1", "0"], {"HTRACE_BUDGET": "1G"}, 2),
    "pcontrol": (["pcontrol"], {"HTRACE_BUDGET": "1", "HTRACE_BUFFER_SIZE": "1k"}, 1),
}
LOG_LINE = re.compile(r"^htrace\[(\d+)\]: warning: rank (\d+) reached HTRACE_BUDGET=(\d+) bytes of "
                      r"trace events ([0-9.]+) s after tracing started; recording stops on this "
                      r"rank, the program runs on$")


def run(program, args, workdir, name, variables=None, traced=True):
    """One run on RANKS ranks: (exit status, RankOutput, archive directory or None)."""
    run_dir = os.path.join(workdir, name)
    archives = os.path.join(run_dir, "archives")
    os.makedirs(archives)
    output = RankOutput(os.path.join(run_dir, "output"))
    forward = [f"{k}={v}" for k, v in (variables or {}).items()]
    forward.append("HTRACE_ARCHIVE_DIR=" + archives)
    command = mpirun_command(RANKS, [program] + args, bind_none=True, output=output,
                             preload=os.environ["HTRACE_LIB"] if traced else None,
                             forward=forward if traced else [])
    done = subprocess.run(command, capture_output=True, text=True, timeout=240)
    found = os.listdir(archives)
    if traced and len(found) != 1:
        fail(f"{name}: expected one archive, found {found}\n{output.describe()}{done.stderr}")
    return done.returncode, output, os.path.join(archives, found[0]) if traced else None


def size_value(text):
    """A byte count with libhtrace's suffixes (k, M, G: powers of 1024)."""
    shift = {"k": 10, "M": 20, "G": 30}.get(text[-1], 0)
    return int(text[:-1] if shift else text) << shift


def program_calls(output):
    """{rank: {function: calls}} as the program printed them."""
    calls = collections.defaultdict(collections.Counter)
    for m in re.finditer(r"^rank (\d+) calls (\S+) (\d+)$", output.stdout(), re.M):
        calls[int(m.group(1))][m.group(2)] = int(m.group(3))
    return calls


def expected_calls(args, rank, thread):
    """The MPI regions location (rank, thread) enters in a complete run, in order."""
    if args[0] == "pcontrol":
        return (["MPI_Init"] + ["MPI_Comm_rank"] * 9 + ["MPI_Pcontrol", "MPI_Barrier",
                "MPI_Pcontrol"] + ["MPI_Comm_rank", "MPI_Barrier"] * 10 + ["MPI_Finalize"])
    iterations, heavy, threaded, pause = map(int, args[1:])
    if thread == 1:
        return ["MPI_Sendrecv"] * iterations
    calls = ["MPI_Init_thread" if threaded else "MPI_Init", "MPI_Comm_rank", "MPI_Comm_size"]
    calls += ["MPI_Comm_dup"] if threaded else []
    for i in range(iterations):
        if pause and i % 8 == 4:  # what MPI_Pcontrol(0) and (1) enclose is not recorded
            calls += ["MPI_Pcontrol", "MPI_Pcontrol"]
        else:
            calls += ["MPI_Sendrecv", "MPI_Allreduce"]
            calls += ["MPI_Comm_rank"] * (heavy if rank == 0 else 0)
    return calls + (["MPI_Comm_free"] if threaded else []) + ["MPI_Finalize"]


def paused_calls(args, rank, names):
    """{function: calls} made while MPI_Pcontrol(0) held recording off, for a master location
    that recorded `names`: the pauses it recorded both ends of (calls of a pause the budget cut
    count as calls after the budget)."""
    if args[0] != "loop":
        return collections.Counter()
    n = names.count("MPI_Pcontrol") // 2
    heavy = int(args[2]) if rank == 0 else 0
    return +collections.Counter({"MPI_Sendrecv": n, "MPI_Allreduce": n, "MPI_Comm_rank": n * heavy})


def read_archive(archive):
    """{(rank, thread): [events]} in file order."""
    per_location = collections.defaultdict(list)
    with otf2.reader.open(anchor_path(archive)) as trace:
        for location, event in trace.events:
            per_location[(location._ref & 0xffffffff, location._ref >> 32)].append(event)
    return per_location


def kind(event):
    return type(event).__name__


def check_location(expect, where, events, full_calls):
    """Balanced, nested, monotone; the recorded calls a prefix of `full_calls` (with MPI_Pcontrol's
    own MeasurementOnOff records inside it). Returns the Enter names."""
    stack, names, last = [], [], 0
    for e in events:
        expect(e.time >= last, f"{where}: time goes back at {e}")
        last = max(last, e.time)
        if kind(e) == "Enter":
            stack.append(e.region.name)
            names.append(e.region.name)
        elif kind(e) == "Leave":
            expect(bool(stack) and stack[-1] == e.region.name, f"{where}: Leave {e.region.name} "
                   f"with {stack[-3:]} open")
            stack = stack[:-1]
    expect(not stack, f"{where}: open at the end: {stack}")
    first_difference = next((i for i, (a, b) in enumerate(zip(names, full_calls)) if a != b), None)
    expect(names == full_calls[:len(names)], f"{where}: the recorded calls are not the program's "
           f"first {len(names)}: first difference at call {first_difference}")
    return names


def event_file_bytes(archive):
    """{rank: bytes of its locations' event files}."""
    out = collections.Counter()
    folder = os.path.join(archive, "traces")
    for name in os.listdir(folder):
        if name.endswith(".evt"):
            out[int(name[:-4]) & 0xffffffff] += os.path.getsize(os.path.join(folder, name))
    return out


def summary_counts(log, reason):
    """{function: calls} of rank 0's untraced line for `reason`, and the line's total."""
    line = next((l for l in log if "untraced:" in l and reason in l), None)
    if line is None:
        return collections.Counter(), 0, None
    m = re.search(r"untraced: (\d+) calls .*\(all ranks\): (.*)$", line)
    counts = collections.Counter({name: int(n) for name, n in re.findall(r"(MPI_\w+) (\d+)",
                                                                        m.group(2))})
    return counts, int(m.group(1)), line


def independent_check(expect, archive, cut):
    """tests/lib/trace_check.py (python3-otf2 only): nesting, time order, the BufferFlush rule;
    where the budget cut some ranks, one-sided relations are what it should find."""
    report = trace_check.check(archive)
    other = [v for v in report.violations if not (cut and trace_check.one_sided(v))]
    expect(not other, f"trace_check: {other[:5]}")


def readers_accept(expect, archive, workdir):
    """otf2-print, htrace-correct (exit 0, no violation left) and htrace-report (html, json)."""
    anchor = anchor_path(archive)
    printed = subprocess.run(["otf2-print", anchor], capture_output=True, text=True, timeout=240)
    expect(printed.returncode == 0,
           f"otf2-print exit {printed.returncode}: {printed.stderr[-500:]}")
    corrected = os.path.join(workdir, "corrected")
    done = subprocess.run([tool("htrace-correct"), "--json", "--no-progress", anchor, corrected],
                          capture_output=True, text=True, timeout=240)
    expect(done.returncode == 0, f"htrace-correct exit {done.returncode}: {done.stderr[-800:]}")
    if done.returncode == 0:
        after = json.loads(done.stdout)["violations_after"]
        expect(all(v == 0 for v in after.values()), f"violations after correction: {after}")
    for fmt, name in (("html", "report.html"), ("json", "report.json")):
        done = subprocess.run([tool("htrace-report"), "--format", fmt, "-o",
                               os.path.join(workdir, name), anchor],
                              capture_output=True, text=True, timeout=240)
        expect(done.returncode == 0, f"htrace-report --format {fmt} exit {done.returncode}: "
               f"{done.stderr[-800:]}")


def check_log(expect, log, budget, want_reached, output):
    """One line per rank that reached the budget, naming it, the time and the budget."""
    lines = [LOG_LINE.match(l) for l in log if "HTRACE_BUDGET=" in l and "reached" in l]
    expect(all(lines), f"log lines of another form: {[l for l in log if 'reached' in l]}")
    reached = sorted(int(m.group(1)) for m in lines if m)
    expect(reached == want_reached, f"ranks reporting the budget {reached}, expected {want_reached}"
           f"\n{output.describe()}")
    for m in filter(None, lines):
        expect(m.group(1) == m.group(2) and int(m.group(3)) == budget and float(m.group(4)) > 0,
               f"log line {m.group(0)!r}")


def check_locations(expect, case, args, events, want_reached):
    """Every location against the program's calls; returns ({rank: recorded calls per function},
    {function: calls made while paused, as recorded})."""
    recorded = collections.defaultdict(collections.Counter)
    paused = collections.Counter()
    for (rank, thread), evs in sorted(events.items()):
        where = f"rank {rank} thread {thread}"
        full = expected_calls(args, rank, thread)
        names = check_location(expect, where, evs, full)
        recorded[rank].update(names)
        if thread == 0:
            paused.update(paused_calls(args, rank, names))
        switches = [(i, e) for i, e in enumerate(evs) if kind(e) == "MeasurementOnOff"]
        pcontrol_switches = names.count("MPI_Pcontrol")  # each recorded one switched
        if rank not in want_reached:
            expect(len(switches) == pcontrol_switches, f"{where}: {len(switches)} MeasurementOnOff "
                   f"records, {pcontrol_switches} of MPI_Pcontrol")
            expect(names == full, f"{where}: {len(names)} of {len(full)} calls recorded")
            continue
        expect(bool(switches) and switches[-1][0] == len(evs) - 1 and
               str(switches[-1][1].measurement_mode) == "MeasurementMode.OFF",
               f"{where}: does not end with MeasurementOnOff OFF: {[kind(e) for e in evs[-4:]]}")
        expect(len(switches) == pcontrol_switches + 1,
               f"{where}: {len(switches)} MeasurementOnOff, {pcontrol_switches} of MPI_Pcontrol")
        if case == "pcontrol":  # the cut in MPI_Pcontrol(0): that call whole, then nothing
            expect(names == full[:11], f"{where}: recorded {names}")
        elif thread == 0:
            expect(0 < names.count("MPI_Allreduce") < full.count("MPI_Allreduce"),
                   f"{where}: not cut mid-run ({names.count('MPI_Allreduce')} of "
                   f"{full.count('MPI_Allreduce')} iterations recorded)")
    return recorded, paused


def check_sizes(expect, case, archive, budget, bound, want_reached):
    """Event bytes per rank: from the budget to the documented bound where it was reached, below
    it elsewhere."""
    sizes = event_file_bytes(archive)
    for rank in range(RANKS):
        where = f"rank {rank}: event files {sizes[rank]} bytes"
        if rank in want_reached:
            expect(budget <= sizes[rank] <= budget + bound,
                   f"{where}, budget {budget}, bound {budget + bound}")
        else:
            expect(sizes[rank] < budget, f"{where}, not below the budget {budget}")
    print(f"{case}: budget {budget} bytes, event files per rank {dict(sizes)}, documented bound "
          f"budget + {bound}")


def check_summary(expect, log, calls, recorded, paused, want_reached, archive):
    """Rank 0's summary: per function, what the program made = recorded + paused + after the
    budget; the run summary and the archive property name the ranks over budget."""
    budget_counts, budget_total, budget_line = summary_counts(log, "HTRACE_BUDGET")
    paused_counts, _, _ = summary_counts(log, "MPI_Pcontrol(0)")
    expect((budget_line is None) == (not want_reached), f"budget summary line {budget_line!r}")
    expect(budget_total == sum(budget_counts.values()), f"summary total: {budget_line!r}")
    made, seen = collections.Counter(), collections.Counter()
    for rank in range(RANKS):
        made.update(calls[rank])
        seen.update(recorded[rank])
    for name in made:
        expect(made[name] == seen[name] + paused_counts[name] + budget_counts[name],
               f"{name}: the program made {made[name]} calls, recorded {seen[name]}, summary: "
               f"paused {paused_counts[name]}, after the budget {budget_counts[name]}")
    expect(paused_counts == paused, f"paused {dict(paused_counts)}, expected {dict(paused)}")
    print(f"summary: {budget_line}")
    written = next((l for l in log if "trace written to" in l), "")
    expect((f"HTRACE_BUDGET stopped recording on {len(want_reached)} of {RANKS} ranks" in written)
           == bool(want_reached), f"run summary {written!r}")
    stored = archive_properties(archive).get("HTRACE::RUN::BUDGET_RANKS")
    expect(stored == (str(len(want_reached)) if want_reached else None),
           f"HTRACE::RUN::BUDGET_RANKS {stored!r}")


def same_records(expect, events, other):
    """The records of each location, counted by kind, BufferFlush aside (timing decides them)."""
    for loc in sorted(set(other) | set(events)):
        a = collections.Counter(kind(e) for e in other.get(loc, []) if kind(e) != "BufferFlush")
        b = collections.Counter(kind(e) for e in events.get(loc, []) if kind(e) != "BufferFlush")
        expect(a == b, f"location {loc}: without a budget {dict(a)}, with one {dict(b)}")


def main():
    program, case = sys.argv[1], sys.argv[2]
    args, variables, threads = CASES[case]
    expect = Expectations()
    workdir = tempfile.mkdtemp(prefix=f"htrace-budget-{case}-")
    budget = size_value(variables["HTRACE_BUDGET"])
    capacity = max(16, size_value(variables.get("HTRACE_BUFFER_SIZE", "64k")) // RECORD_BYTES)
    bound = threads * ((capacity + CALL_REST_RECORDS) * MAX_ENCODED + SLACK_BYTES)
    want_reached = {"one_rank": [0], "not_reached": []}.get(case, list(range(RANKS)))

    untraced_rc, untraced, _ = run(program, args, workdir, "untraced", traced=False)
    if untraced_rc != 0:
        fail(f"untraced run: exit {untraced_rc}\n{untraced.describe()}")
    rc, output, archive = run(program, args, workdir, "budget", variables)
    expect(rc == untraced_rc, f"exit status {rc}, untraced {untraced_rc}")
    for r in range(RANKS):
        expect(output.stdout(r) == untraced.stdout(r),
               f"rank {r}'s output differs from the untraced run's:\n{output.stdout(r)}\n---\n"
               f"{untraced.stdout(r)}")
    log = output.log()
    events = read_archive(archive)
    check_log(expect, log, budget, want_reached, output)
    recorded, paused = check_locations(expect, case, args, events, want_reached)
    check_sizes(expect, case, archive, budget, bound, want_reached)
    check_summary(expect, log, program_calls(output), recorded, paused, want_reached, archive)
    if case == "not_reached":
        same_records(expect, events, read_archive(run(program, args, workdir, "plain")[2]))
    independent_check(expect, archive, bool(want_reached))
    readers_accept(expect, archive, workdir)
    expect.finish(workdir)


if __name__ == "__main__":
    main()
