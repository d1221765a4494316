"""Fortran entry points (mpif.h, `use mpi` and `use mpi_f08`) generated from the same table.

Open MPI's Fortran bindings call PMPI_* directly, so the C wrappers never see Fortran calls. For
every wrapped function of the table that has a Fortran binding this emits `mpi_<name>_` (plus the
aliases mpi_<name>__, mpi_<name> and MPI_<NAME> that libmpi_mpifh exports) by one of two rules:

- Functions recorded as Enter/Leave only (skeleton `generic`) need none of their arguments: the
  entry point opens the same wrapper frame as the C wrapper (htrace::mpi::Call) around Open MPI's
  own Fortran binding `pmpi_<name>_`, which does the conversions (strings, callbacks, attributes,
  argv arrays, LOGICAL). The raw Fortran argument list follows from the C prototype: one address
  per parameter, then `ierr`, then one hidden length (size_t, gfortran) per CHARACTER argument.
- Functions whose records need their arguments convert them (handles, sentinels, MPI_Aint/
  MPI_Offset/MPI_Count kinds, strings with hidden lengths, datatype arrays, request and status
  arrays, 1-based indices) and call the traced C wrapper MPI_<Name>.

`use mpi_f08` (Open MPI 4.1, gfortran): its procedures `mpi_<name>_f08_` convert TYPE(MPI_Comm)
etc. to the integer handle and call the mpif.h implementation `ompi_<name>_f` (an undefined symbol
of libmpi_usempif08.so), so every entry point is also exported as `ompi_<name>_f`. The f08
procedures of functions with LOGICAL arguments call `pmpi_<name>_` instead (F08_VIA_PMPI, from
`nm -D libmpi_usempif08.so`; tests/coverage checks the list): for those, `mpi_<name>_f08_` itself
is interposed; its arguments are those of mpif.h with an OPTIONAL (possibly absent) ierror.
The f08 procedures that call a C function PMPI_<Name> directly (F08_DIRECT) are interposed as
`mpi_<name>_f08_` too: their arguments are the C function's pointer parameters by reference, so
the entry point hands them to the traced C wrapper as they come.
This build of Open MPI has no `_ts`/`_cdesc` f08 variants (no TS 29113 descriptors).

The MPICH ABI (MPICH 4.0, gfortran; `objdump -d libmpichfort.so`): every mpif.h and `use mpi`
procedure `mpi_<name>_` (a weak alias of `pmpi_<name>_`) converts its arguments and calls the C
function MPI_<Name>, and so do the f08 procedures with choice buffers (`mpi_<name>_f08ts_`, via
C descriptors): the C wrappers see those calls, and no entry point is generated for them. The
other f08 procedures `mpi_<name>_f08_` call PMPI_<Name> directly: htrace interposes each one the
library exports, as a frame around its PMPI twin `pmpir_<name>_f08_` (skeleton `generic`) or by
the conversion rules above (MPICH's f08 handles are its C handles, TYPE(MPI_Status) is its C
MPI_Status; the sentinels are f08's, fortran_support.h), with an OPTIONAL ierror. Frames around
`pmpi_<name>_`, as for Open MPI, serve the mpif.h procedures that do not reach the C function:
the attribute ones, which call MPICH's internal attribute functions (MPICH_F77_VIA_INTERNALS), and
the rows of skeleton `fortran` (MPICH's MPI_Aint_add/diff are C functions htrace does not wrap;
MPI_F_sync_reg's f08 procedure is a TS 29113 one, `mpi_f_sync_reg_f08ts_`).

Rows of skeleton `fortran` have no C function (MPI_Aint_add/diff are macros in C, MPI_F_sync_reg
has no C binding): only the Fortran entry point, a frame around `pmpi_<name>_`. The row's return
type gives the Fortran form: `int` a subroutine with IERROR, `void` one without, anything else a
FUNCTION returning that type (MPI_AINT_ADD returns INTEGER(KIND=MPI_ADDRESS_KIND))."""

import dataclasses
import re

