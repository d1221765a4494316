"""Fortran entry points (mpif.h and `use mpi`) generated from the same table.

Open MPI's Fortran bindings call PMPI_* directly, so the C wrappers never see Fortran calls. For
every wrapped function whose parameters all have a conversion rule below, this emits
`mpi_<name>_` (plus the aliases mpi_<name>__, mpi_<name> and MPI_<NAME> that libmpi_mpifh exports)
that converts handles and sentinels and calls the traced C wrapper MPI_<Name>. Functions without a
rule for some parameter (strings, callbacks, attribute values, MPI_Aint arguments, ...) are left to
Open MPI's own Fortran bindings: they run, untraced."""

FAMILIES = {"p2p", "coll", "nbcoll", "neighbor", "comm", "group", "topo", "env"}
HANDLES = {"MPI_Comm": "Comm", "MPI_Datatype": "Type", "MPI_Op": "Op", "MPI_Group": "Group",
           "MPI_Info": "Info", "MPI_Request": "Request"}
BUFFERS = {"buf", "ibuf", "sendbuf", "recvbuf", "buffer", "inbuf", "outbuf"}
WEIGHTS = {"weights", "sourceweights", "destweights"}  # may be MPI_UNWEIGHTED / MPI_WEIGHTS_EMPTY
INOUT_REQUEST = {"wait", "test", "start", "request_free", "cancel"}
SPECIAL = {
    "MPI_Init": ("MPI_Fint* ierr", "*ierr = MPI_Init(nullptr, nullptr);"),
    "MPI_Init_thread": ("MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr",
                        "int p = 0;\n  *ierr = MPI_Init_thread(nullptr, nullptr, *required, &p);\n  *provided = p;"),
    "MPI_Finalize": ("MPI_Fint* ierr", "*ierr = MPI_Finalize();"),
    "MPI_Pcontrol": ("MPI_Fint* level, MPI_Fint* ierr", "*ierr = MPI_Pcontrol(*level);"),
    "MPI_Abort": ("MPI_Fint* comm, MPI_Fint* errorcode, MPI_Fint* ierr",
                  "*ierr = MPI_Abort(PMPI_Comm_f2c(*comm), *errorcode);"),
}


def convert(skeleton, p, x, count_name):
    """(fortran parameter, setup lines, C argument, after lines) or None if unsupported."""
    n, t = x.name, x.type
    if t in ("const void *", "void *"):
        return (f"void* {n}", [], f"htrace::mpi::fortran_buffer({n})", []) if n in BUFFERS else None
    if t == "int":
        return (f"MPI_Fint* {n}", [], f"*{n}", [])
    if t in ("int *", "const int *") and n in WEIGHTS:
        return (f"MPI_Fint* {n}", [], f"htrace::mpi::fortran_weights({n})", [])
    if t in ("int *", "const int *"):
        after = []
        if skeleton in ("waitany", "testany") and n == "index":
            after = [f"if (*{n} != MPI_UNDEFINED) ++*{n};"]
        if n == "array_of_indices":
            after = [f"if (*outcount != MPI_UNDEFINED) for (int i = 0; i < *outcount; ++i) ++{n}[i];"]
        return (f"MPI_Fint* {n}", [], n, after)
    if t in HANDLES:
        return (f"MPI_Fint* {n}", [], f"P{'MPI'}_{HANDLES[t]}_f2c(*{n})", [])
    if t in ("MPI_Comm *", "MPI_Group *"):
        kind = HANDLES[t[:-2]]
        init = f"PMPI_{kind}_f2c(*{n})" if n in ("comm", "group") else ("MPI_COMM_NULL" if kind == "Comm" else "MPI_GROUP_NULL")
        return (f"MPI_Fint* {n}", [f"{t[:-2]} c_{n} = {init};"], f"&c_{n}", [f"*{n} = PMPI_{kind}_c2f(c_{n});"])
    if t == "MPI_Request *" and n == "request":
        init = f"PMPI_Request_f2c(*{n})" if skeleton in INOUT_REQUEST else "MPI_REQUEST_NULL"
        return (f"MPI_Fint* {n}", [f"MPI_Request c_{n} = {init};"], f"&c_{n}", [f"*{n} = PMPI_Request_c2f(c_{n});"])
    if t == "MPI_Request *" and n == "array_of_requests":
        return (f"MPI_Fint* {n}", [f"htrace::mpi::FortranRequests c_{n}({n}, *{count_name});"], f"c_{n}.data()",
                [f"c_{n}.copy_back();"])
    if t == "MPI_Status *" and n == "status":
        return (f"MPI_Fint* {n}", [f"htrace::mpi::FortranStatus c_{n}({n});"], f"c_{n}.get()", [f"c_{n}.copy_back();"])
    if t == "const MPI_Status *" and n == "status":
        return (f"MPI_Fint* {n}", [f"MPI_Status c_{n};", f"PMPI_Status_f2c({n}, &c_{n});"], f"&c_{n}", [])
    if t == "MPI_Status *" and n == "array_of_statuses":
        return (f"MPI_Fint* {n}", [f"htrace::mpi::FortranStatuses c_{n}({n}, *{count_name});"], f"c_{n}.get()",
                [f"c_{n}.copy_back();"])
    if t == "MPI_Message *":
        init = "PMPI_Message_f2c(*message)" if skeleton in ("mrecv", "imrecv") else "MPI_MESSAGE_NULL"
        return (f"MPI_Fint* {n}", [f"MPI_Message c_{n} = {init};"], f"&c_{n}", [f"*{n} = PMPI_Message_c2f(c_{n});"])
    return None


def aliases(name):
    lower = name.lower()
    return [lower + "__", lower, name.upper()]


def entry(name, params, body):
    lower = name.lower()
    out = [f'HTRACE_ENTRY_POINT void {lower}_({params}) {{\n  {body}\n}}']
    out += [f'HTRACE_ENTRY_POINT void {a}({params}) __attribute__((alias("{lower}_")));' for a in aliases(name)]
    return "\n".join(out) + "\n"


def wrapper(family, skeleton, p):
    if p.name in SPECIAL:
        return entry(p.name, *SPECIAL[p.name])
    if family not in FAMILIES or skeleton in ("none", "special") or p.ret != "int":
        return None
    count_name = "incount" if any(x.name == "incount" for x in p.params) else "count"
    fparams, setup, args, after = [], [], [], []
    for x in p.params:
        c = convert(skeleton, p, x, count_name)
        if c is None:
            return None
        fparams.append(c[0])
        setup += c[1]
        args.append(c[2])
        after += c[3]
    fparams.append("MPI_Fint* ierr")
    lines = setup + [f"const int rc = {p.name}({', '.join(args)});"] + after + ["*ierr = rc;"]
    return entry(p.name, ", ".join(fparams), "\n  ".join(lines))


def generate(rows):
    out = ['#include "mpi/entry_point.h"\n#include "mpi/fortran_support.h"\n',
           '#pragma GCC diagnostic ignored "-Wdeprecated-declarations"\n']
    covered = []
    for family, skeleton, p in rows:
        text = wrapper(family, skeleton, p)
        if text:
            out.append(text)
            covered.append(p.name)
    # The coverage as a comment for readers of the generated file (nothing reads it at run time).
    out.append(f"// Fortran entry points for {len(covered)} functions:")
    line = "//"
    for name in covered:
        if len(line) + len(name) + 1 > 100:
            out.append(line)
            line = "//"
        line += " " + name
    out.append(line + "\n")
    return "\n".join(out)
