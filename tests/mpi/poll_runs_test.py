"""Runs of unsuccessful polls recorded as one call (HTRACE_POLL_RUNS): the polling program
(poll_runs.c, or its Fortran twin) traced with runs (the default) and with every call
(HTRACE_POLL_RUNS=0), read back by independent readers (python3-otf2, otf2-print):
  - the runs' trace has at least 100 times fewer events than the full one;
  - its HTRACE::POLLS values, per function, sum to the unsuccessful calls the program counted,
    each on a Leave right after the Enter (and, for MPI_Test, the MpiRequestTest) of its call;
  - in the full trace no Leave carries the attribute and every call is there: the Leaves of each
    polling function are the program's unsuccessful calls plus its successful ones;
  - htrace-correct matches the same messages in both and leaves no violation in either;
  - htrace-report --format json finds the same wait states in both, within timing noise.

usage: poll_runs_test.py PROGRAM MODE MESSAGES   (environment from ctest: HTRACE_LIB, MPIRUN)"""
import collections
import json
import os
import subprocess
import sys
import tempfile

import otf2

from htrace_test.archive import anchor_path
from htrace_test.build import tool
from htrace_test.check import Expectations, fail, run_or_exit
from htrace_test.mpi import mpirun_command
from htrace_test.rank_output import RankOutput

GAP_MS = 20
POLLS_ATTRIBUTE = "HTRACE::POLLS"
POLLING = ("MPI_Test", "MPI_Testany", "MPI_Testsome", "MPI_Testall", "MPI_Iprobe", "MPI_Improbe")


def trace(program, mode, messages, poll_runs, workdir):
    """One traced run: (anchor, {function: unsuccessful calls the program counted})."""
    run_dir = os.path.join(workdir, f"runs{poll_runs}")
    archive_dir = os.path.join(run_dir, "archives")
    os.makedirs(archive_dir)
    counts = os.path.join(run_dir, "counts.txt")
    output = RankOutput(os.path.join(run_dir, "output"))
    command = mpirun_command(2, [program, mode, str(messages), str(GAP_MS), counts],
                             bind_none=True, preload=os.environ["HTRACE_LIB"], output=output,
                             forward=["HTRACE_ARCHIVE_DIR=" + archive_dir,
                                      f"HTRACE_POLL_RUNS={poll_runs}"])
    done = subprocess.run(command, capture_output=True, text=True, timeout=240)
    if done.returncode != 0 or not os.path.exists(counts):
        fail(f"HTRACE_POLL_RUNS={poll_runs}: exit code {done.returncode}\n{output.describe()}"
             f"{done.stdout}\n{done.stderr}")
    archives = os.listdir(archive_dir)
    if len(archives) != 1:
        fail(f"expected one archive, found {archives}\n{output.describe()}")
    missed = {}
    with open(counts) as f:
        for line in f:
            name, count = line.split()
            missed[name] = int(count)
    return anchor_path(os.path.join(archive_dir, archives[0])), missed


def calls_in_runs(anchor, expect):
    """Reads the runs' trace with python3-otf2: (events, {function: sum of HTRACE::POLLS},
    {function: Leaves without it}); checks where the attribute sits."""
    events = 0
    polls, plain = collections.Counter(), collections.Counter()
    with otf2.reader.open(anchor) as tr:
        attribute = [a for a in tr.definitions.attributes if a.name == POLLS_ATTRIBUTE]
        expect(len(attribute) == 1 and attribute[0].type == otf2.Type.UINT64,
               f"one uint64 attribute definition {POLLS_ATTRIBUTE}: {attribute}")
        previous = {}  # location -> its previous events, newest last (2 of them)
        for location, event in tr.events:
            events += 1
            before = previous.setdefault(location, collections.deque(maxlen=2))
            if isinstance(event, otf2.events.Leave) and event.region.name in POLLING:
                name = event.region.name
                value = (event.attributes or {}).get(attribute[0]) if attribute else None
                if value is None:
                    plain[name] += 1
                else:
                    polls[name] += value
                    expect(value >= 1, f"{name}: HTRACE::POLLS {value}")
                    # Enter, [MpiRequestTest,] Leave: the call holds no other record.
                    inner = [e for e in before if not isinstance(e, otf2.events.MpiRequestTest)]
                    expect(bool(inner) and isinstance(inner[-1], otf2.events.Enter)
                           and inner[-1].region == event.region,
                           f"{name}: a Leave with HTRACE::POLLS after {list(before)}")
            elif event.attributes:
                expect(False, f"an attribute list on {event}")
            before.append(event)
    return events, polls, plain