# Families of the table without a Fortran binding: MPI_T has none (MPI-3.1, chapter 14.3).
NO_FORTRAN_FAMILIES = {"tool"}
HANDLES = {"MPI_Comm": "Comm", "MPI_Datatype": "Type", "MPI_Op": "Op", "MPI_Group": "Group",
           "MPI_Info": "Info", "MPI_Request": "Request", "MPI_File": "File", "MPI_Win": "Win",
           "MPI_Errhandler": "Errhandler", "MPI_Message": "Message"}
NULL_HANDLE = {"Comm": "MPI_COMM_NULL", "Type": "MPI_DATATYPE_NULL", "Op": "MPI_OP_NULL",
               "Group": "MPI_GROUP_NULL", "Info": "MPI_INFO_NULL", "Request": "MPI_REQUEST_NULL",
               "File": "MPI_FILE_NULL", "Win": "MPI_WIN_NULL", "Errhandler": "MPI_ERRHANDLER_NULL",
               "Message": "MPI_MESSAGE_NULL"}
INTEGER_KINDS = {"MPI_Aint", "MPI_Offset", "MPI_Count"}  # INTEGER(KIND=MPI_ADDRESS_KIND) etc.
WEIGHTS = {"weights", "sourceweights", "destweights"}  # may be MPI_UNWEIGHTED / MPI_WEIGHTS_EMPTY
# A handle passed by address is read (and written back) when the call consumes or updates it;
# otherwise it is an output and starts as the null handle.
INOUT_REQUEST = {"wait", "test", "start", "request_free", "cancel"}
INOUT_SUFFIXES = ("_free", "_commit", "_close", "_disconnect")
SPECIAL = {
    "MPI_Init": ("MPI_Fint* ierr", "*ierr = MPI_Init(nullptr, nullptr);"),
    "MPI_Init_thread": ("MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr",
                        "int p = 0;\n  *ierr = MPI_Init_thread(nullptr, nullptr, *required, &p);\n  *provided = p;"),
    "MPI_Finalize": ("MPI_Fint* ierr", "*ierr = MPI_Finalize();"),
    "MPI_Pcontrol": ("MPI_Fint* level", "MPI_Pcontrol(*level); // MPI_PCONTROL(LEVEL) has no IERROR"),
    "MPI_Abort": ("MPI_Fint* comm, MPI_Fint* errorcode, MPI_Fint* ierr",
                  "*ierr = MPI_Abort(PMPI_Comm_f2c(*comm), *errorcode);"),
}
# f08 procedures of Open MPI 4.1 that call pmpi_<name>_ rather than ompi_<name>_f (they convert
# LOGICAL arguments first): `nm -D libmpi_usempif08.so | grep ' U pmpi_'`.
F08_VIA_PMPI = {
    "cart_create", "cart_get", "cart_map", "cart_sub", "comm_get_attr", "comm_test_inter",
    "dist_graph_create", "dist_graph_create_adjacent", "dist_graph_neighbors_count",
    "file_get_atomicity", "file_set_atomicity", "finalized", "graph_create", "improbe",
    "info_get", "info_get_valuelen", "initialized", "intercomm_merge", "iprobe", "is_thread_main",
    "op_commutative", "op_create", "request_get_status", "status_set_cancelled", "test",
    "test_cancelled", "testall", "testany", "testsome", "type_get_attr", "win_get_attr",
    "win_test"}
# f08 procedures of Open MPI 4.1 that call the C function PMPI_<Name> directly (`nm -D
# libmpi_usempif08.so | grep ' U PMPI_'`): MPI_Buffer_detach returns the buffer's address in a
# TYPE(C_PTR) passed by reference, which is C's `void *buffer` (a pointer to the pointer).
F08_DIRECT = {"buffer_detach"}
# Functions whose `use mpi` interface has a TYPE(C_PTR) twin `mpi_<name>_cptr_` with the same
# arguments (a C pointer by reference has the layout of INTEGER(KIND=MPI_ADDRESS_KIND)): exported
# by libmpi_mpifh as aliases of the mpif.h binding, so they are aliases here too.
CPTR_TWINS = {"alloc_mem", "win_allocate", "win_allocate_shared", "win_shared_query"}


