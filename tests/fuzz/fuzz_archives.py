#!/usr/bin/python3
"""Damaged archives through every tool that reads one (ctest fuzz_archives).

Usage: fuzz_archives.py [--fresh] [--cases N] [--parallel-cases M] [--seed S] [--keep DIR]
                        [--only GLOB] [--no-targeted]
Needs HTRACE_BUILD_DIR and MPIRUN (and HTRACE_LIB with --fresh), as ctest sets them.

Inputs: archives/ring (pingpong-ring on 3 ranks traced by libhtrace: a complete archive) for
htrace-correct and htrace-report, archives/abort (fail_app, rank 1 called MPI_Abort: event files
and salvage files, no global definitions) for htrace-salvage. Both are kept in the repository, so
the same code always meets the same mutants and gets the same verdict (only the time and memory
bounds depend on the machine, and they are generous). With --fresh both are traced anew and the seed, unless given, comes from the clock: the long randomized run, on demand.

Mutants, in this order:
  - targeted: the record type byte and the record length byte of 3 records of every event file,
    each bit in turn (a flip there turns a record into another type, or its fields into the next
    record's); the chunk header and the first record's type and length in every local definition
    file; the anchor with a byte range copied inside it (seen in CI), and the high bytes of its location,
    definition and property counts;
  - seeded: a file truncated, bytes flipped, a byte range copied over another, a file deleted or
    emptied (anchor and event files weigh more).
Each ring mutant goes through htrace-correct (serially; M of them, spread evenly, also under
mpirun -np 2) and htrace-report (html, perfetto, json, vite); each abort mutant through htrace-salvage. Every run must:
  - end without a signal or a sanitizer report, within the time bound, within the memory bound;
  - leave its input byte-identical;
  - either fail with its documented exit code (3 bad input, 4 output not written: format/error.h),
    exactly one error line and no output, or succeed with an output that reads
    back cleanly: otf2-print prints every event without a word on stderr (an OTF2 archive: its
    warnings about global definitions that disagree pass only where it says the same of the
    damaged input, which the tools carry as they are), or Python's json module parses it
    (Perfetto).
Prints the outcomes by tool and class, and the slowest and largest run of each tool."""
import argparse
import collections
import fnmatch
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from htrace_test.mpi import mpirun_command
from htrace_test.rank_output import RankOutput
from htrace_test.tree import file_digests
from htrace_test.build import tool

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ["HTRACE_BUILD_DIR"]
CORRECT = tool("htrace-correct")
SALVAGE = tool("htrace-salvage")
REPORT = tool("htrace-report")


def sanitized():
    try:
        return any(l.startswith("HTRACE_SANITIZE:") and l.split("=", 1)[1].strip()
                   for l in open(os.path.join(BUILD, "CMakeCache.txt")))
    except OSError:
        return False


SANITIZED = sanitized()
# Bounds per run. An intact 60 kB archive takes ~0.5 s and ~40 MB (mostly MPI's start); a damaged
# one must not cost more than a few times that. AddressSanitizer's shadow memory and slower code
# get their own bounds.
SECONDS = 60 if SANITIZED else 20
PEAK_MB = 1024 if SANITIZED else 256
# A sanitizer's report must not pass as exit 1. OTF2 callocs what a damaged anchor's counts ask for:
# under ASan that must return NULL as glibc does, not abort. Open MPI leaks.
ENV = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:exitcode=86:abort_on_error=0:allocator_may_return_null=1",
           UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=87")
SANITIZER_MARKS = ("ERROR: AddressSanitizer", "runtime error:", "ERROR: LeakSanitizer")
# Records per event file whose type and length bytes are flipped bit by bit.
RECORDS_PER_FILE = 3
FAILURE_EXIT = {"htrace-correct": (3, 4), "htrace-salvage": (3, 4), "htrace-report": (3, 4)}


