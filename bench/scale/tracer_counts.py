#!/usr/bin/env python3
"""The tracer's start and end at scale, counted (see README.md).

Runs the barrier program of bench/initfinal under libhtrace on emulated nodes at each P, with
HTRACE_VERBOSE=2 and HTRACE_LOG_FILE, and reads from that file what every rank logged: the messages,
partner changes and collectives of its clock synchronization in MPI_Init and of the definition
unification in MPI_Finalize, and rank 0's phase times. Prints per P the busiest and the median
rank's rounds and messages and the total, fits the rounds against log2 P, and builds the model of
10,000 and 100,000 ranks with a core each from the counted rounds and the per-round cost measured
where the ranks do not outnumber the cores."""
import argparse
import csv
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "initfinal"))
from measure import fit_line  # noqa: E402  (least squares, shared with bench/initfinal)

TRAFFIC = re.compile(
    r"htrace\[(\d+)\]: debug: (clock: MPI_Init|finalize:) traffic of this rank: sent (\d+) "
    r"\((\d+) B\), received (\d+) \((\d+) B\), partner changes (\d+), collectives (\d+)")
SYNC_MS = re.compile(r"htrace\[0\]: debug: clock: \S+ synchronization took ([\d.]+) ms")
TREE_MS = re.compile(r"htrace\[0\]: debug: finalize: .*definition tree ([\d.]+) ms.*maps down ([\d.]+) ms"
                     r".*global definitions ([\d.]+) ms")
RANK_TIMES = re.compile(r"initfinal rank (\d+) init_ms ([\d.]+) finalize_ms ([\d.]+)")