def is_character(t):
    return re.search(r"\bchar\b", t) is not None


def handle_of(t):
    """'Comm' for MPI_Comm / MPI_Comm * / const MPI_Comm *, else None."""
    base = t.replace("const ", "").replace(" *", "").strip()
    return HANDLES.get(base)


def raw_params(p):
    """The Fortran argument list of a function, as Open MPI's binding receives it (IERROR only
    for the `int` functions: see fortran_form)."""
    params = [f"void* {x.name}" for x in p.params] + (["MPI_Fint* ierr"] if p.ret == "int" else [])
    params += [f"std::size_t {x.name}_len" for x in p.params if is_character(x.type)]
    return params


def convert(skeleton, fid, x, count_name):
    """(fortran parameter, setup lines, C argument, after lines, hidden length) or None."""
    n, t = x.name, x.type
    if t in ("const void *", "void *"):  # buffers (MPI_BOTTOM, MPI_IN_PLACE) and base addresses
        return (f"void* {n}", [], f"htrace::mpi::fortran_buffer({n})", [], None)
    if t == "int":
        return (f"MPI_Fint* {n}", [], f"*{n}", [], None)
    if t in INTEGER_KINDS:
        return (f"{t}* {n}", [], f"*{n}", [], None)
    if t.replace("const ", "").replace(" *", "") in INTEGER_KINDS and t.endswith("*"):
        return (f"{t} {n}", [], n, [], None)  # same kind in Fortran and C: passed through
    if t in ("int *", "const int *") and n in WEIGHTS:
        return (f"MPI_Fint* {n}", [], f"htrace::mpi::fortran_weights({n})", [], None)
    if t in ("int *", "const int *"):
        after = []
        if skeleton in ("waitany", "testany") and n == "index":
            after = [f"if (*{n} != MPI_UNDEFINED) ++*{n};"]
        if n == "array_of_indices":
            after = [f"if (*outcount != MPI_UNDEFINED) for (int i = 0; i < *outcount; ++i) ++{n}[i];"]
        return (f"MPI_Fint* {n}", [], n, after, None)
    if t == "const char *":
        return (f"char* {n}", [f"htrace::mpi::FortranString c_{n}({n}, {n}_len);"], f"c_{n}.get()", [],
                f"std::size_t {n}_len")
    kind = handle_of(t)
    if kind and t in HANDLES:
        return (f"MPI_Fint* {n}", [], f"PMPI_{kind}_f2c(*{n})", [], None)
    if t == "MPI_Request *" and n == "array_of_requests":
        return (f"MPI_Fint* {n}", [f"htrace::mpi::FortranRequests c_{n}({n}, *{count_name});"], f"c_{n}.data()",
                [f"c_{n}.copy_back();"], None)
    if t == "const MPI_Datatype *" and n in ("sendtypes", "recvtypes"):
        size = f"htrace::mpi::alltoallw_types(PMPI_Comm_f2c(*comm), {'true' if 'neighbor' in fid.lower() else 'false'}, " \
               f"{'true' if n == 'sendtypes' else 'false'})"
        return (f"MPI_Fint* {n}", [f"htrace::mpi::FortranTypes c_{n}({n}, {size});"], f"c_{n}.data()", [], None)
    if kind and t == f"{[k for k, v in HANDLES.items() if v == kind][0]} *":
        inout = (skeleton in INOUT_REQUEST and kind == "Request") or fid.endswith(INOUT_SUFFIXES) or \
            (kind == "Message" and skeleton in ("mrecv", "imrecv")) or (kind == "Comm" and n == "comm")
        init = f"PMPI_{kind}_f2c(*{n})" if inout else NULL_HANDLE[kind]
        return (f"MPI_Fint* {n}", [f"{t[:-2]} c_{n} = {init};"], f"&c_{n}",
                [f"if (rc == MPI_SUCCESS) *{n} = PMPI_{kind}_c2f(c_{n});"], None)
    if t == "MPI_Status *" and n == "status":
        return (f"MPI_Fint* {n}", [f"htrace::mpi::FortranStatus c_{n}({n});"], f"c_{n}.get()", [f"c_{n}.copy_back();"],
                None)
    if t == "const MPI_Status *" and n == "status":
        return (f"MPI_Fint* {n}", [f"MPI_Status c_{n};", f"PMPI_Status_f2c({n}, &c_{n});"], f"&c_{n}", [], None)
    if t == "MPI_Status *" and n == "array_of_statuses":
        return (f"MPI_Fint* {n}", [f"htrace::mpi::FortranStatuses c_{n}({n}, *{count_name});"], f"c_{n}.get()",
                [f"c_{n}.copy_back();"], None)
    return None


