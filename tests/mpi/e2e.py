#!/usr/bin/python3
"""End-to-end tests: trace the example programs under mpirun with libhtrace preloaded and read the
archives back with tests/lib/trace_check.py (an independent reader). One test per invocation:

    e2e.py TEST_NAME

Every assertion is on a real outcome: the program's own result line (messages it sent, OK) against
what the archive holds. What the ranks said is read from files (htrace_test.rank_output), never
from what mpirun forwarded.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from htrace_test.harness import check_clean, example, main, mpirun, require
from htrace_test.hpcc import HPCC, hpcc_input, succeeded as hpcc_succeeded
from htrace_test.rank_output import RankOutput

STANDARD_OPS = {"BARRIER", "BCAST", "GATHER", "GATHERV", "SCATTER", "SCATTERV", "ALLGATHER",
                "ALLGATHERV", "ALLTOALL", "ALLTOALLV", "ALLTOALLW", "REDUCE", "ALLREDUCE",
                "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK", "SCAN", "EXSCAN"}


def traced_ok(program, args=(), np=2, env=None, preload="x", **expect):
    """Runs a traced program that must succeed; returns (run, report of its one clean archive)."""
    run = mpirun(program, args, np=np, env=env, preload=preload)
    require(run.returncode == 0 and " OK" in run.output.stdout(), f"traced program failed:\n{run.describe()}")
    report = check_clean(run.archive(), **expect)
    return run, report


def check_wildcard_sources(report, np, per_sender):
    """pingpong-ring and the Fortran programs: rank 0 receives tag 100 + s from rank s through
    MPI_ANY_SOURCE/MPI_ANY_TAG with MPI_STATUS_IGNORE; the trace must show the real source."""
    wild = [r for r in report.receive_records if r["receiver"] == 0 and 100 <= r["tag"] < 200]
    require(len(wild) == per_sender * (np - 1),
            f"expected {per_sender * (np - 1)} wildcard receives on rank 0, found {len(wild)}: {wild}")
    wrong = [r for r in wild if r["sender"] != r["tag"] - 100]
    require(not wrong, f"wildcard receives with the wrong source: {wrong}")


def check_one_location_per_rank(report, np):
    require(report.location_ids == {r: [r] for r in range(np)},
            f"expected location id r for each rank r < {np}: {report.location_ids}")


def check_mpi_regions(report, *names):
    missing = [n for n in names if n not in report.mpi_regions]
    require(not missing, f"MPI regions missing from the archive: {missing} (have {report.mpi_regions})")


def pingpong_ring(np):
    def test():
        program = example("pingpong-ring/pingpong-ring")
        run, report = traced_ok(program, [2], np=np, expect_locations=np, expect_processes=np)
        require(len(report.messages) == run.output_field("messages"),
                f"{len(report.messages)} messages in the trace, the program sent {run.output_field('messages')}")
        check_wildcard_sources(report, np, per_sender=2 * 2)
        check_one_location_per_rank(report, np)
        check_mpi_regions(report, "MPI_Init", "MPI_Finalize", "MPI_Send", "MPI_Recv", "MPI_Ssend",
                          "MPI_Bsend", "MPI_Rsend", "MPI_Isend", "MPI_Irecv", "MPI_Waitall",
                          "MPI_Waitany", "MPI_Waitsome", "MPI_Testany", "MPI_Testsome", "MPI_Testall",
                          "MPI_Start", "MPI_Startall", "MPI_Sendrecv", "MPI_Sendrecv_replace",
                          "MPI_Probe", "MPI_Mprobe", "MPI_Mrecv", "MPI_Improbe", "MPI_Imrecv",
                          "MPI_Request_free", "MPI_Cancel", "MPI_Allreduce")
        # Probed messages have rank * 4 bytes: the recorded size is the real one.
        probed = [r for r in report.receive_records if r["receiver"] == 0 and r["tag"] in (20, 21, 22)]
        require(len(probed) == 3 * 2 * (np - 1) and all(r["size"] == 4 * r["sender"] for r in probed),
                f"probed receives with wrong size or count: {probed}")
        require(report.event_counts.get("MpiRequestCancelled", 0) == 2 * np,
                f"expected {2 * np} MpiRequestCancelled records: {report.event_counts}")
        world = report.collectives.get("MPI_COMM_WORLD", {})
        require(world.get("ALLREDUCE") == {str(r): 2 for r in range(np)},
                f"MPI_Allreduce counts on MPI_COMM_WORLD: {world}")
        # The tracer's own traffic (archive agreement, clock sync) never shows up as user events.
        require(report.comms.get("MPI_COMM_WORLD") == list(range(np)), f"world: {report.comms}")
        start = report.start_date_ns / 1e9
        require(abs(start - time.time()) < 3600, f"ClockProperties start date {start} is not today")
    return test


def collectives():
    np = 3
    run, report = traced_ok(example("collectives/collectives"), np=np)
    world = report.collectives.get("MPI_COMM_WORLD", {})
    expected = {op: 2 for op in STANDARD_OPS}
    expected["ALLGATHER"] = expected["ALLREDUCE"] = 4  # plus the MPI_IN_PLACE forms
    for op, count in expected.items():
        require(world.get(op) == {str(r): count for r in range(np)},
                f"{op} on MPI_COMM_WORLD: expected {count} per rank, found {world.get(op)}")
    require(sum(c for op, per in world.items() if op in STANDARD_OPS for c in per.values())
            == np * run.output_field("world_calls"), f"world collective total: {world}")
    # Neighbourhood collectives run on the Cartesian communicators (created twice, 5 calls each).
    cart = {str(r): 0 for r in range(np)}
    for name, ops in report.collectives.items():
        if name != "MPI_COMM_WORLD":
            for op, per in ops.items():
                if op in STANDARD_OPS:
                    for rank, count in per.items():
                        cart[rank] += count
    require(cart == {str(r): run.output_field("cart_calls") for r in range(np)},
            f"neighbourhood collectives per rank on derived communicators: {cart}")
    check_collective_bytes(report, np)
    require(report.event_counts.get("NonBlockingCollectiveRequest", 0) ==
            report.event_counts.get("NonBlockingCollectiveComplete", 0) == np * (19 + 5),
            f"non-blocking collective records: {report.event_counts}")


def check_collective_bytes(report, np):
    """Per collective instance (same communicator, operation and sequence number on every member):
    one agreed root, and bytes sent by all members == bytes received by all members. MPI_IN_PLACE
    instances of allgather/allreduce move less data than the regular ones."""
    instances = {}
    for r in report.collective_records:
        instances.setdefault((r["comm"], r["op"], r["seq"]), []).append(r)
    conserved = STANDARD_OPS - {"SCAN", "EXSCAN"}  # prefix operations have no such balance
    for (comm, op, seq), records in instances.items():
        if op not in STANDARD_OPS:
            continue
        require(len(records) == np, f"{op} #{seq} on {comm}: {len(records)} records for {np} ranks")
        require(len({r["root"] for r in records}) == 1, f"{op} #{seq} on {comm}: roots differ: {records}")
        if op in ("BCAST", "GATHER", "GATHERV", "SCATTER", "SCATTERV", "REDUCE"):
            require(records[0]["root"] == 0, f"{op} #{seq} on {comm}: root {records[0]['root']}, expected 0")
        if op in conserved:
            sent, received = sum(r["sent"] for r in records), sum(r["received"] for r in records)
            require(sent == received, f"{op} #{seq} on {comm}: {sent} bytes sent, {received} received: {records}")
    for op in ("ALLGATHER", "ALLREDUCE"):
        sizes = {r["sent"] for r in report.collective_records if r["comm"] == "MPI_COMM_WORLD" and r["op"] == op}
        require(len(sizes) == 2, f"{op}: MPI_IN_PLACE not visible in the byte counts: {sorted(sizes)}")


def communicators():
    np = 4
    run, report = traced_ok(example("communicators/communicators"), np=np)
    require(len(report.messages) == run.output_field("messages"),
            f"{len(report.messages)} messages in the trace, the program sent {run.output_field('messages')}")
    # Each message's tag is its sender's world rank: communicator ranks resolved correctly.
    wrong = [m for m in report.messages if m["tag"] != m["sender"]]
    require(not wrong, f"messages whose resolved sender differs from the world rank in the tag: {wrong[:5]}")
    members = list(report.comms.values())
    for expected in ([3, 2, 1, 0], [0, 2], [1, 3], [2, 3], {"local": [0, 2], "remote": [1, 3]}):
        require(expected in members or (isinstance(expected, dict) and
                                        {"local": expected["remote"], "remote": expected["local"]} in members),
                f"no communicator with world ranks {expected}: {report.comms}")


def fortran(program, *regions):
    """ring_mpif (mpif.h, blocking) and ring_usempi (use mpi, non-blocking with request and status
    arrays): every message with its real source, the program's own calls as regions."""
    def test():
        np = 3
        run, report = traced_ok(example(f"fortran/{program}"), np=np, expect_locations=np)
        require(len(report.messages) == run.output_field("messages"),
                f"{len(report.messages)} messages in the trace, the program sent {run.output_field('messages')}")
        check_wildcard_sources(report, np, per_sender=1)
        check_mpi_regions(report, "MPI_Allreduce", "MPI_Bcast", *regions)
        world = report.collectives.get("MPI_COMM_WORLD", {})
        require(world.get("BCAST") == {str(r): 1 for r in range(np)}, f"Fortran MPI_Bcast: {world}")
    return test


