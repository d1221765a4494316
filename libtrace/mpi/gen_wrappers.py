#!/usr/bin/env python3
"""Generates htrace's MPI wrappers from the one function table (mpi_functions.txt).

    gen_wrappers.py TABLE OUTDIR MPI_H FLAVOR FORTRAN_SYMBOLS

writes OUTDIR/function_ids.gen.h   (FunctionId enum, names, families, region roles)
       OUTDIR/wrappers.gen.cpp     (C wrappers: MPI_X calling PMPI_X)
       OUTDIR/fortran.gen.cpp      (Fortran entry points mpi_x_ etc. calling the C wrappers)

The build wraps the table's functions that its MPI's mpi.h (MPI_H) declares, with that header's
parameter types. FLAVOR is openmpi or mpich (cmake/HtraceMpiFlavor.cmake); FORTRAN_SYMBOLS lists
what the MPI's Fortran library exports (`nm -D`), from which fortran_gen.py decides which Fortran
procedures to interpose.

Each table row names a skeleton; a skeleton is a (before, after) pair of C++ snippets placed
around the PMPI call. Snippets refer to the table's parameter names.
All semantics live in hand-written C++ (p2p_events.cpp, collective_info.cpp, comm_registry.cpp);
the snippets only hand the right arguments over."""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mpi_prototypes  # noqa: E402

NS = "htrace::mpi::"
LOCAL_STATUS = ("MPI_Status htrace_status;\n"
                "  if (status == MPI_STATUS_IGNORE) status = &htrace_status;\n")