# mpif.h procedures of MPICH 4.0 that do not reach the C function (`objdump -d libmpichfort.so`):
# the attribute procedures call MPICH's internal MPII_*_attr functions.
MPICH_F77_VIA_INTERNALS = {"attr_get", "attr_put", "comm_get_attr", "comm_set_attr", "type_get_attr",
                           "type_set_attr", "win_get_attr", "win_set_attr"}


def aliases(name, flavor="openmpi"):
    lower = name.lower()
    names = [lower + "__", lower, name.upper()] + ([f"ompi_{lower[4:]}_f"] if flavor == "openmpi" else [])
    if lower[4:] in CPTR_TWINS:
        twin = lower + "_cptr"
        names += [twin + "_", twin + "__", twin, twin.upper(), f"ompi_{twin[4:]}_f"]
    return names


def returned(p):
    """C type a Fortran entry point returns: void for subroutines, else the FUNCTION's type."""
    return "void" if p.ret in ("int", "void") else p.ret


def passing_through(symbol, params):
    """Lines that hand a call on to the next definition of `symbol` (the program's MPI library's
    own procedure) while nothing is recorded: before MPI_Init, after MPI_Finalize, and in a
    program whose MPI is not the one libhtrace was built for, where no conversion of this build
    may touch the arguments (mpi_library.h)."""
    types = ", ".join(x.rsplit(" ", 1)[0] for x in params) or "void"
    args = ", ".join(x.rsplit(" ", 1)[1] for x in params)
    return (f"if (htrace::mpi::fortran_passes_through()) {{\n"
            f"    static const auto next = htrace::mpi::next_definition<void (*)({types})>(\"{symbol}\");\n"
            f"    if (next != nullptr) return next({args});\n  }}\n  ")


def entry(name, params, body, ret="void", symbol=None, flavor="openmpi"):
    """The entry point `symbol` (default mpi_<name>_ and its aliases)."""
    lower = name.lower()
    if symbol is not None:
        return f'HTRACE_ENTRY_POINT {ret} {symbol}({params}) {{\n  {body}\n}}\n'
    out = [f'HTRACE_ENTRY_POINT {ret} {lower}_({params}) {{\n  {body}\n}}']
    out += [f'HTRACE_ENTRY_POINT {ret} {a}({params}) __attribute__((alias("{lower}_")));'
            for a in aliases(name, flavor)]
    return "\n".join(out) + "\n"


def frame_only(p, symbol=None, binding=None, flavor="openmpi"):
    """Enter/Leave around the MPI's own Fortran binding (skeletons `generic` and `fortran`):
    `pmpi_<name>_` for `mpi_<name>_` and its aliases, or `binding` for `symbol`."""
    fid, lower, ret = p.name[4:], p.name.lower(), returned(p)
    binding = binding or f"p{lower}_"
    params = raw_params(p)
    args = ", ".join(x.split()[-1] for x in params)
    decl = f'extern "C" {ret} {binding}({", ".join(x.rsplit(" ", 1)[0] for x in params) or "void"});'
    call = f"{'return ' if ret != 'void' else ''}{binding}({args});"
    return decl + "\n" + entry(p.name, ", ".join(params),
                               f"htrace::mpi::Call call(htrace::mpi::FunctionId::{fid});\n  {call}", ret,
                               symbol, flavor), params


