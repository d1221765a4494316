"""The fidelity cases, shared by tests/fidelity (the asserted bounds) and the fidelity
benchmark (the table): each case traces a program with a given build of htrace,
corrects the archive with that build's htrace-correct --json, and compares input, output and ground
truth with fidelity_compare (tests/fidelity/instrument, an independent OTF2 reader that shares no
code with correct/).

Ground truth:
- HTRACE_SYNC=none on the emulated cluster: each event's timestamp is its node's namespace clock;
  its true time is that minus the node's offset (exact, every event).
- drift: fidelity_probe reads the node's (shimmed) CLOCK_MONOTONIC right before every MPI_Barrier;
  reading = t (1 + rate) with t the node's namespace clock, so the truth of that barrier's Enter is
  reading / (1 + rate) - offset.
- consistent single-host traces: the input itself (nothing needs correction).
All errors are taken after removing one common shift (the median on world rank 0's location):
a corrected trace is on some global clock, not necessarily the truth's origin.
"""
import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field

from htrace_test import hpcc
from htrace_test import pwscf
from htrace_test.mpi import mpirun_command
from htrace_test.rank_output import RankOutput

SKIP = 77  # the ctest skip code: time namespaces or hpcc unavailable


class Skip(Exception):
    """The case cannot run here (no time namespaces, no hpcc)."""


class CaseError(Exception):
    """Tracing, correcting or comparing failed."""


@dataclass
class Build:
    """The htrace build under test and the build that holds the fidelity tools (often the same)."""
    dir: str
    tools: str

    def path(self, *parts, tools=False):
        return os.path.join(self.tools if tools else self.dir, *parts)

    @property
    def lib(self):
        return self.path("libtrace", "libhtrace.so")

    @property
    def correct(self):
        return self.path("tools", "htrace-correct", "htrace-correct")

    @property
    def cluster_run(self):
        return self.path("tests", "cluster", "htrace-cluster-run")

    @property
    def shim(self):
        return self.path("tests", "clock", "libclock_rate_shim.so")

    def tool(self, name):
        return self.path("tests", "fidelity", "instrument", name, tools=True)

    def check(self):
        needed = [self.lib, self.correct, self.cluster_run, self.tool("fidelity_compare"),
                  self.tool("fidelity_pingpong"), self.tool("fidelity_probe")]
        missing = [p for p in needed if not os.path.exists(p)]
        if missing:
            raise CaseError("not built: " + ", ".join(missing))


@dataclass
class Result:
    """One case's measurements: the correction report, the comparison and timings."""
    case: str
    description: str
    report: dict = field(default_factory=dict)
    compare: dict = field(default_factory=dict)
    correct_exit: int = 0
    trace_seconds: float = 0.0
    correct_seconds: float = 0.0
    copy: dict = field(default_factory=dict)  # what opts["copy"] measured (the benchmark's)
    # drift_step, drift_ramp: the same trace corrected with INIT and FINAL only, and the run's
    # length in measurement intervals
    ends_only: "Result" = None
    intervals: float = 0.0
    # libhtrace's run summary on the measurements during the run (clock_summary)
    clocks: dict = field(default_factory=dict)