def threads():
    np = 2
    run, report = traced_ok(example("threads/threads"), [3, 10], np=np)
    require(len(report.messages) == run.output_field("messages"),
            f"{len(report.messages)} messages in the trace, the program sent {run.output_field('messages')}")
    per_rank = {r: len(ids) for r, ids in report.location_ids.items()}
    require(all(n > 1 for n in per_rank.values()), f"expected several locations per process: {per_rank}")
    check_one_location_per_rank_master = all(r in ids for r, ids in report.location_ids.items())
    require(check_one_location_per_rank_master, f"master location id != world rank: {report.location_ids}")


def plain_preload():
    """LD_PRELOAD in mpirun's own environment: mpirun and orted load the tracer too and must cope."""
    run, report = traced_ok(example("collectives/collectives"), np=2, preload="env", expect_locations=2,
                            expect_processes=2)
    world = report.collectives.get("MPI_COMM_WORLD", {})
    require(world.get("BARRIER") == {"0": 2, "1": 2}, f"collectives on MPI_COMM_WORLD: {world}")


def archive_naming():
    program = example("fortran/ring_mpif")  # small and simple: this test is about file names
    first = mpirun(program, np=2)
    require(first.returncode == 0, first.describe())
    second = mpirun(program, np=2, archive_dir=first.archive_dir)
    require(second.returncode == 0, second.describe())
    archives = first.archives()
    require(len(archives) == 2, f"two runs into one directory must leave two archives: {archives}")
    for path in archives:
        check_clean(path, expect_locations=2)
    named = mpirun(program, np=2, env={"HTRACE_ARCHIVE_NAME": "my-run"})
    require(named.returncode == 0, named.describe())
    require([os.path.basename(a) for a in named.archives()] == ["my-run"],
            f"HTRACE_ARCHIVE_NAME=my-run gave {named.archives()}")
    first_named = named.archives()[0]
    check_clean(first_named)
    # The same name again (without HTRACE_OVERWRITE) must not replace the existing archive.
    before = {f: os.path.getmtime(os.path.join(first_named, f)) for f in os.listdir(first_named)}
    again = mpirun(program, np=2, env={"HTRACE_ARCHIVE_NAME": "my-run"}, archive_dir=named.archive_dir)
    require(again.returncode == 0, again.describe())
    require(len(again.archives()) == 2, f"a second run named my-run must go elsewhere: {again.archives()}")
    after = {f: os.path.getmtime(os.path.join(first_named, f)) for f in os.listdir(first_named)}
    require(before == after, "the existing archive my-run was modified")


