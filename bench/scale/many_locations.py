#!/usr/bin/python3
"""htrace-correct and htrace-report as whole processes on archives of many locations, with and
without threads (bench/scale/README.md, "Many locations with threads").

    many_locations.py --build BUILD --work DIR [--out-dir TMPFS] [--reps 3] [--np 4]
                      ARCHIVE... (each PxT: P processes x T threads, written by the generator)

Generates each archive with BUILD's correct_gen_archive (2 M events, 256 KiB chunks, --skew 5000)
unless DIR/aPxT exists, then runs, REPS times in turn, under `ulimit -n 1024`: htrace-correct
serially and under `mpirun -np NP`, and htrace-report in every --format. Outputs go to OUT_DIR
(default DIR), removed before each run outside its timing. Each run's wall time, CPU (user +
system of the process and the children it waited for) and peak RSS (the largest of the process and
its descendants), from GNU time; prints a Markdown table of medians and ranges."""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

FORMATS = {"html": "r.html", "perfetto": "r.json", "vite": "vite", "json": "w.json", "csv": "w.csv"}


def timed(command, stats):
    """(exit status, wall s, CPU s, peak RSS kB) of `command` under ulimit -n 1024, from GNU time
    (its own small image forks the command: a fork of this Python process would count its RSS)."""
    p = subprocess.run(["bash", "-c", 'ulimit -n 1024; exec "$@"', "bash", "/usr/bin/time", "-o",
                        stats, "-f", "%e %U %S %M", *command],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        print("exit %d: %s\n%s" % (p.returncode, " ".join(command), p.stderr[-2000:]),
              file=sys.stderr)
    with open(stats) as f:
        wall, user, system, rss = f.read().split()[-4:]
    return p.returncode, float(wall), float(user) + float(system), int(rss)


def remove(path):
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.exists(path):
        os.remove(path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--out-dir")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--np", type=int, default=4)
    ap.add_argument("--events", type=int, default=2000000)
    ap.add_argument("--mpirun", default="mpirun --allow-run-as-root --oversubscribe")
    ap.add_argument("archives", nargs="+")
    a = ap.parse_args()
    out_dir = a.out_dir or a.work
    gen = os.path.join(a.build, "bench", "correct", "correct_gen_archive")
    correct = os.path.join(a.build, "tools", "htrace-correct", "htrace-correct")
    report = os.path.join(a.build, "tools", "htrace-report", "htrace-report")
    os.makedirs(a.work, exist_ok=True)
    os.makedirs(out_dir, exist_ok=True)
    events = {}
    for shape in a.archives:
        procs, threads = shape.split("x")
        path = os.path.join(a.work, "a" + shape)
        if not os.path.exists(path):
            subprocess.run([gen, path, "--processes", procs, "--threads", threads, "--events",
                            str(a.events), "--skew", "5000", "--chunk", str(256 * 1024)],
                           check=True, stdout=subprocess.DEVNULL)
        # The event count from the local definitions' record: htrace-correct's report has it.
        o = subprocess.run([correct, "--check", "--json", path], capture_output=True, text=True)
        events[shape] = int(o.stdout.split('"events": ')[1].split(",")[0])
    runs = [("correct", "serial", lambda arc, out: [correct, arc, out])]
    runs.append(("correct", "mpirun -np %d" % a.np,
                 lambda arc, out: a.mpirun.split() + ["-np", str(a.np), correct, arc, out]))
    for fmt in FORMATS:
        runs.append(("report", fmt, lambda arc, out, fmt=fmt: [report, "--no-progress", "--format",
                                                                fmt, arc, "-o", out]))
    results = {}
    for rep in range(a.reps):
        for shape in a.archives:
            arc = os.path.join(a.work, "a" + shape)
            for tool, how, command in runs:
                out = os.path.join(out_dir, "out-%s-%s" % (tool, FORMATS.get(how, "corrected")))
                remove(out)
                time.sleep(0.5)
                r = timed(command(arc, out), os.path.join(a.work, "time.txt"))
                results.setdefault((shape, tool, how), []).append(r)
                print("rep %d %s %s %s: exit %d, %.2f s wall, %.2f s CPU, %d kB" %
                      (rep, shape, tool, how, *r), file=sys.stderr, flush=True)
                remove(out)

    def cell(values, fmt):
        med = statistics.median(values)
        return (fmt % med) + (" (" + fmt % min(values) + "-" + fmt % max(values) + ")")

    print("| archive | locations | events | tool | run | wall (s) | CPU (s) | CPU per event (ns) "
          "| peak RSS (MB) | exit |")
    print("|---|---:|---:|---|---|---:|---:|---:|---:|---|")
    for (shape, tool, how), rs in results.items():
        procs, threads = (int(x) for x in shape.split("x"))
        n = events[shape]
        print("| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s |" % (
            shape, procs * threads, n, tool, how, cell([r[1] for r in rs], "%.2f"),
            cell([r[2] for r in rs], "%.2f"), cell([r[2] / n * 1e9 for r in rs], "%.0f"),
            cell([r[3] / 1024 for r in rs], "%.0f"), ",".join(str(r[0]) for r in rs)))


if __name__ == "__main__":
    main()