def converting(skeleton, p, symbol=None):
    """Converts the arguments and calls the traced C wrapper; None if a parameter has no rule."""
    fid = p.name[4:]
    count_name = "incount" if any(x.name == "incount" for x in p.params) else "count"
    fparams, setup, args, after, hidden = [], [], [], [], []
    for x in p.params:
        c = convert(skeleton, fid, x, count_name)
        if c is None:
            return None
        fparams.append(c[0])
        setup += c[1]
        args.append(c[2])
        after += c[3]
        hidden += [c[4]] if c[4] else []
    fparams.append("MPI_Fint* ierr")
    fparams += hidden
    lines = setup + [f"const int rc = {p.name}({', '.join(args)});"] + after + ["*ierr = rc;"]
    forward = passing_through(f"{p.name.lower()}_", fparams) if symbol is None else ""
    return entry(p.name, ", ".join(fparams), forward + "\n  ".join(lines), symbol=symbol), fparams


def f08_entry(p, params):
    """mpi_<name>_f08_ for the f08 procedures that bypass ompi_<name>_f: the mpif.h entry point
    (parameters `params`) with an optional ierror, or for F08_DIRECT the C wrapper called with
    the f08 arguments as they come (pointer parameters only)."""
    lower = p.name.lower()
    if lower[4:] in F08_DIRECT:
        if not all(x.type.endswith("*") for x in p.params):
            raise SystemExit(f"fortran_gen.py: F08_DIRECT needs pointer parameters only: {p.name}")
        cparams = ", ".join(f"{x.type} {x.name}" for x in p.params)
        return (f'HTRACE_ENTRY_POINT void {lower}_f08_({cparams}, MPI_Fint* ierr) {{\n'
                f'  const int rc = {p.name}({", ".join(x.name for x in p.params)});\n'
                f'  if (ierr != nullptr) *ierr = rc; // OPTIONAL ierror: absent is a null address\n}}\n')
    if lower[4:] not in F08_VIA_PMPI:
        return ""
    args = ", ".join("&c_ierr" if x == "MPI_Fint* ierr" else x.split()[-1] for x in params)
    return (f'HTRACE_ENTRY_POINT void {lower}_f08_({", ".join(params)}) {{\n'
            f'  MPI_Fint c_ierr = MPI_SUCCESS;\n  {lower}_({args});\n'
            f'  if (ierr != nullptr) *ierr = c_ierr; // OPTIONAL ierror: absent is a null address\n}}\n')


def wrapper(family, skeleton, p):
    """(text, rule) of the Fortran entry point, or None when the function has none."""
    if p.name in SPECIAL:
        return entry(p.name, *SPECIAL[p.name]), "special"
    if skeleton == "fortran":
        return frame_only(p)[0], "frame"
    if family in NO_FORTRAN_FAMILIES or skeleton in ("none", "special") or p.ret != "int":
        return None
    if skeleton == "generic":
        text, params = frame_only(p)
        return text + f08_entry(p, params), "frame"
    made = converting(skeleton, p)
    if made is None:
        raise SystemExit(f"fortran_gen.py: no conversion rule for a parameter of {p.name} "
                         f"(skeleton {skeleton}): add one")
    return made[0] + f08_entry(p, made[1]), "converted"


def optional_ierror(symbol, inner, params, forward=True):
    """`symbol` calling the entry point `inner` (parameters `params`, IERROR among them) with an
    IERROR of its own: f08's ierror is OPTIONAL, absent is a null address. `forward`: hand the
    call on while nothing is recorded (not for MPI_Init & co., whose wrappers start and end the
    recording)."""
    args = ", ".join("&c_ierr" if x == "MPI_Fint* ierr" else x.split()[-1] for x in params)
    return (f'HTRACE_ENTRY_POINT void {symbol}({", ".join(params)}) {{\n'
            f'  {passing_through(symbol, params) if forward else ""}MPI_Fint c_ierr = MPI_SUCCESS;\n  {inner}({args});\n'
            f'  if (ierr != nullptr) *ierr = c_ierr;\n}}\n')