# skeleton -> (before PMPI, after PMPI). `L` is the caller's Location, `rc` the PMPI result.
SKELETONS = {
    "generic": None,  # Enter/Leave only
    "send": ("{ns}on_send(L, call.entered(), count, datatype, dest, tag, comm);\n", ""),
    # A message cannot leave before its call is entered: sends carry the entry time even where
    # the request handle is only known after the call (the receive is timed at its completion).
    "isend": ("", "if (rc == MPI_SUCCESS) {ns}on_isend(L, call.entered(), count, datatype, dest, tag, comm, *request, false);\n"),
    "send_init": ("", "if (rc == MPI_SUCCESS) {ns}on_isend(L, T, count, datatype, dest, tag, comm, *request, true);\n"),
    "recv": (LOCAL_STATUS, "if (rc == MPI_SUCCESS) {ns}on_recv(L, T, comm, status);\n"),
    "irecv": ("", "if (rc == MPI_SUCCESS) {ns}on_irecv(L, T, source, comm, *request, false);\n"),
    "recv_init": ("", "if (rc == MPI_SUCCESS) {ns}on_irecv(L, T, source, comm, *request, true);\n"),
    "mprobe": ("", "if (rc == MPI_SUCCESS) {ns}on_message(*message, comm);\n"),
    "improbe": ("", "if (rc == MPI_SUCCESS && *flag) {ns}on_message(*message, comm);\n"),
    "iprobe": ("", ""),  # Enter/Leave only, as a poll (POLLS)
    "mrecv": (LOCAL_STATUS + "  const MPI_Message htrace_message = *message;\n",
              "if (rc == MPI_SUCCESS) {ns}on_mrecv(L, T, htrace_message, status);\n"),
    "imrecv": ("const MPI_Message htrace_message = *message;\n",
               "if (rc == MPI_SUCCESS) {ns}on_imrecv(L, T, htrace_message, *request);\n"),
    "sendrecv": (LOCAL_STATUS + "  {ns}on_send(L, call.entered(), sendcount, sendtype, dest, sendtag, comm);\n",
                 "if (rc == MPI_SUCCESS) {ns}on_recv(L, T, comm, status);\n"),
    "sendrecv_replace": (LOCAL_STATUS + "  {ns}on_send(L, call.entered(), count, datatype, dest, sendtag, comm);\n",
                         "if (rc == MPI_SUCCESS) {ns}on_recv(L, T, comm, status);\n"),
    "start": ("", "if (rc == MPI_SUCCESS) {ns}on_start(L, call.entered(), *request);\n"),
    "startall": ("", "if (rc == MPI_SUCCESS) for (int i = 0; i < count; ++i) {ns}on_start(L, call.entered(), array_of_requests[i]);\n"),
    "wait": (LOCAL_STATUS + "  const MPI_Request htrace_request = *request;\n",
             "{ns}on_complete(L, T, htrace_request, status);\n"),
    "test": (LOCAL_STATUS + "  const MPI_Request htrace_request = *request;\n",
             "if (rc == MPI_SUCCESS) {ns}on_test(L, T, htrace_request, *flag != 0, status);\n"),
    "waitany": (LOCAL_STATUS + "  const MPI_Request* htrace_saved = {ns}save_requests(count, array_of_requests);\n",
                "if (*index != MPI_UNDEFINED) {ns}on_complete(L, T, htrace_saved[*index], status);\n"),
    "testany": (LOCAL_STATUS + "  const MPI_Request* htrace_saved = {ns}save_requests(count, array_of_requests);\n",
                "if (rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED) {ns}on_complete(L, T, htrace_saved[*index], status);\n"),
    "waitall": ("const MPI_Request* htrace_saved = {ns}save_requests(count, array_of_requests);\n"
                "  array_of_statuses = {ns}statuses_or_scratch(count, array_of_statuses);\n",
                "for (int i = 0; i < count; ++i) if ({ns}completed_in(rc, array_of_statuses[i])) {ns}on_complete(L, T, htrace_saved[i], &array_of_statuses[i]);\n"),
    "testall": ("const MPI_Request* htrace_saved = {ns}save_requests(count, array_of_requests);\n"
                "  array_of_statuses = {ns}statuses_or_scratch(count, array_of_statuses);\n",
                "if (rc == MPI_SUCCESS && *flag) for (int i = 0; i < count; ++i) {ns}on_complete(L, T, htrace_saved[i], &array_of_statuses[i]);\n"),
    "waitsome": ("const MPI_Request* htrace_saved = {ns}save_requests(incount, array_of_requests);\n"
                 "  array_of_statuses = {ns}statuses_or_scratch(incount, array_of_statuses);\n",
                 "if (*outcount != MPI_UNDEFINED) for (int i = 0; i < *outcount; ++i) if ({ns}completed_in(rc, array_of_statuses[i])) {ns}on_complete(L, T, htrace_saved[array_of_indices[i]], &array_of_statuses[i]);\n"),
    "request_free": ("{ns}on_request_free(L, call.entered(), *request);\n", ""),
    "cancel": ("{ns}on_cancel(*request);\n", ""),
    "coll": ("if ({ns}comm_id({comm}) != htrace::record::kNoComm) L.mpi_collective_begin(call.entered());\n",
             "{ns}on_collective_end(L, T, {ns}coll::{base}({args}), {comm});\n"),
    "nbcoll": ("", "if (rc == MPI_SUCCESS) {ns}on_nbc_request(L, T, {ns}coll::{base}({args_no_request}), {comm}, *request);\n"),
    "comm_create": ("if ({ns}comm_id({parent}) != htrace::record::kNoComm) L.mpi_collective_begin(call.entered());\n",
                    "{ns}on_comm_created(L, T, {parent}, rc == MPI_SUCCESS ? *{newcomm} : MPI_COMM_NULL, \"{name}\", {ns}CreateKind::{create_kind});\n"),
    "comm_free": ("const htrace::record::CommId htrace_freed = {ns}on_comm_freeing(L, call.entered(), *comm);\n",
                  "{ns}on_comm_freed(L, T, htrace_freed);\n"),
}
SKELETONS["testsome"] = SKELETONS["waitsome"]
# One-sided communication (rma_events.cpp) and MPI-IO (io_events.cpp): every record is written
# after the PMPI call, so failed calls and handles only known afterwards need no special case.
SKELETONS.update({
    "win_create": ("", "{ns}on_win_created(L, call.entered(), T, rc, rc == MPI_SUCCESS ? *win : MPI_WIN_NULL, comm, \"{name}\", {ns}WinKind::{win_kind});\n"),
    "win_free": ("const MPI_Win htrace_win = *win;\n", "{ns}on_win_freed(L, call.entered(), T, rc, htrace_win);\n"),
    "win_fence": ("", "{ns}on_win_fence(L, call.entered(), T, rc, win);\n"),
    "win_lock": ("", "{ns}on_win_lock(L, call.entered(), rc, win, {target}, {lock_type});\n"),
    "win_unlock": ("", "{ns}on_win_unlock(L, T, rc, win, {target});\n"),
    "win_flush": ("", "{ns}on_win_flush(L, T, rc, win, {target}, {flush_remote});\n"),
    "win_sync": ("", "{ns}on_win_sync(L, T, rc, win);\n"),
    "win_set_name": ("", "{ns}on_win_named(rc, win, win_name);\n"),
    "win_post": ("", "{ns}on_win_post(L, T, rc, win, group);\n"),
    "win_start": ("", "{ns}on_win_start(L, T, rc, win, group);\n"),
    "win_complete": ("", "{ns}on_win_complete(L, T, rc, win);\n"),
    "win_wait": ("", "{ns}on_win_wait(L, T, rc, win);\n"),
    "win_test": ("", "{ns}on_win_test(L, T, rc, win, rc == MPI_SUCCESS && *flag);\n"),
    "rma": ("", "{ns}on_rma_op(L, call.entered(), rc, win, target_rank, {ns}RmaOp::{rma_op}, {origin_bytes}, {result_bytes}, {rma_mpi_op}, {rma_request});\n"),
    "file_open": ("", "{ns}on_file_open(L, T, rc, comm, filename, amode, rc == MPI_SUCCESS ? *fh : MPI_FILE_NULL);\n"),
    "file_close": ("const MPI_File htrace_file = *fh;\n", "{ns}on_file_close(L, T, rc, htrace_file);\n"),
    "file_delete": ("", "{ns}on_file_delete(L, T, rc, filename);\n"),
    "file_io": (LOCAL_STATUS, "{ns}on_file_io(L, call.entered(), T, rc, fh, {ns}IoMode::{io_mode}, {io_flags}, count, datatype, status);\n"),
    "file_iio": ("", "{ns}on_file_iio(L, call.entered(), T, rc, fh, {ns}IoMode::{io_mode}, {io_flags}, count, datatype, rc == MPI_SUCCESS ? *request : MPI_REQUEST_NULL);\n"),
    "file_split_begin": ("", "{ns}on_file_split_begin(L, call.entered(), T, rc, fh, {ns}IoMode::{io_mode}, count, datatype);\n"),
    "file_split_end": (LOCAL_STATUS, "{ns}on_file_split_end(L, T, rc, fh, status);\n"),
    "file_seek": ("", "{ns}on_file_seek(L, T, rc, fh, offset, whence, {shared});\n"),
    "file_sync": ("", "{ns}on_file_sync(L, call.entered(), T, rc, fh);\n"),
})


