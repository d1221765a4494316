#!/usr/bin/python3
"""One-sided communication and MPI-IO recorded with OTF2's RMA and I/O records.

    rma_io_check.py rma|mpi_io|fortran EXAMPLE HTRACE_CORRECT

Runs examples/rma (3 ranks), examples/mpi-io (2 ranks) or examples/fortran-rma-io (2 ranks, both
kinds of records through `use mpi`) under libhtrace, reads the archive with
the otf2 Python bindings only and compares every RMA or I/O record of every rank, field by field,
with the sequence the example's source describes (windows, targets, bytes, lock types, groups,
files, access modes, operation modes and flags, bytes requested and done). Matching ids are
compared by pairing (each operation completed exactly once at the origin and, for RMA, once at
its target, by the records the program's synchronization implies), not by value. Then htrace-correct corrects the archive: it must exit 0
and its output must carry the same records.
"""
import os
import subprocess
import sys
import tempfile

import otf2

from htrace_test import harness
from htrace_test.archive import anchor_path
from htrace_test.harness import require

ALL = 0xFFFFFFFF  # OTF2_UNDEFINED_UINT32: every rank of the window (lock_all, flush_all)
RMA_KINDS = ("Rma",)
IO_KINDS = ("Io",)


def value(v):
    """A field as plain data: definitions by name (groups by member ranks), enums by name."""
    if isinstance(v, otf2.definitions.Group):
        return tuple(m._ref if hasattr(m, "_ref") else int(m) for m in v.members)
    if isinstance(v, otf2.definitions.IoParadigm):
        return v.identification
    if isinstance(v, (otf2.definitions.RmaWin, otf2.definitions.IoHandle)):
        return v.name
    if isinstance(v, otf2.definitions.IoRegularFile):
        return v.name
    names = getattr(type(v), "_names", None)  # an OTF2 enum or flag set of the bindings
    if names is not None:
        if v.value in names:
            return names[v.value]
        return "|".join(sorted(n for bit, n in names.items() if bit and v.value & bit == bit))
    return v


def fields(event):
    return {k: value(v) for k, v in vars(event).items() if k not in ("time", "attributes")}


def read_records(anchor, prefixes):
    """Per location: [(record type, {field: value})] of the records whose type starts with one of
    `prefixes`, in file order; plus the definitions."""
    per_location = {}
    with otf2.reader.open(anchor) as trace:
        defs = trace.definitions
        for location, event in trace.events:
            name = type(event).__name__
            if name.startswith(prefixes):
                per_location.setdefault(location._ref, []).append((name, fields(event)))
    return defs, per_location


def normalize(records):
    """Matching ids replaced by their order of first appearance per (window or handle), unsuccessful
    tests (RmaOpTest / IoOperationTest, MPI_Win_test's RmaGroupSync NONE) checked to come while
    their operation or epoch is open, then dropped (how many depends on timing)."""
    out, names, completed, remote, rma = [], {}, set(), set(), set()
    for kind, f in records:
        if kind == "RmaGroupSync" and f["sync_level"] == "NONE":  # an unsuccessful MPI_Win_test
            require(out and out[-1][0] == "RmaGroupSync" and out[-1][1]["group"] == f["group"],
                    f"unsuccessful MPI_Win_test outside an exposure epoch: {f}")
            continue
        if "matching_id" in f:
            scope = f.get("win", f.get("handle"))
            key = (scope, f["matching_id"])
            if kind.startswith("Rma"):
                rma.add(key)
            if kind in ("RmaOpTest", "IoOperationTest"):
                require(key in names and key not in completed,
                        f"{kind} of an operation that is not pending: {f}")
                continue
            if kind == "RmaOpCompleteRemote":
                require(key in names and key not in remote,
                        f"{kind} completes an unknown or remotely completed operation: {f}")
                remote.add(key)
            elif kind.startswith(("RmaOpComplete", "IoOperationComplete")):
                require(key in names and key not in completed,
                        f"{kind} completes an unknown or completed operation: {f}")
                completed.add(key)
            names.setdefault(key, len([k for k in names if k[0] == scope]) + 1)
            f = dict(f, matching_id=names[key])
        out.append((kind, f))
    started = set(names)
    require(started == completed, f"operations never completed: {sorted(started - completed)}")
    require(remote == rma, f"RMA operations never completed at their target: {sorted(rma - remote)}")
    return out