def run(cmd, *, env=None, cwd=None, timeout=300, what="command", output=None):
    """Runs cmd to its end; output: the RankOutput of an MPI run, shown with a failure."""
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if done.returncode == SKIP:
        raise Skip(f"{what}: {done.stderr.strip()[-300:]}")
    if done.returncode != 0:
        said = output.describe()[-3000:] if output else ""
        raise CaseError(f"{what} failed ({done.returncode}): {' '.join(map(str, cmd))}\n{said}"
                        f"{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    return done


def trace_env(build, archive, sync=None, preload=None):
    """Environment for a traced run: the archive's place and name, the sync, the preloads."""
    env = dict(os.environ, HTRACE_ARCHIVE_DIR=os.path.dirname(archive),
               HTRACE_ARCHIVE_NAME=os.path.basename(archive), HTRACE_OVERWRITE="1",
               LD_PRELOAD=":".join((preload or []) + [build.lib]),
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.pop("HTRACE_SYNC", None)
    if sync:
        env["HTRACE_SYNC"] = sync
    return env


FORWARDED = ["LD_PRELOAD", "HTRACE_ARCHIVE_DIR", "HTRACE_ARCHIVE_NAME", "HTRACE_OVERWRITE",
             "HTRACE_SYNC", "HTRACE_SYNC_INTERVAL_MS", "HTRACE_TEST_CLOCK_RATES",
             "HTRACE_TEST_CLOCK_RATE_STEPS", "OMPI_MCA_mpi_yield_when_idle"]


def traced(output):
    """A traced run whose timestamps the tracer did not have to clamp by more than rounding:
    libhtrace's summary (rank 0's, in its log file) says how far the farthest clamped one went
    back, and a conversion that goes wrong (a stamp extrapolated at a rate of 0/0, say) shows there
    first. Returns `output`, what the run's ranks said (a RankOutput)."""
    log = "\n".join(output.log())
    m = re.search(r"(\d+) timestamps clamped \(up to (\d+) ns back\)", log)
    if m is None:
        raise CaseError("no run summary from libhtrace: " + output.describe()[-2000:])
    if int(m.group(2)) > 1000:
        raise CaseError(f"libhtrace clamped {m.group(1)} timestamps, one by {m.group(2)} ns: "
                        "its clock conversion went wrong")
    return output


SUMMARY_CLOCKS = re.compile(r"(\d+) clock measurements during the run \((\w+) interval\) took "
                            r"([\d.]+) ms, ([\d.]+) % of ([\d.]+) s")


def clock_summary(output):
    """What libhtrace's run summary says of the clock measurements during the run: count,
    interval (adaptive or fixed), ms spent, share in % and the run's seconds; {} for none."""
    m = SUMMARY_CLOCKS.search("\n".join(output.log()))
    if m is None:
        return {}
    return {"count": int(m.group(1)), "interval": m.group(2), "ms": float(m.group(3)),
            "percent": float(m.group(4)), "seconds": float(m.group(5))}


def trace_one_host(build, archive, np, program, sync=None, cwd=None, timeout=300):
    """np ranks on this host (one shared clock). Returns what the ranks said (a RankOutput)."""
    env = trace_env(build, archive, sync)
    output = RankOutput(archive + "-output")
    # LD_PRELOAD reaches the ranks only (-x NAME=VALUE), not mpirun itself.
    preload = env.pop("LD_PRELOAD")
    cmd = mpirun_command(np, program, preload=preload, forward=[n for n in FORWARDED if n in env],
                         output=output)
    run(cmd, env=env, cwd=cwd, timeout=timeout, what="traced run", output=output)
    return traced(output)


def trace_cluster(build, archive, offsets, per_node, program, sync=None, rates=None, cwd=None,
                  timeout=300, steps=None, env_extra=None):
    """The emulated cluster: node i's CLOCK_MONOTONIC is offsets[i] s ahead of node 0's; with rates,
    the clock-rate shim (loaded before libhtrace) makes node i's clock run rates[i] fast, and with
    steps (per node None or (T, R[, D]): namespace clock ns, new rate, ramp ns) R fast once it
    passes T, or T + D when the rate ramps. Returns what the ranks said (a RankOutput)."""
    preload = [build.shim] if rates else []
    env = trace_env(build, archive, sync, preload)
    env.update(env_extra or {})
    if rates:
        env["HTRACE_TEST_CLOCK_RATES"] = ",".join(repr(r) for r in rates)
    if steps:
        env["HTRACE_TEST_CLOCK_RATE_STEPS"] = ",".join(
            ":".join(repr(v) if isinstance(v, float) else str(v) for v in step) if step else ""
            for step in steps)
    output = RankOutput(archive + "-output")
    # The forwarded LD_PRELOAD only reaches the ranks, not the runner's own mpirun and daemons.
    preloads = env.pop("LD_PRELOAD")
    env["MPIRUN_EXTRA"] = f"-x LD_PRELOAD={preloads} -x {output.log_variable()} " + " ".join(
        f"-x {n}" for n in FORWARDED if n in env)
    cmd = [build.cluster_run, "--offsets", ",".join(repr(o) for o in offsets),
           "--ranks-per-node", str(per_node), "--"] + output.program(program)
    run(cmd, env=env, cwd=cwd, timeout=timeout, what="traced run on the emulated cluster", output=output)
    return traced(output)


def correct(build, archive, out, options=()):
    """htrace-correct --json; its report, exit code (1: violations remain) and wall time."""
    shutil.rmtree(out, ignore_errors=True)
    t0 = time.monotonic()
    done = subprocess.run([build.correct, "--json", "--no-progress", *options, archive, out],
                          capture_output=True, text=True, timeout=300)
    seconds = time.monotonic() - t0
    if done.returncode not in (0, 1) or not done.stdout.strip():
        raise CaseError(f"htrace-correct failed ({done.returncode}): {done.stderr[-2000:]}")
    return json.loads(done.stdout), done.returncode, seconds


def compare(build, archive, out, lmin, truth_offsets=None, truth_probes=None):
    cmd = [build.tool("fidelity_compare"), archive, out, "--lmin", str(lmin)]
    if truth_offsets is not None:
        cmd += ["--truth-offsets", ",".join(str(o) for o in truth_offsets)]
    if truth_probes is not None:
        cmd += ["--truth-probes", truth_probes]
    return json.loads(run(cmd, timeout=300, what="fidelity_compare").stdout)


def lmin_of(report):
    """The smallest MPI l_min the correction used (the l of the message check)."""
    lmin = report.get("lmin_ns", {})
    values = [lmin[k] for k in ("mpi_intra", "mpi_inter") if k in lmin]
    return int(min(values)) if values else 0


def hpcc_program(work, ranks):
    if not hpcc.available():
        raise Skip("Debian's hpcc is not installed")
    with open(os.path.join(work, "hpccinf.txt"), "w") as f:
        f.write(hpcc.hpcc_input(ranks))
    return [hpcc.HPCC]


def check_hpcc_output(work):
    if not hpcc.succeeded(work):
        raise CaseError("hpcc's own result check failed under the tracer")


def node_offsets_ns(offsets, per_node, ranks):
    """Per world rank: its node's clock offset from node 0 in ns (the cluster runner's placement)."""
    return [round((offsets[r // per_node] - offsets[0]) * 1e9) for r in range(ranks)]


def shim_reading(t, rate, change=None):
    """What the clock-rate shim reads at namespace clock t: t + rate * t, and with a change
    (T, R[, D]) of the rate to R from T on, at once or over D ns, + (R - rate) * g(t) with g the
    time the clock has run at the new rate (clock_rate_shim.c)."""
    reading = t + rate * t
    if change is not None and t > change[0]:
        at, new_rate, ramp = (tuple(change) + (0,))[:3]
        since = t - at
        changed = since - ramp / 2 if since >= ramp else since * since / (2 * ramp)
        reading += (new_rate - rate) * changed
    return reading


def shim_inverse(reading, rate, change=None):
    """The namespace clock t at which the shim reads `reading`. The reading is t plus a term that
    changes by ~1e-5 per ns of t, so iterating t = reading - (shim_reading(t) - t) converges to
    well below a ns in a few steps."""
    t = reading
    for _ in range(5):
        t = reading - (shim_reading(t, rate, change) - t)
    return round(t)


def probe_truth(probe_dir, ranks, offsets, per_node, rates, path, steps=None):
    """Turns fidelity_probe's readings into true times on node 0's clock: the shim's reading
    inverted (shim_inverse; t: the node's namespace clock), minus the namespace's offset; steps:
    per node None or its rate change (shim_reading)."""
    with open(path, "w") as out:
        for r in range(ranks):
            node = r // per_node
            rate, offset_ns = rates[node], round((offsets[node] - offsets[0]) * 1e9)
            step = steps[node] if steps else None
            with open(os.path.join(probe_dir, f"probe.{r}")) as f:
                for line in f:
                    rank, reading = line.split()
                    true_local = shim_inverse(int(reading), rate, step)
                    out.write(f"{rank} {true_local - offset_ns}\n")
    return path


# ---------------------------------------------------------------------------------------------
# The cases. Each takes (build, work directory, options) and returns a Result.

OFFSETS = [0.0, 0.0015]  # the README demo's: node 1 is 1.5 ms ahead
PER_NODE = 2


def finish(result, build, archive, work, truth_offsets=None, truth_probes=None, copy=None):
    """Corrects and compares; copy(build, archive, work), when given, measures more (the
    benchmark's timing of the correction against a plain copy) into result.copy."""
    out = archive + "-corrected"
    result.report, result.correct_exit, result.correct_seconds = correct(build, archive, out)
    result.compare = compare(build, archive, out, lmin_of(result.report), truth_offsets,
                             truth_probes)
    if copy:
        result.copy = copy(build, archive, work)
    return result


def case_pingpong_1host(build, work, opts):
    result = Result("pingpong_1host", "1 host, 2 ranks, 0-byte ping-pong, 1 M messages, default sync")
    archive = os.path.join(work, "pingpong")
    t0 = time.monotonic()
    trace_one_host(build, archive, 2, [build.tool("fidelity_pingpong"), str(opts.get("messages", 1_000_000))])
    result.trace_seconds = time.monotonic() - t0
    return finish(result, build, archive, work, copy=opts.get("copy"))


def case_demo_ring(build, work, opts):
    result = Result("demo_ring", "README demo: pingpong-ring 3, 2 nodes x 2 ranks (0, 1.5 ms), default sync")
    archive = os.path.join(work, "demo")
    t0 = time.monotonic()
    trace_cluster(build, archive, OFFSETS, PER_NODE,
                  [build.path("examples", "pingpong-ring", "pingpong-ring"), "3"])
    result.trace_seconds = time.monotonic() - t0
    return finish(result, build, archive, work)


def case_ring_none(build, work, opts):
    result = Result("ring_none", "pingpong-ring 20, 2 nodes x 2 ranks (0, 1.5 ms), HTRACE_SYNC=none")
    archive = os.path.join(work, "ring-none")
    t0 = time.monotonic()
    trace_cluster(build, archive, OFFSETS, PER_NODE,
                  [build.path("examples", "pingpong-ring", "pingpong-ring"), "20"], sync="none")
    result.trace_seconds = time.monotonic() - t0
    return finish(result, build, archive, work,
                  truth_offsets=node_offsets_ns(OFFSETS, PER_NODE, 2 * PER_NODE))


OFFSETS_4 = [0.0, 0.0015, -0.0023, 0.0007]  # 4 nodes, one behind node 0


def case_ring_none_4nodes(build, work, opts):
    result = Result("ring_none_4nodes", "pingpong-ring 20, 4 nodes x 1 rank (0, 1.5, -2.3, 0.7 ms), "
                    "HTRACE_SYNC=none")
    archive = os.path.join(work, "ring-none-4")
    t0 = time.monotonic()
    trace_cluster(build, archive, OFFSETS_4, 1,
                  [build.path("examples", "pingpong-ring", "pingpong-ring"), "20"], sync="none")
    result.trace_seconds = time.monotonic() - t0
    return finish(result, build, archive, work, truth_offsets=node_offsets_ns(OFFSETS_4, 1, 4))


def case_hpcc_none(build, work, opts):
    result = Result("hpcc_none", "hpcc N=200, 2 nodes x 2 ranks (0, 1.5 ms), HTRACE_SYNC=none")
    archive = os.path.join(work, "hpcc-none")
    run_dir = os.path.join(work, "hpcc-none-run")
    os.makedirs(run_dir, exist_ok=True)
    t0 = time.monotonic()
    trace_cluster(build, archive, OFFSETS, PER_NODE, hpcc_program(run_dir, 2 * PER_NODE),
                  sync="none", cwd=run_dir)
    result.trace_seconds = time.monotonic() - t0
    check_hpcc_output(run_dir)
    return finish(result, build, archive, work,
                  truth_offsets=node_offsets_ns(OFFSETS, PER_NODE, 2 * PER_NODE))


def pwscf_case(build, work, name, description, offsets, per_node):
    """Quantum ESPRESSO on the emulated cluster, HTRACE_SYNC=none: every event's truth is exact."""
    if not pwscf.available():
        raise Skip("Debian's quantum-espresso is not installed")
    result = Result(name, description)
    archive = os.path.join(work, name)
    run_dir = os.path.join(work, name + "-run")
    program = pwscf.prepare(run_dir)
    t0 = time.monotonic()
    # Four ranks that spin while they wait take turns on two cores by the scheduler's quantum in
    # each of pw.x's thousands of collectives (2 min instead of 4 s): waiting ranks yield.
    output = trace_cluster(build, archive, offsets, per_node, program, sync="none", cwd=run_dir,
                           env_extra={"OMPI_MCA_mpi_yield_when_idle": "1"})
    result.trace_seconds = time.monotonic() - t0
    if not pwscf.converged(output.stdout()):
        raise CaseError("pw.x did not converge under the tracer:\n" + output.stdout()[-2000:])
    ranks = per_node * len(offsets)
    return finish(result, build, archive, work,
                  truth_offsets=node_offsets_ns(offsets, per_node, ranks))


def case_pwscf_none(build, work, opts):
    return pwscf_case(build, work, "pwscf_none", "Quantum ESPRESSO pw.x, 2 nodes x 1 rank "
                      "(0, 1.5 ms), HTRACE_SYNC=none", OFFSETS, 1)


def case_pwscf_none_2pn(build, work, opts):
    return pwscf_case(build, work, "pwscf_none_2pn", "Quantum ESPRESSO pw.x, 2 nodes x 2 ranks "
                      "(0, 1.5 ms), HTRACE_SYNC=none", OFFSETS, PER_NODE)


def case_pwscf_none_4nodes(build, work, opts):
    return pwscf_case(build, work, "pwscf_none_4nodes", "Quantum ESPRESSO pw.x, 4 nodes x 1 rank "
                      "(0, 1.5, -2.3, 0.7 ms), HTRACE_SYNC=none", OFFSETS_4, 1)


DRIFT_RATES = [0.0, 20e-6]  # node 1's clock runs 20 ppm fast


def probe_run(build, work, result, name, offsets, per_node, seconds, rates=None, steps=None,
              env_extra=None, period_us=None):
    """fidelity_probe for `seconds` on the emulated cluster (a barrier every period_us, default
    1 ms), traced into work/name; returns the archive and the file of its barriers' true times
    (probe_truth). result.clocks: the run summary's clock measurements."""
    archive = os.path.join(work, name)
    probe_dir = os.path.join(work, name + "-probes")
    shutil.rmtree(probe_dir, ignore_errors=True)
    os.makedirs(probe_dir)
    t0 = time.monotonic()
    program = [build.tool("fidelity_probe"), probe_dir, str(seconds)]
    if period_us:
        program.append(str(period_us))
    output = trace_cluster(build, archive, offsets, per_node, program, rates=rates, steps=steps,
                           env_extra=env_extra, timeout=seconds + 240)
    result.trace_seconds = time.monotonic() - t0
    result.clocks = clock_summary(output)
    truth = probe_truth(probe_dir, len(offsets) * per_node, offsets, per_node,
                        rates or [0.0] * len(offsets), os.path.join(work, name + "-truth.txt"),
                        steps=steps)
    return archive, truth


def case_drift(build, work, opts):
    seconds = opts.get("drift_seconds", 10)
    result = Result("drift", f"probe {seconds} s, 2 nodes x 2 ranks (0, 1.5 ms), node 1 20 ppm fast, "
                    "default sync")
    if not os.path.exists(build.shim):
        raise CaseError(f"not built: {build.shim}")
    archive, truth = probe_run(build, work, result, "drift", OFFSETS, PER_NODE, seconds,
                               rates=DRIFT_RATES)
    return finish(result, build, archive, work, truth_probes=truth)


def case_raw_4x2(build, work, opts):
    """The tracer's own global clock, uncorrected: node clocks that differ by constant offsets only
    (one physical clock: the true drift is exactly 0), so any slope the sync applies is invented."""
    seconds = opts.get("raw_seconds", 10)
    per_node = 2
    result = Result("raw_4x2", f"probe {seconds} s, 4 nodes x 2 ranks (0, 1.5, -2.3, 0.7 ms), "
                    "default sync, no drift")
    # Eight ranks on two cores: waiting ranks yield, or each barrier waits for scheduler quanta.
    archive, truth = probe_run(build, work, result, "raw-4x2", OFFSETS_4, per_node, seconds,
                               env_extra={"OMPI_MCA_mpi_yield_when_idle": "1"})
    return finish(result, build, archive, work, truth_probes=truth)


STEP_RATE = 20e-6  # node 1's clock runs 20 ppm fast from mid-run on
STEP_INTERVAL_MS = 500  # measurements during the run: a kink costs at most rate * interval / 4


def rate_change_run(build, work, name, seconds, description, change):
    """fidelity_probe for `seconds` on 2 emulated nodes x 1 rank whose node 1 changes its clock
    rate during the run: change(start) gives node 1's (T, R[, D]) for a run whose node 1 clock
    starts at `start`. The trace is corrected with the measurements taken during the run
    (result.compare) and with INIT and FINAL only (result.ends_only)."""
    offsets, per_node = [0.0, 0.0015], 1
    result = Result(name, f"probe {seconds} s, 2 nodes x 1 rank (0, 1.5 ms), node 1's clock "
                    f"{description}, measured every {STEP_INTERVAL_MS} ms")
    if not os.path.exists(build.shim):
        raise CaseError(f"not built: {build.shim}")
    # Node 1's namespace clock is this host's CLOCK_MONOTONIC plus its offset (htrace-cluster-run).
    start = time.monotonic_ns() + round(offsets[1] * 1e9)
    rates, steps = [0.0, 0.0], [None, change(start)]
    archive, truth = probe_run(build, work, result, name.replace("_", "-"), offsets, per_node,
                               seconds, rates=rates, steps=steps,
                               env_extra={"HTRACE_SYNC_INTERVAL_MS": str(STEP_INTERVAL_MS)})
    result.intervals = seconds * 1000 / STEP_INTERVAL_MS
    ends_only = Result(name + "_ends_only", "the same, INIT and FINAL measurements only")
    out = archive + "-ends-only"
    ends_only.report, ends_only.correct_exit, ends_only.correct_seconds = correct(
        build, archive, out, ["--presync-ends-only"])
    ends_only.compare = compare(build, archive, out, lmin_of(ends_only.report), None, truth)
    result.ends_only = ends_only
    return finish(result, build, archive, work, truth_probes=truth)


def case_drift_step(build, work, opts):
    """A drift that steps at mid-run."""
    seconds = opts.get("drift_step_seconds", 60)
    return rate_change_run(build, work, "drift_step", seconds,
                           f"{STEP_RATE * 1e6:g} ppm fast from mid-run on",
                           lambda start: (start + round(seconds / 2 * 1e9), STEP_RATE))


def case_drift_ramp(build, work, opts):
    """A drift that ramps over the middle half of the run, as an oscillator warming up."""
    seconds = opts.get("drift_ramp_seconds", 30)
    return rate_change_run(build, work, "drift_ramp", seconds,
                           f"from 0 to {STEP_RATE * 1e6:g} ppm fast over the middle half",
                           lambda start: (start + round(seconds / 4 * 1e9), STEP_RATE,
                                          round(seconds / 2 * 1e9)))


STEP_OFFSETS = [0.0, 5.0]  # node clocks 5 s apart


def step_on_defaults(build, work, opts, name, seconds, step_at, period_us):
    """The measurements during the run on default settings (the adaptive interval; opts
    "sync_interval_ms" fixes one instead, for the comparison): fidelity_probe on 2 emulated nodes
    x 2 ranks whose clocks are 5 s apart, node 1's rate stepping by 20 ppm `step_at` s into the
    run, a barrier every period_us. Judged by the spread of the ranks' corrected times of one
    barrier."""
    fixed = opts.get("sync_interval_ms")
    how = f"HTRACE_SYNC_INTERVAL_MS={fixed}" if fixed is not None else "default settings"
    result = Result(name + (f"_fixed{fixed}" if fixed is not None else ""),
                    f"probe every {period_us / 1e6:g} s for {seconds} s, 2 nodes x 2 ranks (0, "
                    f"5 s), node 1's clock {STEP_RATE * 1e6:g} ppm fast from {step_at} s on, {how}")
    if not os.path.exists(build.shim):
        raise CaseError(f"not built: {build.shim}")
    start = time.monotonic_ns() + round(STEP_OFFSETS[1] * 1e9)
    steps = [None, (start + round(step_at * 1e9), STEP_RATE)]
    env = {"HTRACE_SYNC_INTERVAL_MS": str(fixed)} if fixed is not None else {}
    archive, truth = probe_run(build, work, result, name.replace("_", "-"), STEP_OFFSETS, PER_NODE,
                               seconds, rates=[0.0, 0.0], steps=steps, env_extra=env,
                               period_us=period_us)
    return finish(result, build, archive, work, truth_probes=truth)


def case_drift_step_auto(build, work, opts):
    """The rate step on default settings, short enough for ctest: 30 s, the step at 15 s."""
    return step_on_defaults(build, work, opts, "drift_step_auto", opts.get("step_auto_seconds", 30),
                            opts.get("step_auto_at", 15), 250_000)


def case_drift_step_auto_61s(build, work, opts):
    """The issue's run: 61 s, the step after 32 s, a probe once a second."""
    return step_on_defaults(build, work, opts, "drift_step_auto_61s", 61, 32, 1_000_000)


def adaptive_schedule(seconds):
    """When the adaptive interval measures a steady clock within `seconds` of MPI_Init: 2 s, 2 s,
    then 1.5 times the previous interval, at most 60 s (libtrace/clock/run_interval.h)."""
    times, t, interval = [], 0.0, 2.0
    while t + interval <= seconds:
        t += interval
        times.append(t)
        if len(times) > 1:
            interval = min(60.0, interval * 1.5)
    return times


def case_steady_auto(build, work, opts):
    """Steady clocks on default settings: how many measurements the adaptive interval takes and
    what share of the run they cost (the summary's count); 2 nodes x 2 ranks, 5 s apart."""
    seconds = opts.get("steady_seconds", 40)
    result = Result("steady_auto", f"probe every 0.25 s for {seconds} s, 2 nodes x 2 ranks (0, 5 s), "
                    "no drift, default settings")
    archive, truth = probe_run(build, work, result, "steady-auto", STEP_OFFSETS, PER_NODE, seconds,
                               period_us=250_000)
    result.intervals = len(adaptive_schedule(seconds))
    return finish(result, build, archive, work, truth_probes=truth)


def case_hpcc_1host(build, work, opts):
    result = Result("hpcc_1host", "hpcc N=200, 1 host, 4 ranks, default sync")
    archive = os.path.join(work, "hpcc-1host")
    run_dir = os.path.join(work, "hpcc-1host-run")
    os.makedirs(run_dir, exist_ok=True)
    t0 = time.monotonic()
    trace_one_host(build, archive, 4, hpcc_program(run_dir, 4), cwd=run_dir)
    result.trace_seconds = time.monotonic() - t0
    check_hpcc_output(run_dir)
    return finish(result, build, archive, work, copy=opts.get("copy"))


CASES = {
    "pingpong_1host": case_pingpong_1host,
    "demo_ring": case_demo_ring,
    "ring_none": case_ring_none,
    "ring_none_4nodes": case_ring_none_4nodes,
    "hpcc_none": case_hpcc_none,
    "drift": case_drift,
    "drift_step": case_drift_step,
    "drift_ramp": case_drift_ramp,
    "hpcc_1host": case_hpcc_1host,
    "raw_4x2": case_raw_4x2,
    "drift_step_auto": case_drift_step_auto,
    "drift_step_auto_61s": case_drift_step_auto_61s,
    "steady_auto": case_steady_auto,
    "pwscf_none": case_pwscf_none,
    "pwscf_none_2pn": case_pwscf_none_2pn,
    "pwscf_none_4nodes": case_pwscf_none_4nodes,
}


# ---------------------------------------------------------------------------------------------
# The ground-truth bounds, per case: a list of (what, holds). The tests assert them; the bench shows them.

def bound_vs_truth(result):
    """Per world rank: (htrace-correct's clock error bound, its expected clock error (None when
    unknown), the largest |error| against the truth after correction) for ranks with a bound; a
    master thread's location id is its rank."""
    clocks = {c["location"]: c for c in result.report.get("location_clocks", [])}
    errors = result.compare.get("truth", {}).get("max_by_rank_ns", {})
    return {int(r): (clocks[int(r)]["clock_error_ns"], clocks[int(r)].get("expected_clock_error_ns"), e)
            for r, e in errors.items()
            if int(r) in clocks and clocks[int(r)]["clock_error_ns"] is not None}


def violations(report, key):
    return sum(report.get(key, {}).values())


def repaired(result):
    """Every violation repaired: htrace-correct's own count, and the independent reader's."""
    r, c = result.report, result.compare
    return [
        (f"htrace-correct exit 0 (got {result.correct_exit}) and violations_after all zero: "
         f"{r.get('violations_after')}", result.correct_exit == 0 and violations(r, "violations_after") == 0),
        (f"no receive before its send after correction (fidelity_compare: "
         f"{c['p2p_out']['receive_before_send']})", c["p2p_out"]["receive_before_send"] == 0),
    ]


def error_bounds(err, p99_ns, max_ns):
    return [
        (f"error vs truth p99 {err.get('p99')} ns <= {p99_ns} ns", err.get("p99", 1 << 62) <= p99_ns),
        (f"error vs truth max {err.get('max')} ns <= {max_ns} ns", err.get("max", 1 << 62) <= max_ns),
    ]


def median_bounds(truth, limit_ns, what=""):
    """The median |error| and every rank's own median (one node's ranks alone could make the
    overall median small)."""
    err = truth.get("abs_error_ns", {})
    worst = truth.get("worst_location_median_ns", 1 << 62)
    return [
        (f"{what}median error at the probes {err.get('median')} ns <= {limit_ns} ns",
         err.get("median", 1 << 62) <= limit_ns),
        (f"{what}every rank's median error <= {limit_ns} ns (worst: rank "
         f"{truth.get('worst_location_rank')}, {worst} ns)", worst <= limit_ns),
    ]


def bounds(result):
    r, c = result.report, result.compare
    truth = c.get("truth", {})
    err = truth.get("abs_error_ns", {})
    checks = []
    if result.case in ("pingpong_1host", "hpcc_1host"):
        checks += [
            (f"the input has no receive before its send (fidelity_compare: "
             f"{c['p2p_in']['receive_before_send']})", c["p2p_in"]["receive_before_send"] == 0),
            (f"no message reported violated: violations_before {r.get('violations_before')}",
             violations(r, "violations_before") == 0),
            (f"max |displacement| {c['abs_displacement_ns']['max']} ns <= 1000 ns",
             c["abs_displacement_ns"]["max"] <= 1000),
        ]
        if result.case == "pingpong_1host":
            checks.append((f">= 1 M messages: {c['messages']}", c["messages"] >= 1_000_000))
    if result.case in ("ring_none", "ring_none_4nodes", "hpcc_none"):
        checks += repaired(result) + error_bounds(err, 10_000, 50_000)
    if result.case == "raw_4x2":
        checks += median_bounds(c.get("truth_in", {}), 1000, "uncorrected: ")
    if result.case.startswith("pwscf_none"):
        lmin = r.get("lmin_ns", {})
        seen, seen_by = lmin.get("observed_bound", {}), lmin.get("observed_by", {})
        checks += repaired(result) + [
            # Collectives across clocks bound l_min as message round trips do: with one rank per node
            # and few messages they are what shows the latency between the nodes.
            (f"the trace bounds the inter-node l_min: {seen.get('mpi_inter')} ns "
             f"({seen_by.get('mpi_inter')})", seen.get("mpi_inter") is not None),
            # p99 was 0.07-0.32 us on a quiet machine (bench/fidelity) and 3.5-4.1 us in three runs
            # beside builds, whose latencies (l_min seen: 8.7-9.6 us) the correction follows;
            # the offsets it removes are 1.5-2.3 ms.
        ] + error_bounds(err, 5000, 10_000)
    if result.case in ("drift_step", "drift_ramp"):
        ends_truth = result.ends_only.compare.get("truth", {})
        raw = c.get("truth_in", {}).get("abs_error_ns", {})
        worst, ends_worst = (t.get("worst_location_median_ns", 1 << 62) for t in (truth, ends_truth))
        counts = [c.get("clock_measurements", 0) for c in r.get("location_clocks", [])]
        ends_counts = [c.get("clock_measurements", 0) for c in result.ends_only.report.get("location_clocks", [])]
        messages = c.get("messages", 0)
        ends_seen = result.ends_only.report.get("lmin_ns", {}).get("observed_bound", {}).get("mpi_inter")
        p2p, ends_p2p = (rep.get("violations_before", {}).get("p2p", 1 << 62)
                         for rep in (r, result.ends_only.report))
        # The change is there: by the end the tracer's own timestamps drift 20 ppm x 30 s = 600 us
        # after the step, 20 ppm x 15 s = 300 us after the ramp.
        raw_min = 300_000 if result.case == "drift_step" else 150_000
        checks += [
            (f"before correction: max error {raw.get('max')} ns >= {raw_min} ns", raw.get("max", 0) >= raw_min),
            # About one measurement per interval: pacing gone wrong leaves gaps of seconds (half
            # the count or less), where a kink costs tens of microseconds. A measurement waits for
            # the next collective, which a loaded machine delays: 91 of 120 beside three builds.
            (f"clock measurements per location {counts}, about {result.intervals:g} (one per interval)",
             bool(counts) and min(counts) >= 0.6 * result.intervals),
            (f"INIT and FINAL only: measurements per location {ends_counts}",
             bool(ends_counts) and max(ends_counts) == 2),
            (f"median error at the probes {err.get('median')} ns <= 1000 ns", err.get("median", 1 << 62) <= 1000),
            (f"every rank's median error <= 1000 ns (worst: {worst} ns)", worst <= 1000),
            # The tail: a probe's own jitter under load reaches microseconds; the reference rank
            # alone, whose clock neither drifts nor steps, was 6.5 us off at its worst probe in a
            # CI run beside other tests (its clock error bound: 0).
            (f"error at the probes p99 {err.get('p99')} ns <= 5000 ns, max {err.get('max')} ns <= 10000 ns",
             err.get("p99", 1 << 62) <= 5000 and err.get("max", 1 << 62) <= 10_000),
            # fidelity_compare leaves out an Enter that came late after its probe reading (a
            # preemption in between, over 2 us): 2-4 of about 107,000 on a quiet machine, 34 of
            # 15,480 beside three builds; 1 % still leaves the error figures thousands of points.
            (f"probes left out as delayed: {truth.get('probe_delays')} <= 1 % of {truth.get('points')}",
             truth.get("probe_delays", 1 << 62) * 100 <= truth.get("points", 0)),
            # What the measurements during the run are for: without them (INIT and FINAL
            # interpolated) the drift leaves about half the messages, one direction's, violating
            # the clock condition, which the CLC must then repair; with them, almost none.
            (f"p2p clock condition violations before correction: {p2p} of {messages} messages "
             f"<= 1 %; INIT and FINAL only: {ends_p2p} >= 25 % (worst rank's median error after "
             f"correction {ends_worst} ns, against {worst} ns)",
             p2p * 100 <= messages and ends_p2p * 4 >= messages > 0),
            # With INIT and FINAL only the offset left after pre-synchronization changes by
            # hundreds of us over the run; the trace's round trips must still cap l_min (else
            # every fast ping-pong is stretched, by tens of ms over the run).
            (f"INIT and FINAL only: the trace bounds the inter-node l_min: {ends_seen}",
             ends_seen is not None),
        ]
    if result.case == "drift":
        checks += median_bounds(truth, 2000)
    if result.case.startswith("drift_step_auto"):
        spread = truth.get("round_spread_ns", {})
        raw_max = c.get("truth_in", {}).get("abs_error_ns", {}).get("max", 0)
        checks += [
            # The step shows: 20 ppm for the half of the run after it.
            (f"before correction: max error {raw_max} ns >= 100 us", raw_max >= 100_000),
            (f"the clock measurements came with the adaptive interval: {result.clocks}",
             result.clocks.get("interval") == "adaptive" or result.case.find("_fixed") > 0),
            # The ranks' corrected times of one barrier, after one affine fit to the truth. The
            # target is 1 us in the median barrier (bench/fidelity: 0.66-0.77 us in three runs),
            # but the ranks do not leave a barrier at one instant: with steady clocks the spread
            # alone was 0.55-1.06 us, and 1.08 us once in a quiet CI run with the step. So 2 us
            # here; the old fixed 60 s interval left 48-50 us.
            (f"spread of one barrier's corrected times: median {spread.get('median')} ns <= 2000 ns "
             f"over {spread.get('rounds')} barriers", spread.get("median", 1 << 62) <= 2000),
            (f"spread of one barrier's corrected times: p90 {spread.get('p90')} ns <= 5000 ns",
             spread.get("p90", 1 << 62) <= 5000),
            # A probe whose Enter a preemption delayed is left out: 6 % of them with the machine's
            # load at 50; more would leave too few barriers to judge.
            (f"probes left out as delayed: {truth.get('probe_delays')} <= 15 % of {truth.get('points')}",
             truth.get("probe_delays", 1 << 62) * 100 <= 15 * truth.get("points", 0)),
        ]
    if result.case == "steady_auto":
        counts = [x.get("clock_measurements", 0) for x in r.get("location_clocks", [])]
        # 2, 4, 7, 11.5, 18.25, 28.4 s ... (adaptive_schedule), each at the next barrier after
        # it, so the last may fall past the end: 6 in 40 s, or 5; an interval that shrank on a
        # steady clock gives more. Plus MPI_Init's and MPI_Finalize's in the archive.
        expected = int(result.intervals)
        checks += [
            (f"the summary counts the measurements during the run: {result.clocks}, "
             f"{expected - 1}-{expected} expected",
             result.clocks.get("interval") == "adaptive"
             and expected - 1 <= result.clocks.get("count", 0) <= expected),
            (f"the archive holds them: measurements per location {counts}",
             bool(counts) and all(n == result.clocks.get("count", -9) + 2 for n in counts)),
            # Nothing to follow here: the spread is the measurements' and the probes' own noise
            # (median 0.7-1.1 us at load 50), kept as a check that the correction did no harm.
            (f"spread of one barrier's times: median {truth.get('round_spread_ns', {}).get('median')} ns "
             "<= 2000 ns", truth.get("round_spread_ns", {}).get("median", 1 << 62) <= 2000),
        ]
    return checks