def rma_io_fill(fid, names):
    """Per-function values of the RMA and MPI-IO snippets, from the function's name."""
    low = fid.lower()
    rma_op = {"Put": "Put", "Rput": "Put", "Get": "Get", "Rget": "Get", "Accumulate": "Accumulate",
              "Raccumulate": "Accumulate", "Get_accumulate": "GetAccumulate",
              "Rget_accumulate": "GetAccumulate", "Fetch_and_op": "FetchAndOp",
              "Compare_and_swap": "CompareAndSwap"}.get(fid, "")
    origin = NS + "bytes_of(origin_count, origin_datatype)"
    one = NS + "bytes_of(1, datatype)"
    return dict(
        win_kind="Allocate" if fid.startswith("Win_allocate") else
                 "Dynamic" if fid == "Win_create_dynamic" else "Create",
        target="rank" if "rank" in names else "MPI_PROC_NULL",
        lock_type="lock_type" if "lock_type" in names else "MPI_LOCK_SHARED",
        rma_op=rma_op,
        origin_bytes={"FetchAndOp": one, "CompareAndSwap": f"2 * {one}"}.get(rma_op, origin),
        result_bytes={"GetAccumulate": NS + "bytes_of(result_count, result_datatype)",
                      "FetchAndOp": one, "CompareAndSwap": one}.get(rma_op, "0"),
        rma_mpi_op="op" if "op" in names else "MPI_OP_NULL",
        rma_request="rc == MPI_SUCCESS ? *request : MPI_REQUEST_NULL" if "request" in names
                    else "MPI_REQUEST_NULL",
        io_mode="Read" if "read" in low else "Write",
        io_flags=NS + ("kIoCollective" if "_all" in low or "_ordered" in low else "kIoBlocking"),
        shared="true" if low.endswith("_shared") else "false",
        flush_remote="false" if "flush_local" in low else "true",
    )