def unwritable_dir():
    with tempfile.NamedTemporaryFile() as not_a_directory:
        target = os.path.join(not_a_directory.name, "sub")  # a path below a regular file
        run = mpirun(example("pingpong-ring/pingpong-ring"), np=2, archive_dir=target)
        require(run.returncode == 0 and " OK" in run.output.stdout(),
                f"an unwritable archive directory must not break the program:\n{run.describe()}")
        lines = run.output.log()
        require(len(lines) == 1, f"expected a one-line reason, got:\n{run.describe()}")


def tiny_buffer():
    program = example("pingpong-ring/pingpong-ring")
    big_run, big = traced_ok(program, [10], np=2, env={"HTRACE_BUFFER_SIZE": "64M"})
    # 1 KiB (21 records) fills before the 32 records a conversion ahead (at receives, waits and
    # collectives) waits for: every conversion is at a full buffer.
    _, tiny = traced_ok(program, [10], np=2, env={"HTRACE_BUFFER_SIZE": "1k"}, expect_flushes=True)
    # A 64M record buffer never fills here; the only BufferFlush records are those marking a full
    # 256 KiB chunk written inside a call, which a run that polls a lot (MPICH busy-polls on an
    # oversubscribed machine) may fill.
    event_files = glob.glob(os.path.join(big_run.archive(), "traces", "*.evt"))
    chunks = sum(os.path.getsize(f) // (256 * 1024) for f in event_files)
    require(big.buffer_flushes <= chunks,
            f"a 64M buffer should not flush here: {big.buffer_flushes} flushes, {chunks} full chunks")
    # Polling calls (MPI_Test*, MPI_Iprobe, MPI_Improbe) and MPI_Waitsome repeat a timing-dependent
    # number of times; every other region and every non-Enter/Leave record occurs a fixed number of times.
    polling = ("MPI_Test", "MPI_Iprobe", "MPI_Improbe", "MPI_Waitsome")
    counts = lambda r: ({k: v for k, v in r.event_counts.items()
                         if k not in ("BufferFlush", "Enter", "Leave", "MpiRequestTest")},
                        {k: v for k, v in r.region_counts.items() if not k.startswith(polling)})
    require(counts(big) == counts(tiny),
            f"events lost or added by flushing:\n 64M: {counts(big)}\n 1k: {counts(tiny)}")
    require(sum(tiny.region_counts.values()) == tiny.event_counts["Enter"] == tiny.event_counts["Leave"],
            "Enter/Leave totals")


def abnormal_end(mode):
    def test():
        run = mpirun(example("failures/failures"), [mode, 1], np=3, timeout=60)
        require(run.returncode != 0, f"mpirun must report the failure:\n{run.describe()}")
        require(run.seconds < 45, f"took {run.seconds:.1f} s to end after {mode}")
        # The victim says why tracing stopped, in one line, and what it kept.
        reason = "MPI_Abort" if mode == "abort" else "SIGSEGV"
        lines = [l for l in run.output.log() if l.startswith("htrace[1]") and reason in l]
        require(len(lines) == 1, f"expected one htrace line from rank 1 naming {reason}:\n{run.describe()}")
        kept = os.listdir(run.archive_dir)
        require(len(kept) == 1, f"expected the partial archive directory to be kept: {kept}")
        for path in run.archives():  # a complete anchor file would have to be readable
            check_clean(path)
    return test


def disabled():
    run = mpirun(example("pingpong-ring/pingpong-ring"), np=2, env={"HTRACE_ENABLE": "0"})
    require(run.returncode == 0 and " OK" in run.output.stdout(), run.describe())
    require(not os.listdir(run.archive_dir), f"HTRACE_ENABLE=0 wrote {os.listdir(run.archive_dir)}")


def hpcc():
    """A real MPI application nobody on the team wrote (Debian's hpcc) traces and reads back clean."""
    run = mpirun(HPCC, np=2, files={"hpccinf.txt": hpcc_input(2)}, timeout=200)
    require(run.returncode == 0, f"hpcc failed under the tracer:\n{run.describe()}")
    require(hpcc_succeeded(run.workdir), "hpcc did not report Success=1 (its own result check)")
    report = check_clean(run.archive(), expect_locations=2, expect_processes=2)
    require(len(report.messages) > 100 and report.collectives,
            f"too little traffic in hpcc's trace: {len(report.messages)} messages")
    print(f"hpcc: {report.events} events, {len(report.messages)} messages matched, "
          f"{sum(c for ops in report.collectives.values() for per in ops.values() for c in per.values())} "
          f"collective calls, {len(report.comms)} communicators")
    # On one node every rank reads one clock (ClockPropSync verified it): the trace is consistent,
    # so htrace-correct must find no violation and leave every timestamp within 1 us (an l_min above
    # the latencies the trace shows would move events by milliseconds).
    done = subprocess.run([os.environ["HTRACE_CORRECT"], "--check", "--json", run.archive()],
                          capture_output=True, text=True, timeout=300)
    require(done.returncode == 0, f"htrace-correct --check failed ({done.returncode}): {done.stderr}")
    corr = json.loads(done.stdout)
    require(all(v == 0 for v in corr["violations_before"].values()), f"violations in a consistent trace: {corr}")
    require(corr["max_displacement_ns"] <= 1000,
            f"correcting a consistent single-node trace moved events by {corr['max_displacement_ns']} ns")
    print(f"hpcc corrected: {sum(corr['violations_before'].values())} violations before, "
          f"max displacement {corr['max_displacement_ns']} ns, l_min {corr['lmin_ns']}")


# The other MPI's compiler wrapper and launcher: a program built for it gets this build's libhtrace.
OTHER_MPI = {"openmpi": ("mpicc.mpich", ["mpiexec.mpich", "-n", "2", "-genv", "LD_PRELOAD"]),
             "mpich": ("mpicc.openmpi", ["mpirun.openmpi", "--allow-run-as-root", "--oversubscribe", "-np", "2",
                                         "-x", "LD_PRELOAD={}"])}
EXIT_STATUS_PROGRAM = r"""
#include <mpi.h>
#include <stdio.h>
int main(int argc, char** argv) {
  int rank, sum, one = 1;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("sum %d\n", sum);
  /* Written before any rank can end: the launcher kills the others once one exits with 3. */
  fflush(stdout);
  MPI_Finalize();
  return 3;
}
"""


def wrong_mpi():
    """A program of the other MPI with this build's libhtrace preloaded: one line from rank 0 on
    its stderr and in HTRACE_LOG_FILE, the run untraced and complete, the program's own exit
    status, no archive."""
    from htrace_test.mpi import flavor
    compiler, launcher = OTHER_MPI[flavor()]
    if shutil.which(compiler) is None:
        print(f"SKIP: {compiler} is not installed")
        sys.exit(77)
    work = tempfile.mkdtemp(prefix="htrace-wrong-mpi-")
    with open(os.path.join(work, "exit3.c"), "w") as f:
        f.write(EXIT_STATUS_PROGRAM)
    subprocess.run([compiler, "-o", os.path.join(work, "exit3"), os.path.join(work, "exit3.c")], check=True)
    lib = os.environ["HTRACE_LIB"]
    output = RankOutput(os.path.join(work, "output"))
    command = [a.format(lib) for a in launcher] + ([lib] if launcher[-1] == "LD_PRELOAD" else [])
    if launcher[0] == "mpirun.openmpi":  # hydra passes the whole environment on by itself
        command += ["-x", "HTRACE_LOG_FILE"]
    done = subprocess.run(command + output.program([os.path.join(work, "exit3")]), cwd=work,
                          capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, HTRACE_ARCHIVE_DIR=work, HTRACE_LOG_FILE=output.log_file))
    detail = f"{output.describe()}--- launcher\n{done.stdout}{done.stderr}"
    require(done.returncode == 3, f"exit status {done.returncode}, the program's is 3:\n{detail}")
    require(output.stdout().count("sum 2") == 1, f"the program did not run to its end:\n{detail}")
    said = output.log()
    require(len(said) == 1 and said[0].startswith("htrace") and "built for" in said[0]
            and "running it untraced" in said[0], f"expected one line from htrace, got:\n{detail}")
    # What the user sees: the same line, from rank 0 alone, on the ranks' stderr.
    require([line for line in output.stderr().splitlines() if line.startswith("htrace")] == said
            and said[0] in output.stderr(0), f"expected the line on rank 0's stderr only:\n{detail}")
    require(sorted(os.listdir(work)) == ["exit3", "exit3.c", "output"], f"an untraced run wrote {os.listdir(work)}")
    print(said[0])
    shutil.rmtree(work, ignore_errors=True)