def calls_in_full(anchor):
    """Reads the full trace with otf2-print (millions of events): (events, {function: Leaves},
    lines naming HTRACE::POLLS)."""
    region_names = {}
    leaves = collections.Counter()
    events = attributes = 0
    with otf2.reader.open(anchor) as tr:
        for region in tr.definitions.regions:
            region_names[region._ref] = region.name
    printer = subprocess.Popen(["otf2-print", anchor], stdout=subprocess.PIPE, text=True,
                               bufsize=1 << 20)
    in_events = False
    for line in printer.stdout:
        if not in_events:
            in_events = line.startswith("-----")  # the rule under the events' table header
            continue
        if not line.strip() or line.startswith(" "):
            attributes += POLLS_ATTRIBUTE in line
            continue
        events += 1
        if line.startswith("LEAVE "):
            # LEAVE  <location>  <time>  Region: "MPI_Test" <ref>
            name = line.split("Region:", 1)[1].split('"')[1]
            leaves[name] += name in POLLING
    if printer.wait() != 0:
        fail(f"otf2-print {anchor} exited {printer.returncode}")
    return events, leaves, attributes


def correct(anchor, out):
    rep = json.loads(run_or_exit([tool("htrace-correct"), "--json", "--no-progress", anchor,
                                  out]).stdout)
    return rep["messages"], rep["violations_before"], rep["violations_after"]


def wait_states(anchor, out):
    """{pattern: total ns} of htrace-report --format json's wait states."""
    run_or_exit([tool("htrace-report"), "--format", "json", "-o", out, anchor])
    with open(out) as f:
        return {name: p["total_ns"] for name, p in json.load(f)["wait_states"].items()}


def main():
    program, mode, messages = sys.argv[1], sys.argv[2], int(sys.argv[3])
    expect = Expectations()
    workdir = tempfile.mkdtemp(prefix="htrace-poll-runs-")
    runs, missed_runs = trace(program, mode, messages, 1, workdir)
    full, missed_full = trace(program, mode, messages, 0, workdir)

    events_runs, polls, plain = calls_in_runs(runs, expect)
    events_full, leaves_full, attributes_full = calls_in_full(full)
    print(f"{mode}: runs {events_runs} events, full {events_full} events "
          f"({events_full / max(events_runs, 1):.0f}x); unsuccessful calls {missed_runs} / "
          f"{missed_full}; POLLS {dict(polls)}")
    expect(events_full >= 100 * events_runs,
           f"at least 100x fewer events with runs: {events_runs} vs {events_full}")
    # Each message ends the polling of one function with a successful call (poll_runs.c).
    kind = {"test": lambda i: 0, "iprobe": lambda i: 4, "all": lambda i: i % len(POLLING)}[mode]
    successful = collections.Counter(POLLING[kind(i)] for i in range(messages))
    for name, count in missed_runs.items():
        expect(polls[name] == count,
               f"{name}: HTRACE::POLLS sum {polls[name]}, the program counted {count}")
        expect(plain[name] == successful[name],
               f"{name}: {plain[name]} Leaves without HTRACE::POLLS, {successful[name]} "
               "successful calls")
        expect(leaves_full[name] == missed_full[name] + successful[name],
               f"{name}: the full trace has {leaves_full[name]} Leaves, the program made "
               f"{missed_full[name]} + {successful[name]} calls")
    expect(sum(missed_runs.values()) >= 100 * messages,
           f"the program polled: {sum(missed_runs.values())} unsuccessful calls")
    expect(attributes_full == 0, f"{attributes_full} HTRACE::POLLS in the full trace")

    corrected = {}
    for name, anchor in (("runs", runs), ("full", full)):
        out = os.path.join(workdir, "corrected-" + name)
        corrected[name] = correct(anchor, out)
        matched, _, after = corrected[name]
        expect(all(v == 0 for v in after.values()),
               f"{name}: violations after correction {after}")
        expect(matched.get("p2p", 0) == messages,
               f"{name}: {matched} logical messages, the program sent {messages}")
    expect(corrected["runs"][0] == corrected["full"][0],
           f"the same messages matched: {corrected['runs'][0]} vs {corrected['full'][0]}")

    waits = {name: wait_states(anchor, os.path.join(workdir, f"report-{name}.json"))
             for name, anchor in (("runs", runs), ("full", full))}
    print(f"wait states (ns): runs {waits['runs']}, full {waits['full']}")
    # Two runs of the program differ by timing noise: on a shared machine a rank descheduled in a
    # call moves a wait by a time slice (milliseconds). A run taken for a wait would add up to the
    # polling time, MESSAGES x GAP_MS, to Late Sender.
    noise = messages * GAP_MS * 1_000_000 // 4
    for pattern, total in waits["full"].items():
        other = waits["runs"].get(pattern, 0)
        expect(abs(other - total) <= noise,
               f"{pattern}: {other} ns with runs, {total} ns with every call")

    expect.finish(workdir)


if __name__ == "__main__":
    main()