# Skeletons whose calls are recorded even when HTRACE_MPI_EXCLUDE excludes the function, if this
# condition holds after the PMPI call (they completed a request or matched a message): the later
# records of that request or message need them.
REVEAL = {
    "wait": "htrace_request != MPI_REQUEST_NULL",
    "test": "rc == MPI_SUCCESS && *flag != 0",
    "waitany": "*index != MPI_UNDEFINED",
    "testany": "rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED",
    "waitall": "count > 0",
    "testall": "rc == MPI_SUCCESS && *flag",
    "waitsome": "*outcount != MPI_UNDEFINED && *outcount > 0",
    "testsome": "*outcount != MPI_UNDEFINED && *outcount > 0",
    "improbe": "rc == MPI_SUCCESS && *flag",
}
# Polls: a missed one (it succeeded and found nothing) right after a missed one of the same
# function and key only extends that one's run (Call::record_poll, HTRACE_POLL_RUNS): skeleton ->
# (missed, key of its arguments). Request arrays are keyed by the copy taken before the call.
POLLS = {
    "test": ("rc == MPI_SUCCESS && *flag == 0", "{ns}poll_key(htrace_request)"),
    "testany": ("rc == MPI_SUCCESS && *flag == 0", "{ns}poll_key(count, htrace_saved)"),
    "testall": ("rc == MPI_SUCCESS && *flag == 0", "{ns}poll_key(count, htrace_saved)"),
    "testsome": ("rc == MPI_SUCCESS && *outcount == 0", "{ns}poll_key(incount, htrace_saved)"),
    "iprobe": ("rc == MPI_SUCCESS && *flag == 0", "{ns}poll_key(source, tag, comm)"),
    "improbe": ("rc == MPI_SUCCESS && *flag == 0", "{ns}poll_key(source, tag, comm)"),
}
# Skeletons of calls that may wait for another rank: their wrappers let the recorder convert its
# buffer ahead just before the PMPI call, where the conversion overlaps the wait
# (Call::convert_while_waiting), or, at blocking collectives, where every rank converts in the
# same call (convert_at_collective). Not Sendrecv, whose send starts inside the call: converting
# first would delay the partner. Not MPI_Win_fence, whose records written after the call carry
# its entry time: a BufferFlush record marking a chunk write in the conversion would end after
# them.
MAY_WAIT = {"recv", "mrecv", "wait", "waitany", "waitall", "waitsome", "win_wait"}
COLLECTIVE_WAIT = {"coll"}
# Communicator constructors and destructors keep the communicator registry right: never excluded.
# Likewise windows and files: their later records need the definitions made at creation.
STRUCTURAL = {"comm_create", "comm_free", "win_create", "win_free", "file_open", "file_close"}
UNWRAPPED = {"none", "special"}
# Functions without a C function to wrap (macros in C, or Fortran only): fortran_gen.py alone
# makes their entry points.
FORTRAN_ONLY = "fortran"
ROLES = {"p2p": "PointToPoint", "coll": "Collective", "nbcoll": "Collective", "neighbor": "Collective"}
HEADER = "// generated from {table} by {gen}; do not edit.\n"
# Open MPI's mpi.h declares the MPI-1 functions removed in MPI-3.0 (libmpi and libmpi_mpifh still
# export them: binaries built against older MPIs call them) only on request.
MPI1_DECLS = "#define OMPI_OMIT_MPI1_COMPAT_DECLS 0\n"


