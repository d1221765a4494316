#!/usr/bin/env python3
"""htrace-salvage on a killed run of many ranks (see README.md).

Runs tests/salvage's fail_app in its loop mode (MPI_Barrier on MPI_COMM_WORLD until killed) under
libhtrace on emulated nodes (tests/cluster/htrace-cluster-run; without --cluster, on this one host
with the launcher's own oversubscription), waits until every rank has made --barriers barriers
and has an event chunk on disk (or --traffic-seconds have passed), then SIGKILLs every rank and
the launcher: nothing of the tracer runs at exit. htrace-salvage then rebuilds the archive under
`ulimit -n --nofile`, timed by /usr/bin/time -v, and the result is checked:

- htrace-salvage exits 0; otf2-print reads the archive (exit 0, no error on stderr);
- python3's otf2 reads every location: per rank, the barriers it holds are a prefix of what the
  program counted in its mapped file (at most the memory a SIGKILL loses missing), timestamps
  never decrease, and the rank ends with the cut-off marker;
- htrace-correct and htrace-report run on it (exit 0), timed too.

Prints a summary with the figures the README quotes. Exit status 0 if every check passed."""
import argparse
import os
import re
import resource
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "lib"))
from htrace_test.salvage import KILL_LOSS_BARRIERS, MARKER  # noqa: E402  (the tests' oracle)


def counts(count_dir, rank):
    """[barriers entered, barriers returned, pid] as fail_app left them, or None if not yet."""
    try:
        with open(os.path.join(count_dir, str(rank)), "rb") as f:
            data = f.read(24)
    except OSError:
        return None
    return struct.unpack("<3Q", data) if len(data) == 24 else None


def launch(args, work, count_dir, archive_dir, log_file):
    """The traced job, in its own session (so that the whole job can be killed)."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    traced = {"LD_PRELOAD": args.lib, "HTRACE_ARCHIVE_DIR": os.path.dirname(archive_dir),
              "HTRACE_ARCHIVE_NAME": os.path.basename(archive_dir), "HTRACE_LOG_FILE": log_file,
              "HTRACE_BUFFER_SIZE": "64k"}
    traced.update(dict(kv.split("=", 1) for kv in args.env))
    program = [args.app, "ring", "0", count_dir]
    nice = ["nice", "-n", str(args.nice)]
    mpich = os.environ.get("HTRACE_MPI_FLAVOR") == "mpich"
    if args.cluster:
        extra = " ".join(f"-x {k}={v}" for k, v in traced.items())
        if not mpich:
            extra += " --mca mpi_yield_when_idle 1"  # ranks waiting in MPI yield their core
        env["MPIRUN_EXTRA"] = extra
        nodes = args.ranks // args.per_node
        offsets = ",".join(f"{(i * 0.37) % 3 - 1.5:.6f}" for i in range(nodes))
        cmd = nice + [args.cluster, "--shm", "--offsets", offsets, "--ranks-per-node",
                      str(args.per_node), "--"] + program
    elif mpich:
        cmd = nice + ["mpiexec.mpich", "-n", str(args.ranks), "-bind-to", "none"]
        for k, v in traced.items():
            cmd += ["-genv", k, v]
        cmd += program
    else:
        cmd = nice + ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
                      "-np", str(args.ranks), "--mca", "mpi_yield_when_idle", "1"]
        for k, v in traced.items():
            cmd += ["-x", f"{k}={v}"]
        cmd += program
    print("# job: " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    out = open(os.path.join(work, "launcher.out"), "w")
    return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=work,
                            start_new_session=True)


def wait_for_traffic(args, job, count_dir, archive_dir, started):
    """Waits until every rank has made --barriers barriers and has events on disk, or until
    --traffic-seconds; returns the ranks' pids."""
    deadline = started + args.start_timeout
    pids = None
    traffic_from = None
    while True:
        if job.poll() is not None:
            raise SystemExit(f"the job ended by itself (exit {job.returncode}); see launcher.out")
        now = time.time()
        c = [counts(count_dir, r) for r in range(args.ranks)]
        if all(c):
            pids = [x[2] for x in c]
            if traffic_from is None:
                traffic_from = now
                print(f"# all {args.ranks} ranks past MPI_Init after {now - started:.0f} s",
                      flush=True)
            least = min(x[0] for x in c)
            sizes = [os.path.getsize(p) if os.path.exists(p) else 0 for p in
                     (os.path.join(archive_dir, "traces", f"{r}.evt") for r in range(args.ranks))]
            on_disk = sum(1 for s in sizes if s > 0)
            if least >= args.barriers and on_disk == args.ranks:
                print(f"# every rank made >= {least} barriers and has events on disk", flush=True)
                return pids
            if now - traffic_from >= args.traffic_seconds:
                print(f"# {args.traffic_seconds:.0f} s of traffic: >= {least} barriers per rank, "
                      f"{on_disk} of {args.ranks} event files non-empty", flush=True)
                return pids
        elif now > deadline:
            raise SystemExit(f"only {sum(1 for x in c if x)} of {args.ranks} ranks past MPI_Init "
                             f"after {args.start_timeout:.0f} s")
        time.sleep(1)