def compare(rank, got, want):
    for i, (g, w) in enumerate(zip(got, want)):
        require(g == w, f"rank {rank}, record {i}: got {g}\n  expected {w}\n  all records: {got}")
    require(len(got) == len(want), f"rank {rank}: {len(got)} records, expected {len(want)}:\n"
            f"  got {got[len(want):]}\n  missing {want[len(got):]}")


# ---- expectations, derived from the examples' descriptions ----

def rma_expected(rank, size):
    A, B = "MPI_Win_allocate", "pscw window"  # B: named by MPI_Win_set_name
    right, left = (rank + 1) % size, (rank + size - 1) % size
    both = "PROCESS|MEMORY"

    def begin():
        return ("RmaCollectiveBegin", {})

    def end(op, level, win):
        return ("RmaCollectiveEnd", dict(collective_op=op, sync_level=level, win=win, root=ALL,
                                         bytes_sent=0, bytes_received=0))

    def put(win, remote, n, m):
        return ("RmaPut", dict(win=win, remote=remote, bytes=n, matching_id=m))

    def get(win, remote, n, m):
        return ("RmaGet", dict(win=win, remote=remote, bytes=n, matching_id=m))

    def atomic(win, remote, kind, sent, received, m):
        return ("RmaAtomic", dict(win=win, remote=remote, type=kind, bytes_sent=sent,
                                  bytes_received=received, matching_id=m))

    def done(win, m, blocking=True):
        kind = "RmaOpCompleteBlocking" if blocking else "RmaOpCompleteNonBlocking"
        return (kind, dict(win=win, matching_id=m))

    def at_target(win, m):
        return ("RmaOpCompleteRemote", dict(win=win, matching_id=m))

    def full(win, m):  # a synchronization that completes the operation at origin and target
        return [done(win, m), at_target(win, m)]

    def group_sync(level, win, members):
        return ("RmaGroupSync", dict(sync_level=level, win=win, group=tuple(members)))

    r = [begin(), ("RmaWinCreate", dict(win=A)), end("CREATE_HANDLE_AND_ALLOCATE", "NONE", A)]
    # 1. fence epoch
    r += [begin(), end("BARRIER", both, A),
          put(A, right, 16, 1), get(A, left, 8, 2), atomic(A, 0, "ACCUMULATE", 4, 0, 3),
          begin(), *full(A, 1), *full(A, 2), *full(A, 3), end("BARRIER", both, A)]
    # 2. PSCW on the created window
    r += [begin(), ("RmaWinCreate", dict(win=B)), end("CREATE_HANDLE", "NONE", B)]
    if rank == 0:
        peers = list(range(1, size))
        r += [group_sync("PROCESS", B, peers)]
        r += [put(B, t, 32, t) for t in peers]
        r += [record for t in peers for record in full(B, t)]
        r += [group_sync(both, B, peers)]
    else:
        r += [group_sync("PROCESS", B, [0]), group_sync(both, B, [0])]
    # 3. passive target
    m = 4
    if rank == 0:
        r += [("RmaRequestLock", dict(win=A, remote=1, lock_id=0, lock_type="EXCLUSIVE")),
              put(A, 1, 12, 4), *full(A, 4), ("RmaSync", dict(win=A, remote=1, sync_type="MEMORY")),
              get(A, 1, 4, 5), *full(A, 5), ("RmaReleaseLock", dict(win=A, remote=1, lock_id=0))]
        m = 6
    r += [("RmaRequestLock", dict(win=A, remote=ALL, lock_id=0, lock_type="SHARED")),
          atomic(A, 0, "FETCH_AND_ADD", 4, 4, m), atomic(A, 0, "COMPARE_AND_SWAP", 8, 4, m + 1),
          put(A, right, 8, m + 2), done(A, m + 2, blocking=False),
          get(A, 0, 4, m + 3), done(A, m + 3, blocking=False),
          # MPI_Win_flush_all: the request-based ones completed at the origin already
          *full(A, m), *full(A, m + 1), at_target(A, m + 2), at_target(A, m + 3),
          ("RmaSync", dict(win=A, remote=ALL, sync_type="MEMORY")),
          ("RmaReleaseLock", dict(win=A, remote=ALL, lock_id=0))]
    # MPI_Win_free(created), MPI_Win_free(allocated)
    r += [begin(), end("DESTROY_HANDLE", both, B), ("RmaWinDestroy", dict(win=B))]
    r += [begin(), end("DESTROY_HANDLE_AND_DEALLOCATE", both, A), ("RmaWinDestroy", dict(win=A))]
    return r


