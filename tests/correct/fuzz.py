#!/usr/bin/python3
"""Fuzz test of htrace-correct on damaged archives (ctest correct_fuzz).

Usage: fuzz.py [--cases N] [--parallel-cases M] [--seed S] [--keep DIR]

A real archive (pingpong-ring traced by libhtrace when HTRACE_LIB works, else make_archive.py's)
is mutated in seeded ways: a file truncated, bytes flipped, a byte range copied over another
(as the damaged anchor of issue 21), a file deleted or emptied. Each mutant is corrected serially
(N cases) and the first M also under `mpirun -np 2`. Every run must:
  - end without a signal and within the timeout;
  - exit 3 or 4 with exactly one error line, and leave no OUT and no temporary; or exit 0 or 1
    with an OUT that otf2-print reads (a harmless mutation, e.g. in padding or a name);
  - leave the input byte-identical.
Exit 2 (usage) or 5 (internal error) fails. Sanitizer reports (a build with HTRACE_SANITIZE)
fail too. Prints the outcomes by class. Needs HTRACE_BUILD_DIR and MPIRUN."""
import argparse
import collections
import hashlib
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ["HTRACE_BUILD_DIR"]
TOOL = os.path.join(BUILD, "tools", "htrace-correct", "htrace-correct")
MPIRUN = shlex.split(os.environ.get("MPIRUN", "mpirun --allow-run-as-root --oversubscribe"))
RING = os.path.join(BUILD, "examples", "pingpong-ring", "pingpong-ring")

def sanitized():
    try:
        return any(l.startswith("HTRACE_SANITIZE:") and l.split("=", 1)[1].strip()
                   for l in open(os.path.join(BUILD, "CMakeCache.txt")))
    except OSError:
        return False


# OTF2 itself takes up to ~20 s to reject some damaged anchor files (OTF2_AnchorFile_Load), more
# under a sanitizer's allocator.
TIMEOUT = 300 if sanitized() else 90
# A sanitizer's report must not pass as exit 1 (violations remain). OTF2_AnchorFile_Load callocs
# what a damaged anchor's counts ask for (tens of GB): glibc returns NULL or lazily mapped memory
# and OTF2 reports an error, so ASan must return NULL too instead of aborting. Open MPI leaks.
ENV = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:exitcode=86:abort_on_error=0:allocator_may_return_null=1",
           UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=87")
SANITIZER_MARKS = ("ERROR: AddressSanitizer", "runtime error:", "ERROR: LeakSanitizer")


def digest(path):
    out = {}
    for root, _, files in os.walk(path):
        for f in files:
            full = os.path.join(root, f)
            out[os.path.relpath(full, path)] = hashlib.sha256(open(full, "rb").read()).hexdigest()
    return out


def real_archive(work):
    """pingpong-ring on 3 ranks traced by libhtrace (mapping tables in the local definitions,
    htrace's properties in the anchor), or make_archive.py's archive without libhtrace."""
    lib = os.environ.get("HTRACE_LIB", "")
    if os.path.exists(lib) and os.path.exists(RING):
        env = dict(ENV, HTRACE_ARCHIVE_DIR=work, HTRACE_ARCHIVE_NAME="ring")
        p = subprocess.run(MPIRUN + ["-np", "3", "-x", "LD_PRELOAD=" + lib, "-x", "HTRACE_ARCHIVE_DIR",
                                     "-x", "HTRACE_ARCHIVE_NAME", RING], capture_output=True,
                           text=True, timeout=120, env=env)
        if p.returncode == 0 and os.path.exists(os.path.join(work, "ring", "traces.otf2")):
            return os.path.join(work, "ring"), "pingpong-ring traced by libhtrace (3 ranks)"
    path = os.path.join(work, "made")
    subprocess.run(["/usr/bin/python3", os.path.join(HERE, "make_archive.py"), path, "--shift", "8000"],
                   check=True, capture_output=True)
    return path, "make_archive.py --shift 8000"