def layout(p, per_node):
    """At least 2 emulated nodes, at most per_node ranks each (as bench/initfinal)."""
    nodes = max(2, p // per_node)
    offsets = ",".join(f"{(i * 0.37) % 3 - 1.5:.6f}" for i in range(nodes))
    return nodes, p // nodes, offsets


def run(args, p):
    """One traced run; returns a dict of what the ranks logged, or None."""
    work = tempfile.mkdtemp(prefix="scale-tracer-", dir=args.tmp)
    log_file = os.path.join(work, "htrace.log")
    nodes, per_node, offsets = layout(p, args.ranks_per_node)
    env = dict(os.environ)
    # Ranks waiting in MPI yield their core: Open MPI's knob. MPICH has none (its ranks poll);
    # htrace-cluster-run turns the -x options into hydra's -genv.
    yield_knob = "" if os.environ.get("HTRACE_MPI_FLAVOR") == "mpich" else "--mca mpi_yield_when_idle 1 "
    env["MPIRUN_EXTRA"] = (f"-x LD_PRELOAD={args.lib} -x HTRACE_ARCHIVE_DIR={work} -x HTRACE_VERBOSE=2 "
                           f"-x HTRACE_LOG_FILE={log_file} {yield_knob}" + args.mpirun_extra).strip()
    cmd = [args.cluster, "--shm", "--offsets", offsets, "--ranks-per-node", str(per_node), "--",
           args.program, str(args.barriers)]
    started = time.time()
    try:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        print(f"# timeout at p={p}", file=sys.stderr)
        shutil.rmtree(work, ignore_errors=True)
        return None
    wall = time.time() - started
    try:
        with open(log_file) as f:
            text = f.read()
    except OSError:
        text = ""
    shutil.rmtree(work, ignore_errors=True)
    out = {"p": p, "nodes": nodes, "wall_s": wall, "init": {}, "fin": {}, "init_ms": [], "fin_ms": []}
    for m in TRAFFIC.finditer(text):
        rank = int(m.group(1))
        counts = tuple(int(m.group(i)) for i in range(3, 9))
        out["init" if m.group(2).startswith("clock") else "fin"][rank] = counts
    for m in RANK_TIMES.finditer(done.stdout):
        out["init_ms"].append(float(m.group(2)))
        out["fin_ms"].append(float(m.group(3)))
    sync = SYNC_MS.search(text)
    out["sync_ms"] = float(sync.group(1)) if sync else None
    tree = TREE_MS.search(text)
    out["tree_ms"], out["down_ms"], out["global_ms"] = (
        (float(tree.group(1)), float(tree.group(2)), float(tree.group(3))) if tree else (None,) * 3)
    if done.returncode != 0 or len(out["init"]) != p or len(out["fin"]) != p:
        print(f"# p={p}: exit {done.returncode}, traffic lines {len(out['init'])}+{len(out['fin'])} "
              f"of {p}+{p}\n{done.stderr[-1500:]}", file=sys.stderr)
        return None
    return out


def rounds(counts):
    """Partner changes + collectives x ceil(log2 P) would count MPI's inner rounds too; here a
    collective is one step of this rank (its depth is MPI's), so rounds = changes + collectives."""
    return counts[4] + counts[5]


def root_bench_cost(path):
    """Rank 0's O(P) share of MPI_Finalize per rank (ms) from scale_finalize_root_bench's CSV: the
    least-squares slope of the phases' total CPU time (median of the repetitions) over P, with the
    points it came from. CPU time, because the machine may run other jobs beside the bench."""
    points = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row["phase"] == "total":
                points.append((int(row["p"]), float(row["cpu_med_ms"])))
    points.sort()
    if len(points) >= 2:
        _, slope = fit_line([p for p, _ in points], [ms for _, ms in points])
    elif points:
        slope = points[0][1] / points[0][0]
    else:
        raise SystemExit(f"{path}: no 'total' rows")
    return max(0.0, slope), points


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--lib", required=True, help="libhtrace.so")
    ap.add_argument("--program", required=True, help="bench/initfinal's initfinal_barriers")
    ap.add_argument("--cluster", required=True, help="tests/cluster/htrace-cluster-run")
    ap.add_argument("--ps", default="2 4 8 16 32 64 128 256")
    ap.add_argument("--ranks-per-node", type=int, default=8)
    ap.add_argument("--barriers", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--tmp", default=tempfile.gettempdir())
    ap.add_argument("--mpirun-extra", default="", metavar="OPTIONS",
                    help="more launcher options, e.g. '--mca btl_tcp_if_include lo'")
    ap.add_argument("--root-bench-csv", metavar="FILE",
                    help="CSV of scale_finalize_root_bench --csv: rank 0's O(P) share of "
                         "MPI_Finalize measured in one quiet process, used instead of the growth "
                         "over these (oversubscribed) runs")
    args = ap.parse_args()
    cores = os.cpu_count()
    print(f"# tracer counts: {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}, {cores} cores, "
          f"{args.ranks_per_node} ranks per emulated node, {args.lib}")
    results = []
    for p in (int(x) for x in args.ps.split()):
        r = run(args, p)
        if r:
            results.append(r)
            print(f"# p={p} done in {r['wall_s']:.0f} s", flush=True)
    if not results:
        print("no run finished")
        return 1

    for key, title in (("init", "MPI_Init: clock synchronization (sync, domains, residual)"),
                       ("fin", "MPI_Finalize: definition unification and the run's totals")):
        print(f"\n## {title}\n")
        print("| P | nodes | rounds: busiest rank | median rank | messages: busiest rank | median | "
              "total | bytes: busiest rank | rank 0's time ms |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in results:
            per_rank = list(r[key].values())
            rs = [rounds(c) for c in per_rank]
            msgs = [c[0] + c[2] for c in per_rank]
            byts = [c[1] + c[3] for c in per_rank]
            t = r["sync_ms"] if key == "init" else r["tree_ms"]
            print(f"| {r['p']} | {r['nodes']} | {max(rs)} | {statistics.median(rs):.0f} | {max(msgs)} | "
                  f"{statistics.median(msgs):.0f} | {sum(msgs) // 2} | {max(byts)} | "
                  f"{t if t is not None else '-'} |")
        if len(results) < 2:
            continue  # one P: the counts, no fit
        xs = [math.log2(r["p"]) for r in results]
        busiest = [max(rounds(c) for c in r[key].values()) for r in results]
        a, b = fit_line(xs, busiest)
        print(f"\nbusiest rank's rounds = {a:.1f} + {b:.2f} log2 P (least squares over P = "
              f"{results[0]['p']}..{results[-1]['p']}); per doubling of P: +{b:.2f} rounds")
        r_lin = [max(rounds(c) for c in r[key].values()) / r["p"] for r in results]
        print("rounds / P: " + ", ".join(f"{x:.2f}" for x in r_lin) +
              " (falls with P: the rounds do not grow linearly)")

    # Time per round, the cost of one step on this machine: where ranks do not outnumber the
    # cores it is the per-step cost a core per rank gives; beyond, every round waits for ~P/cores
    # time slices, which is what makes the one-machine totals grow by a factor per doubling.
    print("\n## Time per round (rank 0): where the growth on one machine comes from\n")
    print("| P | P / cores | sync ms | busiest rounds | ms per round | finalize tree ms | "
          "finalize rounds | ms per round |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    per_round_init, per_round_fin = {}, {}
    for r in results:
        ri = max(rounds(c) for c in r["init"].values())
        rf = max(rounds(c) for c in r["fin"].values())
        si = r["sync_ms"] / ri if r["sync_ms"] else None
        sf = (r["tree_ms"] + r["down_ms"]) / rf if r["tree_ms"] is not None else None
        per_round_init[r["p"]], per_round_fin[r["p"]] = si, sf
        print(f"| {r['p']} | {r['p'] / cores:.0f} | {r['sync_ms']} | {ri} | "
              f"{si:.2f} | {r['tree_ms']} | {rf} | {sf:.3f} |" if si and sf else
              f"| {r['p']} | {r['p'] / cores:.0f} | - | {ri} | - | - | {rf} | - |")

    if len(results) < 2:
        print("\n(one P: no fit and no model; give --ps at least two sizes)")
        return 0
    # The model: counted rounds at P (the fit) x the per-round cost where every rank had a core.
    quiet = [r for r in results if r["p"] <= cores] or results[:1]
    t_init = min(per_round_init[r["p"]] for r in quiet if per_round_init[r["p"]])
    t_fin = min(per_round_fin[r["p"]] for r in quiet if per_round_fin[r["p"]])
    ai, bi = fit_line([math.log2(r["p"]) for r in results],
                      [max(rounds(c) for c in r["init"].values()) for r in results])
    af, bf = fit_line([math.log2(r["p"]) for r in results],
                      [max(rounds(c) for c in r["fin"].values()) for r in results])
    # Rank 0 writes the global definitions, which list every process and location: O(P) work
    # that no tree removes; per rank from the growth of its time between the smallest and largest P.
    # Where ranks outnumber the cores that growth is mostly time slices of the other ranks, so a
    # measurement of rank 0's work alone (--root-bench-csv) replaces it when given.
    g_runs = [r for r in results if r["global_ms"] is not None]
    g = max(0.0, (g_runs[-1]["global_ms"] - g_runs[0]["global_ms"]) /
            (g_runs[-1]["p"] - g_runs[0]["p"])) if len(g_runs) >= 2 else 0.0
    if args.root_bench_csv:
        g, points = root_bench_cost(args.root_bench_csv)
        g_source = (f"measurement of scale_finalize_root_bench ({args.root_bench_csv}: CPU time of "
                    f"rank 0's merges, messages, global definitions and maps down, slope over P = "
                    + ", ".join(str(p) for p, _ in points) + ")")
    else:
        g_source = (f"growth of rank 0's global definitions time over these runs, P = "
                    f"{g_runs[0]['p'] if g_runs else '-'}..{g_runs[-1]['p'] if g_runs else '-'} "
                    f"(oversubscribed beyond {cores}: an upper bound; see --root-bench-csv)")
    print(f"""
## Model, a core per rank

  rounds_init(P) = {ai:.1f} + {bi:.2f} log2 P   rounds_fin(P) = {af:.1f} + {bf:.2f} log2 P  (counted above)
  t_init = {t_init:.2f} ms per round, t_fin = {t_fin:.3f} ms per round: the smallest per-round cost
           at P <= {cores} (a core per rank on this machine; loopback TCP between emulated nodes)
  g = {g * 1e3:.2f} us per rank: rank 0's O(P) share of MPI_Finalize, from the
      {g_source}
""")
    for big in (10_000, 100_000):
        init = (ai + bi * math.log2(big)) * t_init
        fin = (af + bf * math.log2(big)) * t_fin + big * g
        print(f"  P = {big:>7,}: MPI_Init clock work ~ {init / 1e3:.2f} s (limit 1 s), "
              f"MPI_Finalize ~ {fin / 1e3:.2f} s (limit 2 s; rank 0's O(P) share {big * g / 1e3:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