def io_expected(rank, size):
    H, own = "mpi_io_example.dat", f"mpi_io_rank{rank}.dat"
    n = [0]

    def op(handle, mode, flags, requested, result, issued=False):
        n[0] += 1
        m = n[0] if handle == H else 1
        records = [("IoOperationBegin", dict(handle=handle, mode=mode, operation_flags=flags,
                                             bytes_request=requested, matching_id=m))]
        if issued:
            records.append(("IoOperationIssued", dict(handle=handle, matching_id=m)))
        records.append(("IoOperationComplete", dict(handle=handle, bytes_result=result,
                                                    matching_id=m)))
        return records

    r = [("IoCreateHandle", dict(handle=H, mode="READ_WRITE", creation_flags="CREATE",
                                 status_flags="NONE"))]
    r += op(H, "WRITE", "NONE", 1024, 1024)
    r += op(H, "WRITE", "COLLECTIVE", 256, 256)
    r += op(H, "FLUSH", "COLLECTIVE", 0, 0)
    r += op(H, "WRITE", "NON_BLOCKING", 128, 128, issued=True)
    r += op(H, "FLUSH", "COLLECTIVE", 0, 0)
    r += [("IoSeek", dict(handle=H, offset_request=rank * 1024, whence="FROM_START",
                          offset_result=rank * 1024))]
    r += op(H, "READ", "NONE", 512, 512)
    r += op(H, "READ", "NON_BLOCKING|COLLECTIVE", 100, 100, issued=True)
    r += op(H, "READ", "NON_BLOCKING", 64, 64, issued=True)
    r += op(H, "READ", "NONE", 4096, 100)
    r += [("IoDestroyHandle", dict(handle=H))]
    if rank == 0:
        r += [("IoDeleteFile", dict(io_paradigm="MPI-IO", file=H))]
    r += [("IoCreateHandle", dict(handle=own, mode="WRITE_ONLY", creation_flags="CREATE",
                                  status_flags="DELETE_ON_CLOSE"))]
    r += op(own, "WRITE", "NONE", 10, 10)
    r += [("IoDeleteFile", dict(io_paradigm="MPI-IO", file=own)),  # MPI_MODE_DELETE_ON_CLOSE
          ("IoDestroyHandle", dict(handle=own))]
    return r


def fortran_expected(rank, size):
    W, H = "MPI_Win_create", "fortran_rma_io.dat"
    right = (rank + 1) % size
    both = "PROCESS|MEMORY"

    def end(op, level):
        return ("RmaCollectiveEnd", dict(collective_op=op, sync_level=level, win=W, root=ALL,
                                         bytes_sent=0, bytes_received=0))

    begin = ("RmaCollectiveBegin", {})
    r = [begin, ("RmaWinCreate", dict(win=W)), end("CREATE_HANDLE", "NONE"),
         begin, end("BARRIER", both),
         ("RmaPut", dict(win=W, remote=right, bytes=16, matching_id=1)),
         begin, ("RmaOpCompleteBlocking", dict(win=W, matching_id=1)),
         ("RmaOpCompleteRemote", dict(win=W, matching_id=1)), end("BARRIER", both),
         ("RmaRequestLock", dict(win=W, remote=0, lock_id=0, lock_type="SHARED")),
         ("RmaGet", dict(win=W, remote=0, bytes=4, matching_id=2)),
         ("RmaOpCompleteBlocking", dict(win=W, matching_id=2)),
         ("RmaOpCompleteRemote", dict(win=W, matching_id=2)),
         ("RmaReleaseLock", dict(win=W, remote=0, lock_id=0)),
         begin, end("DESTROY_HANDLE", both), ("RmaWinDestroy", dict(win=W))]
    r += [("IoCreateHandle", dict(handle=H, mode="READ_WRITE", creation_flags="CREATE",
                                  status_flags="NONE"))]
    for m, (mode, flags, n) in enumerate([("WRITE", "NONE", 64), ("FLUSH", "COLLECTIVE", 0),
                                          ("FLUSH", "COLLECTIVE", 0), ("READ", "COLLECTIVE", 64)], 1):
        r += [("IoOperationBegin", dict(handle=H, mode=mode, operation_flags=flags,
                                        bytes_request=n, matching_id=m)),
              ("IoOperationComplete", dict(handle=H, bytes_result=n, matching_id=m))]
    r += [("IoDestroyHandle", dict(handle=H))]
    if rank == 0:
        r += [("IoDeleteFile", dict(io_paradigm="MPI-IO", file=H))]
    return r