def read_table(path):
    rows = []
    for lineno, line in enumerate(open(path), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        family, skeleton, proto = line.split(None, 2)
        if skeleton not in SKELETONS and skeleton not in UNWRAPPED and skeleton != FORTRAN_ONLY:
            sys.exit(f"{path}:{lineno}: error: unknown skeleton '{skeleton}'")
        rows.append((family, skeleton, mpi_prototypes.parse_prototype(proto)))
    return rows


def for_this_mpi(rows, declared):
    """The rows this build wraps: those whose function the MPI's header declares (Fortran-only rows
    are fortran_gen.py's to filter), each with the header's parameter types under the table's
    parameter names (the skeletons' snippets use those)."""
    selected = []
    for family, skeleton, p in rows:
        if skeleton == FORTRAN_ONLY:
            selected.append((family, skeleton, p))
            continue
        header = declared.get(p.name)
        if header is None:
            continue
        if len(header.params) != len(p.params) or header.variadic != p.variadic:
            sys.exit(f"gen_wrappers.py: {p.name}: mpi.h declares {header.signature()}, "
                     f"the table {p.signature()}")
        params = []
        for mine, theirs in zip(p.params, header.params):
            if mpi_prototypes.normalize(mine.type) == mpi_prototypes.normalize(theirs.type):
                params.append(mine)
            else:
                decl = re.sub(rf"\b{theirs.name}\b", mine.name, theirs.decl)
                params.append(mpi_prototypes.Param(decl=decl, name=mine.name, type=theirs.type))
        selected.append((family, skeleton, mpi_prototypes.Prototype(header.ret, p.name, params, p.variadic,
                                                                    header.removed)))
    return selected


def param_list(p):
    return ", ".join(x.decl for x in p.params) or "void"


def wrapper(family, skeleton, p):
    fid = p.name[4:]
    args = ", ".join(x.name for x in p.params)
    reveal = ", true" if skeleton in REVEAL else ""
    if skeleton in POLLS:
        reveal = (", true" if skeleton in REVEAL else ", false") + ", true"
    comms = [x.name for x in p.params if x.type == "MPI_Comm"]
    # Blocking collectives may host a clock measurement, after their Leave: constructed first.
    checkpoint = f"  {NS}ClockCheckpoint checkpoint({comms[-1]});\n" if skeleton in COLLECTIVE_WAIT else ""
    head = (f'HTRACE_ENTRY_POINT {p.ret} {p.name}({param_list(p)}) {{\n' + checkpoint +
            f'  {NS}Call call({NS}FunctionId::{fid}{reveal});\n')
    if SKELETONS[skeleton] is None:
        return head + f"  return P{p.name}({args});\n}}\n"
    names = [x.name for x in p.params]
    base = fid[1].upper() + fid[2:] if skeleton == "nbcoll" else fid
    fill = dict(ns=NS, base=base, name=p.name, args=args, args_no_request=", ".join(names[:-1]),
                comm=comms[-1] if comms else "", parent=comms[0] if comms else "MPI_COMM_NULL",
                newcomm=next((x.name for x in reversed(p.params) if x.type == "MPI_Comm *"), ""),
                create_kind={"Comm_idup": "DuplicateOfParent", "Comm_idup_with_info": "DuplicateOfParent", "Comm_create_group": "OverNewGroup"}.get(fid, "OverParent"))
    fill.update(rma_io_fill(fid, names))
    before, after = (s.format(**fill) for s in SKELETONS[skeleton])
    if skeleton in MAY_WAIT | COLLECTIVE_WAIT:
        before += ("  " if before else "") + ("call.convert_at_collective();\n" if skeleton in COLLECTIVE_WAIT
                                              else "call.convert_while_waiting();\n")
    if skeleton in POLLS:
        missed, key = (s.format(**fill) for s in POLLS[skeleton])
        record = (f"call.record_poll({REVEAL.get(skeleton, 'false')}, htrace_missed, "
                  f"htrace_missed ? {key} : 0)")
        after = (f"const bool htrace_missed = {missed};\n  "
                 + (f"if ({record}) {{\n    {after}  }}\n" if after else f"{record};\n"))
    elif skeleton in REVEAL:
        after = f"if (call.record_if({REVEAL[skeleton]})) {{\n    {after}  }}\n"
    # The completion time ends the region (Leave) whether or not the snippet needs it as T.
    completed = ("const htrace::record::LocalTime T = call.completed();" if re.search(r"\bT\b", after)
                 else "call.completed();")
    # L (the caller's Location) only where a snippet records through it.
    location = ("  htrace::record::Location& L = call.location();\n"
                if re.search(r"\bL\b", before + after) else "")
    return (head + f"  if (!call.traced()) return P{p.name}({args});\n"
            + location
            + (f"  {before}" if before else "")
            + f"  const int rc = P{p.name}({args});\n"
            + (f"  {completed}\n  {after}" if after else "")
            + "  return rc;\n}\n")


def function_ids(rows, stamp):
    out = [stamp, "#pragma once\n", "#include <cstdint>\n", "#include \"record/recorder.h\"\n",
           "namespace htrace::mpi {\n", "enum class FunctionId : std::uint16_t {"]
    out += [f"  {p.name[4:]}," for _, _, p in rows]
    out += ["};", f"constexpr std::size_t kFunctionCount = {len(rows)};\n",
            "struct FunctionInfo {", "  const char* name;", "  const char* family;",
            "  record::RegionRole role;", "  bool wrapped;",
            "  bool excludable; ///< HTRACE_MPI_EXCLUDE may exclude it", "};\n",
            "inline constexpr FunctionInfo kFunctions[kFunctionCount] = {"]
    for family, skeleton, p in rows:
        role = ROLES.get(family, "Function")
        if p.name == "MPI_Barrier" or p.name == "MPI_Ibarrier":
            role = "Barrier"
        out.append(f'  {{"{p.name}", "{family}", record::RegionRole::{role}, '
                   f'{"false" if skeleton == "none" else "true"}, '
                   f'{"false" if skeleton in UNWRAPPED | STRUCTURAL else "true"}}},')
    out += ["};\n", "} // namespace htrace::mpi\n"]
    return "\n".join(out)


def main():
    table, outdir, mpi_h, flavor, fortran_symbols = sys.argv[1:6]
    declared = {p.name: p for p in mpi_prototypes.prototypes_of_mpi(mpi_h)}
    rows = for_this_mpi(read_table(table), declared)
    stamp = HEADER.format(table=os.path.basename(table), gen=os.path.basename(__file__))
    os.makedirs(outdir, exist_ok=True)
    files = {
        "function_ids.gen.h": function_ids(rows, stamp),
        "wrappers.gen.cpp": stamp + MPI1_DECLS + '#include "mpi/entry_point.h"\n#include "mpi/wrapper_call.h"\n'
        '#include "mpi/clock_checkpoint.h"\n'
        '#include "mpi/p2p_events.h"\n'
        '#include "mpi/rma_events.h"\n#include "mpi/io_events.h"\n'
        '#include "mpi/collective_info.h"\n#include "mpi/comm_registry.h"\n\n'
        '#pragma GCC diagnostic ignored "-Wdeprecated-declarations"\n\n'
        + "\n".join(wrapper(f, s, p) for f, s, p in rows if s not in UNWRAPPED and s != FORTRAN_ONLY),
    }
    import fortran_gen  # noqa: E402  (kept apart: its own rules for handle conversion)
    symbols = set(open(fortran_symbols).read().split())
    files["fortran.gen.cpp"] = stamp + MPI1_DECLS + fortran_gen.generate(rows, flavor, symbols)
    for name, text in files.items():
        path = os.path.join(outdir, name)
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)


if __name__ == "__main__":
    main()
