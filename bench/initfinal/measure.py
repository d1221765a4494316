#!/usr/bin/env python3
"""Added MPI_Init / MPI_Finalize time of libhtrace against p (driver of run.sh, see README.md).

Runs the 100-barrier program untraced and under each given libhtrace.so, alternated (the order
rotates every repetition), on one host and on emulated nodes; prints medians, spreads, the growth
per doubling of p, and a model of 10,000 ranks built from the per-phase times the new library logs
at HTRACE_VERBOSE=2."""
import argparse
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none"]


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def cluster_layout(p):
    """Emulated nodes for p ranks: 2 nodes up to 16 ranks, then 8 ranks per node (every node is a
    daemon and ranks on different nodes talk over loopback TCP: more nodes do not fit 2 cores)."""
    nodes = max(2, p // 8)
    per_node = p // nodes
    offsets = ",".join(f"{(i * 0.37) % 3 - 1.5:.6f}" for i in range(nodes))
    return nodes, per_node, offsets


def run_once(args, setting, p, lib, verbose=False):
    """One mpirun; returns (slowest init ms, slowest finalize ms, stderr text) or None."""
    archive_dir = tempfile.mkdtemp(prefix="initfinal-", dir=args.tmp)
    env = dict(os.environ)
    htrace = []
    if lib:
        htrace = ["-x", f"LD_PRELOAD={lib}", "-x", f"HTRACE_ARCHIVE_DIR={archive_dir}",
                  "-x", f"HTRACE_VERBOSE={2 if verbose else 0}"]
    if setting == "host":
        cmd = MPIRUN + ["-np", str(p)] + htrace + [args.program, str(args.barriers)]
    else:
        nodes, per_node, offsets = cluster_layout(p)
        env["MPIRUN_EXTRA"] = " ".join(htrace)
        cmd = [args.cluster, "--shm", "--offsets", offsets, "--ranks-per-node", str(per_node),
               "--", args.program, str(args.cluster_barriers)]
    try:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        print(f"# timeout: {setting} p={p} {lib or 'untraced'}", file=sys.stderr)
        return None
    finally:
        shutil.rmtree(archive_dir, ignore_errors=True)
    init, fin = [], []
    for line in done.stdout.splitlines():
        m = re.match(r"initfinal rank (\d+) init_ms ([\d.]+) finalize_ms ([\d.]+)", line)
        if m:
            init.append(float(m.group(2)))
            fin.append(float(m.group(3)))
    if done.returncode != 0 or len(init) != p:
        print(f"# failed ({done.returncode}): {setting} p={p} {lib or 'untraced'}\n"
              f"{done.stderr[-2000:]}", file=sys.stderr)
        return None
    return max(init), max(fin), done.stderr


def fit_line(xs, ys):
    """Least-squares a + b x."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    return my - b * mx, b


def growth(ps, added):
    """ms per doubling (fit on log2 p) and the factor per doubling (fit on log p, log added)."""
    xs = [math.log2(p) for p in ps]
    _, per_doubling = fit_line(xs, added)
    pos = [(x, math.log2(a)) for x, a in zip(xs, added) if a > 0]
    factor = None
    if len(pos) == len(added) and len(pos) >= 2:
        _, k = fit_line([x for x, _ in pos], [y for _, y in pos])
        factor = 2 ** k
    return per_doubling, factor


def table(title, ps, variants, runs, cores):
    print(f"\n## {title}")
    print(f"ms; slowest rank; median of the runs, [min..max] of the traced runs minus the untraced "
          f"median; {cores} cores")
    names = [v for v, _ in variants]
    for what, idx in (("MPI_Init", 0), ("MPI_Finalize", 1)):
        head = f"| p | untraced {what} |" + "".join(f" {n} added |" for n in names[1:])
        print("\n" + head)
        print("|---:" * (1 + len(names)) + "|")
        added = {n: [] for n in names[1:]}
        for p in ps:
            base = runs.get(("untraced", p), [])
            if not base:
                continue
            b = statistics.median(r[idx] for r in base)
            cells = [f"{b:.0f} [{min(r[idx] for r in base):.0f}..{max(r[idx] for r in base):.0f}]"]
            for n in names[1:]:
                mine = runs.get((n, p), [])
                if not mine:
                    cells.append("-")
                    added[n].append(None)
                    continue
                a = statistics.median(r[idx] for r in mine) - b
                added[n].append(a)
                cells.append(f"{a:+.0f} [{min(r[idx] for r in mine) - b:+.0f}.."
                             f"{max(r[idx] for r in mine) - b:+.0f}]")
            print(f"| {p} | " + " | ".join(cells) + " |")
        print()
        for n in names[1:]:
            pts = [(p, a) for p, a in zip(ps, added[n]) if a is not None]
            if len(pts) >= 2:
                per_doubling, factor = growth([p for p, _ in pts], [a for _, a in pts])
                f = f", x{factor:.2f} per doubling (power-law fit)" if factor else ""
                print(f"growth of {n} added {what}: {per_doubling:+.1f} ms per doubling of p "
                      f"(fit on log2 p){f}")


PHASES = {
    "flush": r"writing and agreeing ([\d.]+) ms",
    "evt": r"closing event files ([\d.]+) ms",
    "tree": r"definition tree ([\d.]+) ms",
    "down": r"maps down ([\d.]+) ms",
    "local": r"local definitions ([\d.]+) ms",
    "global": r"global definitions ([\d.]+) ms",
    "close": r"closing the archive ([\d.]+) ms",
}


def phases(stderr):
    line = next((l for l in stderr.splitlines() if "debug: finalize:" in l), None)
    if not line:
        return None
    out = {k: float(re.search(v, line).group(1)) for k, v in PHASES.items()}
    rounds = re.findall(r"([\d.]+)\+([\d.]+)\((\d+)\)", line)
    out["rounds"] = [(float(w), float(m), int(b)) for w, m, b in rounds]
    res = re.findall(r"final residual .* measured in ([\d.]+) ms over (\d+) domains in (\d+) rounds",
                     stderr)
    out["residual"] = [(float(ms), int(d), int(r)) for ms, d, r in res]
    sync = re.search(r"synchronization took ([\d.]+) ms", stderr)
    out["sync"] = float(sync.group(1)) if sync else None
    return out


def model(args, ps, cps, lib):
    """Per-phase times of the new library at each p (one host, and emulated nodes for the residual
    tree), fitted to the model, evaluated at 10,000 ranks."""
    print("\n## Model of 10,000 ranks (new code), from the per-phase times it logs at "
          "HTRACE_VERBOSE=2")
    data = {}
    for setting, plist in (("host", ps), ("cluster", cps[-3:])):
        for p in plist:
            got = []
            for _ in range(args.model_repeat):
                r = run_once(args, setting, p, lib, verbose=True)
                if r and phases(r[2]):
                    got.append(phases(r[2]))
            if got:
                data[(setting, p)] = got
    host = [(p, data[("host", p)]) for p in ps if ("host", p) in data]
    if len(host) < 2:
        print("not enough runs for the model")
        return

    def med(values):
        return statistics.median(values) if values else 0.0

    print("\nrank 0's finalize phases on one host (ms, medians):")
    print("| p | write+agree | close evt | tree up: rounds (min wait, merge sum, bytes of last) "
          "| maps down | local defs | global defs | close |")
    print("|---:|---:|---:|---|---:|---:|---:|---:|")
    hop = []
    for p, runs in host:
        rounds = [r["rounds"] for r in runs]
        merge_sum = med([sum(m for _, m, _ in rs) for rs in rounds])
        waits = [w for rs in rounds for w, _, _ in rs]
        last_bytes = med([rs[-1][2] for rs in rounds if rs])
        print(f"| {p} | {med([r['flush'] for r in runs]):.1f} | {med([r['evt'] for r in runs]):.1f}"
              f" | {len(rounds[0])} ({min(waits) if waits else 0:.2f}, {merge_sum:.2f}, "
              f"{last_bytes:.0f}) | {med([r['down'] for r in runs]):.1f} | "
              f"{med([r['local'] for r in runs]):.1f} | {med([r['global'] for r in runs]):.1f} | "
              f"{med([r['close'] for r in runs]):.1f} |")
        hop.extend(waits)
    # Robust per-step costs (no slopes of noisy differences): a merge round's fixed part is the
    # median first-round merge (a one-rank child: the regions dominate); the per-rank parts are
    # the largest run's remainder and its global-definition time divided by p (upper bounds).
    first = [r["rounds"][0][1] for _, runs in host for r in runs if r["rounds"]]
    t_merge_round = med(first)
    p_max, runs_max = host[-1]
    rounds_max = len(runs_max[0]["rounds"])
    merge_max = med([sum(m for _, m, _ in r["rounds"]) for r in runs_max])
    merge_per_rank = max(0.0, merge_max - rounds_max * t_merge_round) / p_max
    # Global definitions: the fixed part (regions, strings) is the smallest run's time, the
    # per-rank part the growth from the smallest to the largest run.
    p_min, runs_min = host[0]
    global_fixed = med([r["global"] for r in runs_min])
    global_per_rank = max(0.0, med([r["global"] for r in runs_max]) - global_fixed) / (p_max - p_min)
    # The fastest receive of any round is the best estimate of one tree hop (message + wake-up)
    # on this machine; everything above it is waiting for descheduled ranks.
    t_hop = min(hop) if hop else 0.0
    p_small = host[0][1]
    constant = med([r["flush"] + r["evt"] + r["local"] + r["close"] for r in p_small]) + global_fixed
    res = [(d, r, ms) for (s, p), runs in data.items() if s == "cluster" for run in runs
           for ms, d, r in run["residual"] if r > 0]
    # Fastest observed round: a round's time also holds the wait for the child to arrive.
    t_res_round = min([ms / r for d, r, ms in res]) if res else 0.0
    sync = [(p, med([r["sync"] for r in runs if r["sync"] is not None]))
            for (s, p), runs in sorted(data.items()) if s == "cluster"]
    big = 10000
    rounds = math.ceil(math.log2(big))
    domains = big // 64  # 64 ranks per node
    res_rounds = math.ceil(math.log2(domains))
    collectives = 9  # allreduce, 3 sleeping barriers, OTF2's close/open/close/close, the totals
    tree = 2 * rounds * t_hop + rounds * t_merge_round
    fin = (constant + tree + collectives * rounds * t_hop + big * (merge_per_rank + global_per_rank)
           + res_rounds * t_res_round)
    print(f"""
Finalize model: T(P) = C + L (2 t_hop + t_merge) + n L t_hop + P (m + g) + R t_res,
  L = ceil(log2 P) tree rounds, R = ceil(log2 D) residual rounds for D nodes
  C       = {constant:.1f} ms  per-rank work that runs in parallel on every rank (write buffers,
            close event files, own local definition files, archive close) and the fixed part of
            the global definitions ({global_fixed:.1f} ms), measured at p = {host[0][0]}
  t_hop   = {t_hop:.3f} ms  one tree hop (fastest receive of rank 0 in any round)
  t_merge = {t_merge_round:.3f} ms  one merge round's fixed part (median first-round merge)
  n       = {collectives} log-depth collectives (allreduce, sleeping barriers, OTF2's, totals)
  m       = {merge_per_rank * 1e3:.2f} us per rank  rank 0's merging beyond the fixed part (p = {p_max})
  g       = {global_per_rank * 1e3:.2f} us per rank  rank 0 writing the global definitions (growth p = {p_min}..{p_max})
  t_res   = {t_res_round:.2f} ms  one round of the residual-offset tree of node leaders (emulated nodes,
            fastest observed)
  P = {big}, D = {domains} nodes of 64 ranks: L = {rounds}, R = {res_rounds}
  => added MPI_Finalize at 10,000 ranks ~ {fin:.0f} ms: tree {tree:.1f} ms, collectives
     {collectives * rounds * t_hop:.1f} ms, rank 0's O(P) share {big * (merge_per_rank + global_per_rank):.0f} ms
     (the global definition file lists every location, so that share cannot go below P x g),
     residual {res_rounds * t_res_round:.0f} ms""")
    if sync:
        # H2HCA: node leaders synchronize over a tree (log2 D rounds), then each leader checks its
        # node's members in turn (clockprop: linear in ranks per node, independent of D).
        per_round = [(math.ceil(math.log2(max(2, cluster_layout(p)[0]))), ms) for p, ms in sync]
        t_sync_round = min(ms / r for r, ms in per_round)
        print(f"""
Init model (the clock synchronization, the part of MPI_Init's added time that depends on p):
  measured on emulated nodes: """ + ", ".join(
            f"p={p}: {ms:.1f} ms" for p, ms in sync) + f"""
  sync(P) = ceil(log2 D) t_sync + intra(n), t_sync = {t_sync_round:.1f} ms per inter-node round
  (fastest per-round share of the runs above, intra-node part included); intra(n) grows with the
  ranks per node n (the leader checks each member's clock in turn), not with P
  => at 10,000 ranks on 156 nodes: {math.ceil(math.log2(156))} rounds ~ {math.ceil(math.log2(156)) * t_sync_round:.0f} ms
     plus the intra-node checks of 63 members (one host, 64 ranks: see the one-host table)""")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--program", required=True)
    ap.add_argument("--cluster", required=True)
    ap.add_argument("--variant", action="append", default=[], help="NAME=path/to/libhtrace.so")
    ap.add_argument("--ps", default="2 4 8 16 32 64")
    ap.add_argument("--cluster-ps", default="2 4 8 16 32 64")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--model-repeat", type=int, default=1)
    ap.add_argument("--barriers", type=int, default=100)
    ap.add_argument("--cluster-barriers", type=int, default=20,
                    help="barriers on emulated nodes (loopback TCP between oversubscribed nodes)")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--tmp", default=tempfile.gettempdir())
    ap.add_argument("--no-model", action="store_true")
    args = ap.parse_args()
    variants = [("untraced", None)] + [tuple(v.split("=", 1)) for v in args.variant]
    ps = [int(p) for p in args.ps.split()]
    cps = [int(p) for p in args.cluster_ps.split()]
    cores = os.cpu_count()
    print(f"# initfinal: {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}, {cores} cores, "
          f"load {loadavg()}, {args.barriers} barriers ({args.cluster_barriers} on emulated nodes), "
          f"{args.repeat} runs per cell, variants: "
          + ", ".join(f"{n}={l or '-'}" for n, l in variants))
    runs = {"host": {}, "cluster": {}}
    started = time.time()
    loads = []
    for rep in range(args.repeat):
        order = variants[rep % len(variants):] + variants[:rep % len(variants)]
        for setting, plist in (("host", ps), ("cluster", cps)):
            for p in plist:
                for name, lib in order:
                    r = run_once(args, setting, p, lib)
                    if r:
                        runs[setting].setdefault((name, p), []).append(r[:2])
        loads.append(loadavg())
        print(f"# repetition {rep + 1} done after {time.time() - started:.0f} s, load {loads[-1]}",
              flush=True)
    table(f"One host, p ranks oversubscribed (--bind-to none)", ps, variants, runs["host"], cores)
    nodes_note = ", ".join(f"p={p}: {cluster_layout(p)[0]}x{cluster_layout(p)[1]}" for p in cps)
    table(f"Emulated nodes (tests/cluster/htrace-cluster-run --shm; nodes x ranks: {nodes_note})",
          cps, variants, runs["cluster"], cores)
    if not args.no_model and len(variants) > 1:
        model(args, ps, cps, variants[-1][1])
    print(f"\n# done after {time.time() - started:.0f} s; load after each repetition: "
          + "; ".join(loads) + f"; now {loadavg()}")


if __name__ == "__main__":
    main()