def flags_text(v):
    """'A|B' for a flag set, in a fixed order."""
    return "|".join(sorted(v.split("|")))


def canonical(records):
    """Flag sets in a fixed order on both sides."""
    out = []
    for kind, f in records:
        f = {k: (flags_text(v) if isinstance(v, str) and "|" in v else v) for k, v in f.items()}
        out.append((kind, f))
    return out


def check_definitions(kind, defs, size):
    if kind == "fortran":
        wins = [(w.name, w.comm.name) for w in defs.rma_wins]
        handles = [(h.name, h.file.name, h.comm.name) for h in defs.io_handles]
        require(wins == [("MPI_Win_create", "MPI_COMM_WORLD")], f"window definitions: {wins}")
        require(handles == [("fortran_rma_io.dat",) * 2 + ("MPI_COMM_WORLD",)],
                f"I/O handles: {handles}")
        return
    if kind == "rma":
        wins = {w.name: w.comm.name for w in defs.rma_wins}
        require(wins == {"MPI_Win_allocate": "MPI_COMM_WORLD", "pscw window": "MPI_COMM_WORLD"},
                f"window definitions: {wins}")
        return
    paradigms = [p.identification for p in defs.io_paradigms]
    require(paradigms == ["MPI-IO"], f"I/O paradigms: {paradigms}")
    files = sorted(f.name for f in defs.io_files)
    want = sorted(["mpi_io_example.dat"] + [f"mpi_io_rank{r}.dat" for r in range(size)])
    require(files == want, f"files: {files}, expected {want}")
    handles = sorted((h.name, h.file.name, h.comm.name) for h in defs.io_handles)
    want = sorted([("mpi_io_example.dat", "mpi_io_example.dat", "MPI_COMM_WORLD")] +
                  [(f"mpi_io_rank{r}.dat", f"mpi_io_rank{r}.dat", "MPI_COMM_SELF")
                   for r in range(size)])
    require(handles == want, f"I/O handles: {handles}, expected {want}")


def check_archive(kind, anchor, size):
    prefixes = {"rma": RMA_KINDS, "mpi_io": IO_KINDS, "fortran": RMA_KINDS + IO_KINDS}[kind]
    defs, per_location = read_records(anchor, prefixes)
    check_definitions(kind, defs, size)
    expected = {"rma": rma_expected, "mpi_io": io_expected, "fortran": fortran_expected}[kind]
    normalized = {}
    for rank in range(size):
        got = canonical(normalize(per_location.get(rank, [])))
        compare(rank, got, canonical(expected(rank, size)))
        normalized[rank] = got
    return normalized


def main():
    kind, program, correct = sys.argv[1], sys.argv[2], sys.argv[3]
    size = 3 if kind == "rma" else 2

    def test():
        run = harness.mpirun(program, np=size)
        require(run.returncode == 0, f"traced run failed\n{run.describe()}")
        require(f"ok ranks={size}" in run.output.stdout(), f"the example reports wrong results\n{run.describe()}")
        archive = run.archive()
        harness.check_clean(archive)
        anchor = anchor_path(archive)
        before = check_archive(kind, anchor, size)
        # htrace-correct carries the records through and finds nothing to report for them.
        out = os.path.join(tempfile.mkdtemp(prefix="htrace-rma-io-"), "corrected")
        harness._workdirs.append(os.path.dirname(out))
        done = subprocess.run([correct, archive, out], capture_output=True, text=True, timeout=120)
        require(done.returncode == 0, f"htrace-correct exit {done.returncode}\n{done.stdout}{done.stderr}")
        after = check_archive(kind, anchor_path(out), size)
        require(after == before, "htrace-correct changed the records")

    sys.argv = [sys.argv[0], kind]  # harness.main picks the test by name
    return harness.main({kind: test})


if __name__ == "__main__":
    sys.exit(main())