class Run:
    """One process (and its children), with its wall time and the peak resident set size of the
    largest of them (wait4's rusage). ranks: the RankOutput of an mpirun: its ranks' stderr, from
    the files they write, counts as the run's (what mpirun forwards may miss lines)."""

    def __init__(self, cmd, timeout, work, ranks=None):
        err_path = os.path.join(work, "stderr")
        start = time.monotonic()
        with open(err_path, "wb") as err:
            p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=ENV,
                                 start_new_session=True)
        self.timed_out = False
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - start > timeout:
                os.killpg(p.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(p.pid, 0)
                self.timed_out = True
                break
            time.sleep(0.01)
        p.returncode = 0  # (reaped here; keeps Popen from waiting again)
        self.seconds = time.monotonic() - start
        self.peak_mb = usage.ru_maxrss / 1024
        self.status = os.waitstatus_to_exitcode(status)
        self.stderr = open(err_path, "rb").read().decode(errors="replace")
        if ranks is not None:
            self.stderr += ranks.stderr()


def otf2_print(path):
    """(exit status, stderr lines) of OTF2's reader, otf2-print, reading the archive at `path`."""
    r = subprocess.run(["otf2-print", os.path.join(path, "traces.otf2")], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, timeout=SECONDS)
    return r.returncode, r.stderr.decode(errors="replace").splitlines()


def read_back(path, source, expected=()):
    """None if otf2-print reads the archive at `path` in full and says nothing on stderr but the
    `expected` lines, else what it said. Its warnings about definitions that OTF2's library reads
    but that disagree with each other (a duplicate id, a dangling reference) pass where otf2-print
    says the same of the input archive `source`: the tools carry global definitions as they are.
    An error of OTF2's library never passes."""
    status, lines = otf2_print(path)
    said = [l for l in lines if l.strip() and l not in expected]
    if said and status == 0 and all("warning:" in l for l in said):
        said = [l for l in said if l not in set(otf2_print(source)[1])]
    if status != 0 or said:
        return "otf2-print exit %d: %s" % (status, "\n".join(said)[-2000:])
    return None


# otf2-print's warnings about the ViTE copy of the intact archive: its layout (a Group per
# communicator as ViTE 1.2 expects) draws them by design.
VITE_WARNINGS = set()


def read_back_json(path):
    try:
        with open(path) as f:
            json.load(f)
    except (OSError, ValueError) as e:
        return "not JSON: %s" % e
    return None


def judge(tool, run, inputs, before, output, read):
    """(class, problem or None) of one run."""
    err = run.stderr
    if run.timed_out:
        return "hang", "no result after %d s" % (3 * SECONDS)
    if any(m in err for m in SANITIZER_MARKS):
        return "sanitizer", err[-4000:]
    if run.status < 0 or "signal" in err.lower():
        return "signal", "exit %d\n%s" % (run.status, err[-3000:])
    if run.seconds > SECONDS:
        return "slow", "%.1f s (bound %d s)" % (run.seconds, SECONDS)
    if run.peak_mb > PEAK_MB:
        return "memory", "%.0f MB (bound %d MB)" % (run.peak_mb, PEAK_MB)
    if file_digests(inputs, skip_anchors=False) != before:
        return "input changed", ""
    parent = os.path.dirname(output)
    leftovers = [f for f in os.listdir(parent) if f not in OUTPUT_NAMES]
    for f in leftovers:
        path = os.path.join(parent, f)
        shutil.rmtree(path, ignore_errors=True) if os.path.isdir(path) else os.remove(path)
    if leftovers:
        return "temporary left", str(leftovers)
    errors = [l for l in err.splitlines() if l.startswith(tool + ": error:")]
    if run.status in FAILURE_EXIT[tool]:
        if len(errors) != 1:
            return "no single message", err[-2000:]
        if os.path.exists(output):
            return "output left", ""
        return "rejected (exit %d)" % run.status, None
    if run.status == 0 or (run.status == 1 and tool == "htrace-correct"):
        problem = read(output)
        if problem:
            return "unreadable output", problem + "\n" + err[-1000:]
        return "accepted (exit %d)" % run.status, None
    return "exit %d" % run.status, err[-3000:]


def read_back_html(path):
    with open(path, errors="replace") as f:
        text = f.read()
    return None if text.rstrip().endswith("</html>") else "not a whole HTML page"


# The tool runs of one mutant: (tool, command, output path, how the output is read back, the
# RankOutput of an MPI run or None). Their outputs are all a mutant's output directory may hold
# after them (no temporary left).
OUTPUT_NAMES = {"result", "result-np2", "result.html", "result.json", "result.waits.json",
                "result.vite"}

def correct_runs(mutant, out, ranks, work):
    cmd, said = [CORRECT, mutant, out], None
    if ranks > 1:
        said = RankOutput(os.path.join(work, "ranks"))
        cmd = mpirun_command(ranks, cmd, output=said)
    return [("htrace-correct", cmd, out, lambda p: read_back(p, mutant), said)]


def report_runs(mutant, out):
    return [("htrace-report", [REPORT, mutant, "-o", out + ".html"], out + ".html", read_back_html, None),
            ("htrace-report", [REPORT, "--format", "perfetto", mutant, "-o", out + ".json"],
             out + ".json", read_back_json, None),
            ("htrace-report", [REPORT, "--format", "json", mutant, "-o", out + ".waits.json"],
             out + ".waits.json", read_back_json, None),
            ("htrace-report", [REPORT, "--format", "vite", mutant, "-o", out + ".vite"],
             out + ".vite", lambda p: read_back(p, mutant, VITE_WARNINGS), None)]


def salvage_runs(mutant, out):
    # (The input has no global definitions: whatever otf2-print says of the output counts.)
    return [("htrace-salvage", [SALVAGE, mutant, out], out, lambda p: read_back(p, mutant), None)]


# --- mutations ------------------------------------------------------------------------------

def singleton_types():
    """Event type ids (record_tables.h numbering + 10) that OTF2 writes without a length byte,
    from the table the build generated from the OTF2 headers."""
    path = os.path.join(BUILD, "format", "generated", "event_layout.inc")
    flags = [l.strip().startswith("true") for l in open(path) if l.strip().startswith(("true", "false"))]
    return {10 + i for i, single in enumerate(flags) if single}


def record_offsets(data, singletons):
    """(type offset, length offset or None) of each event record in an event file's first chunk:
    [3][endianness][16] chunk header, then [5][8] timestamps, [6][len][..] attribute lists and
    events [id][len][..] or, for singletons, [id][n][n bytes]."""
    out, p = [], 18
    while p + 1 < len(data):
        t = data[p]
        if t == 5:
            p += 9
        elif t in (0, 2):
            break
        elif t == 6 or t >= 10:
            n = data[p + 1] if data[p + 1] != 0xFF else int.from_bytes(data[p + 2:p + 10], "little")
            head = 2 if data[p + 1] != 0xFF else 10
            if t == 6:
                p += head + n
                continue
            if t in singletons:
                out.append((p, None))
                p += 2 + (0 if data[p + 1] == 0xFF else data[p + 1])
            else:
                out.append((p, p + 1))
                p += head + n
        else:
            break
    return out


def flip(path, spots):
    data = bytearray(open(path, "rb").read())
    for at, bits in spots:
        data[at] ^= bits
    open(path, "wb").write(bytes(data))


def targeted_mutations(archive, salvage_archive, rng):
    """[(archive kind, description, function(mutant dir))]: the cases named in the docstring."""
    cases, singletons = [], singleton_types()
    for kind, root in (("ring", archive), ("abort", salvage_archive)):
        evt_dir = os.path.join(root, "traces")
        for name in sorted(os.listdir(evt_dir)):
            if not name.endswith(".evt"):
                continue
            records = record_offsets(open(os.path.join(evt_dir, name), "rb").read(), singletons)
            for type_at, length_at in rng.sample(records, min(RECORDS_PER_FILE, len(records))):
                for at, what in ((type_at, "type"), (length_at, "length")):
                    for bit in (1 << b for b in range(8)) if at is not None else ():
                        cases.append((kind, "flip the %s byte of traces/%s at %d (0x%02x)" % (what, name, at, bit),
                                      lambda d, n=name, a=at, b=bit: flip(os.path.join(d, "traces", n), [(a, b)])))
    # Local definition files: the chunk header's type byte, the first record's type and length.
    for name in sorted(os.listdir(os.path.join(archive, "traces"))):
        if name.endswith(".def"):
            for at in (0, 18, 19):
                cases.append(("ring", "5 bits flipped at byte %d of traces/%s" % (at, name),
                              lambda d, n=name, a=at: flip(os.path.join(d, "traces", n), [(a, 0x1F)])))

    def copied_anchor_range(d):
        data = bytearray(open(os.path.join(d, "traces.otf2"), "rb").read())
        data[343:353] = data[401:411]
        open(os.path.join(d, "traces.otf2"), "wb").write(bytes(data))
    cases.append(("ring", "damaged anchor seen in CI (bytes 401-410 copied over 343-352)",
                  copied_anchor_range))
    # The anchor's counts of locations and definitions (after the magic, formats, version, chunk
    # sizes, substrate and compression) and of properties (after three strings): a flipped high
    # byte asks for terabytes.
    anchor = open(os.path.join(archive, "traces.otf2"), "rb").read()
    counts_at = anchor.index(b"\0") + 1 + 1 + 1 + 3 + 16 + 2
    strings_end = counts_at + 16
    for _ in range(3):  # machine, creator, description
        strings_end = anchor.index(b"\0", strings_end) + 1
    for at in (counts_at + 7, counts_at + 15, counts_at + 3, strings_end + 3):
        cases.append(("ring", "anchor byte %d flipped (0x80)" % at,
                      lambda d, a=at: flip(os.path.join(d, "traces.otf2"), [(a, 0x80)])))
    return cases


def seeded_mutation(root, rng, only):
    """Applies one random mutation to a file of the archive at `root` whose path matches `only`;
    returns its description."""
    files = sorted(os.path.relpath(os.path.join(r, f), root) for r, _, fs in os.walk(root) for f in fs)
    files = [f for f in files if fnmatch.fnmatch(f, only)] or files
    weights = [4 if f.endswith(".otf2") else 3 if f.endswith(".evt") else 2 for f in files]
    name = rng.choices(files, weights)[0]
    path = os.path.join(root, name)
    data = bytearray(open(path, "rb").read())
    kind = rng.choice(["truncate", "flip", "flip", "copy", "copy", "delete", "empty"])
    if kind == "delete":
        os.remove(path)
        return "delete %s" % name
    if kind == "empty" or not data:
        open(path, "wb").close()
        return "empty %s" % name
    if kind == "truncate":
        at = rng.randrange(len(data))
        data = data[:at]
        what = "truncate %s at %d" % (name, at)
    elif kind == "flip":
        spots = [rng.randrange(len(data)) for _ in range(rng.randint(1, 8))]
        for s in spots:
            data[s] ^= 1 << rng.randrange(8)
        what = "flip %s at %s" % (name, spots)
    else:
        n = rng.randint(1, min(32, len(data)))
        src, dst = rng.randrange(len(data) - n + 1), rng.randrange(len(data) - n + 1)
        data[dst:dst + n] = data[src:src + n]
        what = "copy %s bytes %d-%d over %d-%d" % (name, src, src + n - 1, dst, dst + n - 1)
    open(path, "wb").write(bytes(data))
    return what


def fresh_archives(work):
    """A new ring and abort archive, traced by libhtrace now."""
    lib = os.environ["HTRACE_LIB"]
    ring = os.path.join(BUILD, "examples", "pingpong-ring", "pingpong-ring")
    app = os.path.join(BUILD, "tests", "salvage", "salvage_fail_app")
    os.makedirs(os.path.join(work, "counts"))
    for name, ranks, program in (("ring", 3, [ring]), ("abort", 2, [app, "abort", "50", os.path.join(work, "counts")])):
        env = dict(ENV, HTRACE_ARCHIVE_DIR=work, HTRACE_ARCHIVE_NAME=name, LD_PRELOAD=lib)
        # LD_PRELOAD is in mpirun's own environment too (forwarded by name)
        subprocess.run(mpirun_command(ranks, program, bind_none=True,
                                      forward=["LD_PRELOAD", "HTRACE_ARCHIVE_DIR", "HTRACE_ARCHIVE_NAME"]),
                       capture_output=True, timeout=120, env=env)
        if not os.path.isdir(os.path.join(work, name, "traces")):
            sys.exit("FAIL: could not trace a fresh %s archive" % name)
    return os.path.join(work, "ring"), os.path.join(work, "abort")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fresh", action="store_true", help="trace new archives (randomized fuzz)")
    ap.add_argument("--cases", type=int, default=40, help="seeded mutants of each archive")
    ap.add_argument("--parallel-cases", type=int, default=16,
                    help="ring mutants also corrected at P = 2 (spread over all of them)")
    ap.add_argument("--seed", type=int)
    ap.add_argument("--keep", help="keep failing mutants here")
    ap.add_argument("--only", default="*", help="seeded mutations only of files matching this glob "
                    "(e.g. traces.otf2; archives without such a file mutate any)")
    ap.add_argument("--no-targeted", action="store_true", help="seeded mutations only")
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else (int(time.time()) if a.fresh else 32)
    work = tempfile.mkdtemp(prefix="htrace-fuzz-")
    try:
        if a.fresh:
            ring, abort = fresh_archives(work)
        else:
            ring, abort = os.path.join(HERE, "archives", "ring"), os.path.join(HERE, "archives", "abort")
        print("archives: %s, seed %d, %d s and %d MB per run" % (
            "fresh" if a.fresh else "archives/ (in the repository)", seed, SECONDS, PEAK_MB))
        status, lines = otf2_print(ring)
        if status != 0 or any(l.strip() for l in lines):
            sys.exit("FAIL: the intact ring archive does not read back: %s" % lines)
        vite = os.path.join(work, "intact.vite")
        subprocess.run([REPORT, "--format", "vite", ring, "-o", vite], check=True, capture_output=True)
        status, lines = otf2_print(vite)
        if status != 0 or any("warning:" not in l for l in lines if l.strip()):
            sys.exit("FAIL: the intact archive's ViTE copy does not read back: %s" % lines)
        VITE_WARNINGS.update(lines)
        rng = random.Random(seed)
        cases = [] if a.no_targeted else targeted_mutations(ring, abort, rng)
        for kind in ("ring", "abort"):
            for i in range(a.cases):
                cases.append((kind, None, i))
        outcomes = collections.defaultdict(collections.Counter)
        worst = collections.defaultdict(lambda: [0.0, 0.0])
        failures = []
        # The parallel runs are spread over the ring mutants, targeted and seeded.
        ring_cases = sum(1 for kind, _, _ in cases if kind == "ring")
        parallel_every = max(1, -(-ring_cases // a.parallel_cases)) if a.parallel_cases else 0
        ring_number = 0
        for number, (kind, what, mutate) in enumerate(cases):
            mutant = os.path.join(work, "mutant")
            shutil.rmtree(mutant, ignore_errors=True)
            shutil.copytree(ring if kind == "ring" else abort, mutant)
            if what is None:
                rng_case = random.Random(seed * 100003 + mutate + (0 if kind == "ring" else 50000))
                what = seeded_mutation(mutant, rng_case, a.only)
            else:
                mutate(mutant)
            before = file_digests(mutant, skip_anchors=False)
            outdir = os.path.join(work, "out")
            shutil.rmtree(outdir, ignore_errors=True)
            os.makedirs(outdir)
            out = os.path.join(outdir, "result")
            if kind == "ring":
                runs = correct_runs(mutant, out, 1, work) + report_runs(mutant, out)
                if parallel_every and ring_number % parallel_every == 0:
                    runs += [("htrace-correct -np 2",) + r[1:]
                             for r in correct_runs(mutant, out + "-np2", 2, work)]
                ring_number += 1
            else:
                runs = salvage_runs(mutant, out)
            for label, cmd, output, read, said in runs:
                tool = label.split()[0]
                r = Run(cmd, SECONDS * 3, work, said)
                cls, problem = judge(tool, r, mutant, before, output, read)
                outcomes[label][cls] += 1
                w = worst[label]
                w[0], w[1] = max(w[0], r.seconds), max(w[1], r.peak_mb)
                if problem is not None:
                    failures.append("case %d (%s), %s: %s\n%s" % (number, what, label, cls, problem))
                    if a.keep:
                        dst = os.path.join(a.keep, "case%d" % number)
                        if not os.path.exists(dst):
                            shutil.copytree(mutant, dst)
        for label in sorted(outcomes):
            total = sum(outcomes[label].values())
            print("%s: %d runs: %s; slowest %.2f s, largest %.0f MB" % (
                label, total, ", ".join("%s %d" % kv for kv in sorted(outcomes[label].items())),
                worst[label][0], worst[label][1]))
        if failures:
            print("\n\n".join(failures[:10]))
            sys.exit("FAIL: %d of the runs failed" % len(failures))
        print("PASS fuzz_archives (%d mutants)" % len(cases))
    finally:
        shutil.rmtree(work, ignore_errors=True)


main()