def mutate(archive, rng):
    """Applies one random mutation to `archive`; returns its description."""
    files = sorted(os.path.relpath(os.path.join(r, f), archive)
                   for r, _, fs in os.walk(archive) for f in fs)
    # The anchor and the event files carry most of the structure: weigh them up.
    weights = [4 if f.endswith(".otf2") else 3 if f.endswith(".evt") else 2 for f in files]
    name = rng.choices(files, weights)[0]
    path = os.path.join(archive, name)
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


def run_case(archive, out, ranks):
    """Returns (class, problem or None)."""
    before = digest(archive)
    cmd = ([TOOL] if ranks == 1 else MPIRUN + ["-np", str(ranks), TOOL]) + [archive, out]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, env=ENV)
    except subprocess.TimeoutExpired:
        return "hang", "no result after %d s" % TIMEOUT
    err = p.stderr
    if any(m in err for m in SANITIZER_MARKS):
        return "sanitizer", err[-4000:]
    if p.returncode < 0 or "signal" in err.lower():
        return "signal", "exit %d\n%s" % (p.returncode, err[-3000:])
    if digest(archive) != before:
        return "input changed", ""
    leftovers = [f for f in os.listdir(os.path.dirname(out)) if ".htrace-correct-" in f]
    for f in leftovers:  # (reported once, not again by every later case)
        shutil.rmtree(os.path.join(os.path.dirname(out), f), ignore_errors=True)
    if leftovers:
        return "temporary left", str(leftovers)
    errors = [l for l in err.splitlines() if l.startswith("htrace-correct: error:")]
    if p.returncode in (3, 4):
        if len(errors) != 1:
            return "no message", err[-2000:]
        if os.path.exists(out):
            return "output left", ""
        return "rejected (exit %d)" % p.returncode, None
    if p.returncode in (0, 1):
        # Success is claimed only for an output that a reader of its own accepts.
        r = subprocess.run(["otf2-print", os.path.join(out, "traces.otf2")], capture_output=True,
                           timeout=TIMEOUT)
        if r.returncode != 0:
            return "unreadable output", r.stderr.decode(errors="replace")[-2000:]
        return "accepted (exit %d)" % p.returncode, None
    return "exit %d" % p.returncode, err[-3000:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=50)
    ap.add_argument("--parallel-cases", type=int, default=20)
    ap.add_argument("--seed", type=int, default=21)
    ap.add_argument("--keep", help="keep failing mutants here")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="htrace-correct-fuzz-")
    try:
        original, source = real_archive(work)
        print("archive: %s" % source)
        outcomes = {1: collections.Counter(), 2: collections.Counter()}
        failures = []
        for case in range(-1, a.cases):
            rng = random.Random(a.seed * 100003 + case)
            mutant = os.path.join(work, "mutant")
            shutil.rmtree(mutant, ignore_errors=True)
            shutil.copytree(original, mutant)
            if case < 0:
                # Issue 21's crash: bytes 343-352 of the anchor overwritten with bytes 401-410.
                anchor = os.path.join(mutant, "traces.otf2")
                data = bytearray(open(anchor, "rb").read())
                if len(data) < 411:
                    continue
                data[343:353] = data[401:411]
                open(anchor, "wb").write(bytes(data))
                what = "issue 21's damaged anchor"
            else:
                what = mutate(mutant, rng)
            for ranks in ((1, 2) if case < a.parallel_cases else (1,)):
                out = os.path.join(work, "out")
                shutil.rmtree(out, ignore_errors=True)
                cls, problem = run_case(mutant, out, ranks)
                outcomes[ranks][cls] += 1
                if problem is not None:
                    failures.append("case %d (%s), P=%d: %s\n%s" % (case, what, ranks, cls, problem))
                    if a.keep:
                        dst = os.path.join(a.keep, "case%d" % case)
                        if not os.path.exists(dst):
                            shutil.copytree(mutant, dst)
        for ranks in (1, 2):
            total = sum(outcomes[ranks].values())
            print("P=%d: %d runs: %s" % (ranks, total, ", ".join(
                "%s %d" % kv for kv in sorted(outcomes[ranks].items()))))
        if failures:
            print("\n\n".join(failures[:10]))
            sys.exit("FAIL: %d of the runs failed" % len(failures))
        print("PASS fuzz")
    finally:
        shutil.rmtree(work, ignore_errors=True)


main()