def kill_job(job, pids):
    """SIGKILL of every rank, then of the launcher's whole session."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        os.killpg(job.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    job.wait()


def timed(cmd, nofile, label):
    """Runs cmd under /usr/bin/time -v with RLIMIT_NOFILE = nofile; returns (exit status, stdout,
    stderr, wall s, peak RSS KiB)."""
    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True,
                       preexec_fn=limit)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", p.stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    user = re.search(r"User time \(seconds\): ([\d.]+)", p.stderr)
    system = re.search(r"System time \(seconds\): ([\d.]+)", p.stderr)
    secs = 0.0
    if wall:
        for part in wall.group(1).split(":"):
            secs = secs * 60 + float(part)
    cpu = (float(user.group(1)) if user else 0) + (float(system.group(1)) if system else 0)
    kib = int(rss.group(1)) if rss else 0
    print(f"# {label}: exit {p.returncode}, {secs:.1f} s wall, {cpu:.1f} s CPU, peak RSS "
          f"{kib / 1024:.1f} MiB (ulimit -n {nofile})", flush=True)
    return p.returncode, p.stdout, p.stderr, secs, kib


def check_events(anchor, count_dir, ranks):
    """python3-otf2: every location's barriers against the program's counts. Returns the events
    per location and the failures."""
    import otf2
    per_loc = {}
    with otf2.reader.open(anchor) as trace:
        for loc, ev in trace.events:
            region = getattr(ev, "region", None)
            s = per_loc.setdefault(loc._ref, {"n": 0, "enter": 0, "leave": 0, "last": 0,
                                              "backwards": 0, "marker": 0})
            s["n"] += 1
            if ev.time < s["last"]:
                s["backwards"] += 1
            s["last"] = ev.time
            name = region.name if region is not None else ""
            if name == "MPI_Barrier":
                s["enter" if type(ev).__name__ == "Enter" else "leave"] += 1
            elif name.startswith(MARKER):
                s["marker"] += 1
    failures = []
    lost = []
    for r in range(ranks):
        entered, returned, _ = counts(count_dir, r)
        s = per_loc.get(r, {"n": 0, "enter": 0, "leave": 0, "backwards": 0, "marker": 0})
        lost.append(entered - s["enter"])
        if s["backwards"]:
            failures.append(f"rank {r}: timestamps decrease")
        if not entered - KILL_LOSS_BARRIERS <= s["enter"] <= entered:
            failures.append(f"rank {r}: {s['enter']} barriers salvaged, the program entered "
                            f"{entered} (at most {KILL_LOSS_BARRIERS} may be lost)")
        if s["n"] and s["marker"] != 2:
            failures.append(f"rank {r}: {s['marker'] // 2} cut-off markers")
    print(f"# barriers the program entered but the archive lacks (lost in memory at the kill): "
          f"{min(lost)}-{max(lost)} per rank (at most {KILL_LOSS_BARRIERS} may be)", flush=True)
    return per_loc, failures


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", required=True, help="libhtrace.so")
    ap.add_argument("--app", required=True, help="tests/salvage's salvage_fail_app")
    ap.add_argument("--salvage", required=True, help="htrace-salvage")
    ap.add_argument("--correct", required=True, help="htrace-correct")
    ap.add_argument("--report", required=True, help="htrace-report")
    ap.add_argument("--cluster", help="tests/cluster/htrace-cluster-run (else one host)")
    ap.add_argument("--ranks", type=int, default=256)
    ap.add_argument("--per-node", type=int, default=8, help="ranks per emulated node")
    ap.add_argument("--barriers", type=int, default=12000,
                    help="kill once every rank made this many barriers and has events on disk")
    ap.add_argument("--traffic-seconds", type=float, default=300,
                    help="... or once the ranks have run this long after MPI_Init")
    ap.add_argument("--start-timeout", type=float, default=3600, help="for MPI_Init of all ranks")
    ap.add_argument("--nofile", type=int, default=1024, help="ulimit -n of htrace-salvage")
    ap.add_argument("--nice", type=int, default=10)
    ap.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                    help="more environment for the ranks (e.g. HTRACE_SYNC=none)")
    ap.add_argument("--tmp", default=tempfile.gettempdir())
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--reuse", metavar="WORK",
                    help="a work directory kept by --keep: salvage and check its killed run again "
                         "(no new run)")
    args = ap.parse_args()

    work = args.reuse or tempfile.mkdtemp(prefix="salvage-scale-", dir=args.tmp)
    count_dir = os.path.join(work, "counts")
    archive_dir = os.path.join(work, "trace")
    if args.reuse:
        for name in ("salvaged", "corrected", "report.json"):
            shutil.rmtree(os.path.join(work, name), ignore_errors=True)
            if os.path.isfile(os.path.join(work, name)):
                os.remove(os.path.join(work, name))
    else:
        os.mkdir(count_dir)
    log_file = os.path.join(work, "htrace.log")
    print(f"# salvage at scale: {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}, "
          f"{os.cpu_count()} cores, {args.ranks} ranks, work {work}", flush=True)
    ok = False
    try:
        started = time.time()
        if not args.reuse:
            job = launch(args, work, count_dir, archive_dir, log_file)
            try:
                pids = wait_for_traffic(args, job, count_dir, archive_dir, started)
            except BaseException:
                os.killpg(job.pid, signal.SIGKILL)
                raise
            kill_job(job, pids)
            time.sleep(1)  # the counts are final once the ranks are gone
        entered = [counts(count_dir, r)[0] for r in range(args.ranks)]
        evt = [os.path.join(archive_dir, "traces", f"{r}.evt") for r in range(args.ranks)]
        sizes = [os.path.getsize(p) if os.path.exists(p) else 0 for p in evt]
        when = "the kept run" if args.reuse else f"killed after {time.time() - started:.0f} s"
        print(f"# {when}: barriers entered per rank {min(entered)}-{max(entered)}, event files "
              f"{sum(sizes) / 2**20:.1f} MiB, {sum(1 for s in sizes if s)} non-empty", flush=True)

        out = os.path.join(work, "salvaged")
        rc, stdout, stderr, wall, rss = timed([args.salvage, archive_dir, out], args.nofile,
                                              "htrace-salvage")
        total = re.search(r"salvaged archive: .*\((\d+) events\)", stdout)
        events = int(total.group(1)) if total else 0
        if rc != 0:
            print(stderr[-3000:])
            return 1
        print(f"# salvaged {events} events, {args.ranks} locations: "
              f"{wall / max(events, 1) * 1e9:.0f} ns wall per event", flush=True)

        t = time.time()
        p = subprocess.run(f"otf2-print {shlex.quote(os.path.join(out, 'traces.otf2'))} | wc -l",
                           shell=True, capture_output=True, text=True)
        print(f"# otf2-print: {p.stdout.strip()} lines, stderr {p.stderr.strip()[:200]!r}, "
              f"{time.time() - t:.0f} s", flush=True)
        failures = []
        if p.stderr.strip():
            failures.append("otf2-print: " + p.stderr.strip()[:500])

        t = time.time()
        per_loc, bad = check_events(os.path.join(out, "traces.otf2"), count_dir, args.ranks)
        failures += bad
        n = sum(s["n"] for s in per_loc.values())
        print(f"# python3 otf2: {len(per_loc)} locations, {n} events, "
              f"{time.time() - t:.0f} s; events per location "
              f"{min(s['n'] for s in per_loc.values()) if per_loc else 0}-"
              f"{max(s['n'] for s in per_loc.values()) if per_loc else 0}", flush=True)
        if n != events:
            failures.append(f"htrace-salvage says {events} events, python3-otf2 read {n}")

        corrected = os.path.join(work, "corrected")
        rc_c, _, err_c, _, _ = timed([args.correct, out, corrected], args.nofile, "htrace-correct")
        if rc_c != 0:
            failures.append("htrace-correct exit %d: %s" % (rc_c, err_c[-500:]))
        rc_r, _, err_r, _, _ = timed([args.report, "--format", "json", "-o",
                                      os.path.join(work, "report.json"), out], args.nofile,
                                     "htrace-report")
        if rc_r != 0:
            failures.append("htrace-report exit %d: %s" % (rc_r, err_r[-500:]))
        for f in failures[:20]:
            print("FAIL: " + f)
        ok = not failures
        print("PASS" if ok else f"FAILED ({len(failures)} problems)")
        return 0 if ok else 1
    finally:
        if ok and not args.keep and not args.reuse:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"# work directory kept: {work}")


if __name__ == "__main__":
    sys.exit(main())