def demo():
    """tools/htrace-demo (what `tools/bootstrap demo` runs) traces on the emulated cluster."""
    out = tempfile.mkdtemp(prefix="htrace-demo-")
    script = os.path.join(os.environ["HTRACE_SOURCE_DIR"], "tools", "htrace-demo")
    done = subprocess.run([script, os.environ["HTRACE_BUILD_DIR"], out], capture_output=True, text=True,
                          timeout=120)
    require(done.returncode == 0, f"htrace-demo failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    entries = os.listdir(out)
    archives = sorted(e for e in entries
                      if not e.endswith(("-corrected", "-correction.json", "-corrected-vite", "-report.html")))
    require(len(archives) == 1, f"htrace-demo should leave one archive in {out}: {entries}")
    name = archives[0]
    require(sorted(entries) == sorted([name, name + "-corrected", name + "-correction.json",
                                       name + "-corrected-vite", name + "-report.html"]),
            f"htrace-demo should leave the archive, its correction, the ViTE copy and the reports: {entries}")
    # The command it prints opens the ViTE copy (report_vite: ViTE reads such copies without a warning).
    require(f"vite {os.path.join(out, name)}-corrected-vite/traces.otf2" in done.stdout,
            f"htrace-demo does not say how to view the corrected trace:\n{done.stdout}")
    require(os.path.exists(os.path.join(out, name + "-corrected-vite", "traces.otf2")), "the ViTE copy is written")
    for said in ("what htrace-correct changed, and why", "violations before -> after: p2p",
                 "the controlled logical clock moved"):
        require(said in done.stdout, f"htrace-demo does not say {said!r}:\n{done.stdout}")
    check_clean(os.path.join(out, name), expect_locations=4, expect_processes=4)
    check_clean(os.path.join(out, name + "-corrected"), expect_locations=4)
    shutil.rmtree(out, ignore_errors=True)


TESTS = {
    "demo": demo,
    "wrong_mpi": wrong_mpi,
    "hpcc": hpcc,
    "pingpong_ring_np2": pingpong_ring(2),
    "pingpong_ring_np3": pingpong_ring(3),
    "pingpong_ring_np4": pingpong_ring(4),
    "collectives": collectives,
    "communicators": communicators,
    "fortran_mpif": fortran("ring_mpif", "MPI_Send", "MPI_Recv", "MPI_Comm_split"),
    "fortran_usempi": fortran("ring_usempi", "MPI_Isend", "MPI_Irecv", "MPI_Waitall", "MPI_Waitany",
                              "MPI_Ssend", "MPI_Comm_dup", "MPI_Barrier"),
    "threads": threads,
    "plain_preload": plain_preload,
    "archive_naming": archive_naming,
    "unwritable_dir": unwritable_dir,
    "tiny_buffer": tiny_buffer,
    "abort": abnormal_end("abort"),
    "signal": abnormal_end("signal"),
    "disabled": disabled,
}

if __name__ == "__main__":
    sys.exit(main(TESTS))