def mpich_wrapper(family, skeleton, p, symbols):
    """(text, rule) of the MPICH entry points of a function: mpif.h ones for the procedures that
    bypass the C function (Fortran-only rows, MPICH_F77_VIA_INTERNALS), and the f08 one."""
    lower = p.name.lower()
    f77 = ""
    # MPICH's MPI_F_SYNC_REG stores an IERROR through its second argument: pass it on.
    binding = dataclasses.replace(p, ret="int") if p.name == "MPI_F_sync_reg" else p
    if (skeleton == "fortran" or lower[4:] in MPICH_F77_VIA_INTERNALS) and f"p{lower}_" in symbols:
        f77 = frame_only(binding, flavor="mpich")[0]
    # A Fortran-only function with a choice buffer has only the TS 29113 procedure (no C function
    # it could reach).
    if skeleton == "fortran" and f"{lower}_f08ts_" in symbols and f"pmpir_{lower[4:]}_f08ts_" in symbols:
        f77 += frame_only(binding, f"{lower}_f08ts_", f"pmpir_{lower[4:]}_f08ts_")[0]
    f08 = mpich_f08_wrapper(family, skeleton, p, symbols)
    if not f08:
        return (f77, "frame") if f77 else None
    return f77 + f08[0], f08[1]


def mpich_f08_wrapper(family, skeleton, p, symbols):
    """(text, rule) of the entry point interposing MPICH's `mpi_<name>_f08_`, or None when the
    library has no such procedure (C-only function, or a choice-buffer procedure that reaches the
    C wrapper)."""
    lower = p.name.lower()
    symbol = f"{lower}_f08_"
    if symbol not in symbols:
        return None
    if p.name in SPECIAL:
        inner = f"htrace_f08_{lower[4:]}"
        params, body = SPECIAL[p.name]
        text = f"namespace {{\nvoid {inner}({params}) {{\n  {body}\n}}\n}} // namespace\n"
        if "MPI_Fint* ierr" in params:
            lifecycle = p.name in ("MPI_Init", "MPI_Init_thread", "MPI_Finalize")
            return text + optional_ierror(symbol, inner, params.split(", "), not lifecycle), "special"
        return text + f"HTRACE_ENTRY_POINT void {symbol}({params}) {{ {inner}({params.split()[-1]}); }}\n", "special"
    if skeleton in ("generic", "fortran"):
        binding = f"pmpir_{lower[4:]}_f08_"
        if binding not in symbols or p.ret == "void" and skeleton != "fortran":
            return None
        return frame_only(p, symbol, binding)[0], "frame"
    if family in NO_FORTRAN_FAMILIES or skeleton in ("none", "special") or p.ret != "int":
        return None
    inner = f"htrace_f08_{lower[4:]}"
    made = converting(skeleton, p, symbol=inner)
    if made is None:
        raise SystemExit(f"fortran_gen.py: no conversion rule for a parameter of {p.name} "
                         f"(skeleton {skeleton}): add one")
    text = made[0].replace("HTRACE_ENTRY_POINT void", "static void", 1)
    return text + optional_ierror(symbol, inner, made[1]), "converted"


def generate(rows, flavor, symbols):
    """The Fortran entry points of an `openmpi` or `mpich` build; `symbols`: what the MPI's
    Fortran library exports."""
    out = ['#include "mpi/entry_point.h"\n#include "mpi/fortran_support.h"\n#include "mpi/wrapper_call.h"\n',
           '#include <cstddef>\n',
           '#pragma GCC diagnostic ignored "-Wdeprecated-declarations"\n']
    covered = {"special": [], "frame": [], "converted": []}
    for family, skeleton, p in rows:
        made = (mpich_wrapper(family, skeleton, p, symbols) if flavor == "mpich"
                else wrapper(family, skeleton, p))
        if made:
            out.append(made[0])
            covered[made[1]].append(p.name)
    # The coverage as a comment for readers of the generated file (nothing reads it at run time).
    for rule, names in covered.items():
        out.append(f"// {rule}: Fortran entry points for {len(names)} functions:")
        line = "//"
        for name in names:
            if len(line) + len(name) + 1 > 100:
                out.append(line)
                line = "//"
            line += " " + name
        out.append(line + "\n")
    return "\n".join(out)
