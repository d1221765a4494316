#!/usr/bin/env python3
"""The wrapper table lists every MPI C function of the build's mpi.h (the MPI-1 functions removed
in MPI-3.0 included) exactly once, with the same parameter types, and only functions some known
MPI declares (Open MPI's and MPICH's headers, where installed), plus the Fortran-only ones; every
row has a known family and skeleton; the generator's outputs agree with it; every Fortran
procedure that bypasses the C functions (Open MPI: libmpi_mpifh; MPICH: the `use mpi_f08`
procedures of libmpichfort without choice buffers) has a traced entry point.

    table_matches_mpi_h.py SOURCE_DIR BUILD_GEN_DIR MPI_H"""

import os
import re
import sys

source_dir, gen_dir = sys.argv[1], sys.argv[2]
mpi_h = sys.argv[3]
KNOWN_HEADERS = ["/usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h", "/usr/include/x86_64-linux-gnu/mpich/mpi.h"]
import gen_wrappers  # libtrace/mpi, on PYTHONPATH (tests/wrappers/CMakeLists.txt)
import mpi_prototypes

FAMILIES = {"p2p", "coll", "nbcoll", "neighbor", "comm", "group", "env", "type", "rma", "io", "topo",
            "spawn", "info", "err", "misc", "tool"}
failures = []
rows = gen_wrappers.read_table(os.path.join(source_dir, "libtrace", "mpi", "mpi_functions.txt"))
table = {}
for family, skeleton, proto in rows:
    if proto.name in table:
        failures.append(f"{proto.name}: listed twice")
    table[proto.name] = (family, skeleton, proto)
    if family not in FAMILIES:
        failures.append(f"{proto.name}: unknown family '{family}'")

# Different spellings of one type: ROMIO's macro, and MPICH's name for the MPI-1 handler type.
ALIASES = {"MPIO_Request": "MPI_Request", "MPI_Comm_errhandler_function": "MPI_Handler_function"}


def types(proto):
    """The signature without parameter names: the table may name parameters its own way."""
    def spelled(t):
        return mpi_prototypes.normalize(re.sub(r"\w+", lambda m: ALIASES.get(m.group(0), m.group(0)), t))
    return [spelled(proto.ret)] + [spelled(x.type) for x in proto.params] + [proto.variadic]


header = {p.name: p for p in mpi_prototypes.prototypes_of_mpi(mpi_h)}
open_mpi = "OMPI_DECLSPEC" in open(mpi_h).read()
if len(header) < 380:
    failures.append(f"only {len(header)} prototypes parsed from {mpi_h}: parser broken?")
for name, proto in header.items():
    if name not in table:
        failures.append(f"{name}: in mpi.h but missing from the table")
    elif table[name][1] != "fortran" and types(table[name][2]) != types(proto):
        failures.append(f"{name}: parameter types differ:\n  table:  {table[name][2].signature()}\n  mpi.h:  {proto.signature()}")
# Deprecated declarations carry messages with ';' in them; the removed MPI-1 section is parsed too.
for name in ("MPI_Attr_get", "MPI_Keyval_create", "MPI_Address", "MPI_Type_struct"):
    if name not in header:
        failures.append(f"{name}: not parsed from {mpi_h}: parser broken?")
declared_somewhere = set(header)
for other in KNOWN_HEADERS:
    if os.path.exists(other):
        declared_somewhere |= {p.name for p in mpi_prototypes.prototypes_of_mpi(other)}
for name, (family, skeleton, _) in table.items():
    if skeleton == "fortran" and name in header and open_mpi:
        failures.append(f"{name}: skeleton fortran but mpi.h declares a C function")
    if skeleton != "fortran" and name not in declared_somewhere:
        failures.append(f"{name}: in the table but no known mpi.h declares it")

# Spot checks of the classification the semantics depend on.
expect = {"MPI_Send": "send", "MPI_Bsend": "send", "MPI_Issend": "isend", "MPI_Recv": "recv",
          "MPI_Bsend_init": "send_init", "MPI_Recv_init": "recv_init", "MPI_Waitsome": "waitsome",
          "MPI_Testall": "testall", "MPI_Alltoallw": "coll", "MPI_Ineighbor_alltoallw": "nbcoll",
          "MPI_Comm_split_type": "comm_create", "MPI_Comm_disconnect": "comm_free", "MPI_Init_thread": "special",
          "MPI_Wtime": "none", "MPI_Sendrecv_replace": "sendrecv_replace", "MPI_Imrecv": "imrecv"}
for name, skeleton in expect.items():
    if table.get(name, (None, None))[1] != skeleton:
        failures.append(f"{name}: skeleton {table.get(name, (None, None))[1]}, expected {skeleton}")

# Generated code: one C wrapper per wrapped row, stamped as generated.
wrappers = open(os.path.join(gen_dir, "wrappers.gen.cpp")).read()
if not wrappers.startswith("// generated from mpi_functions.txt by gen_wrappers.py; do not edit"):
    failures.append("wrappers.gen.cpp lacks the 'generated from' stamp")
# Entry points are exported with HTRACE_ENTRY_POINT (libtrace/mpi/entry_point.h: extern "C", default visibility).
ENTRY = r'^(?:extern "C"|HTRACE_ENTRY_POINT) '
defined = set(re.findall(ENTRY + r'\S+ (MPI_\w+)\(', wrappers, re.M))
for name, (family, skeleton, _) in table.items():
    wanted = skeleton not in ("none", "special", "fortran") and name in header
    if wanted != (name in defined):
        failures.append(f"{name}: skeleton {skeleton} but wrapper {'missing' if wanted else 'present'}")
fortran = open(os.path.join(gen_dir, "fortran.gen.cpp")).read()
expected_fortran = ("mpi_init_", "mpi_send_", "mpi_irecv_", "mpi_waitall_", "mpi_allreduce_", "mpi_iallreduce_",
                    "mpi_comm_split_", "mpi_comm_free_", "mpi_comm_rank_", "mpi_finalize_", "MPI_SEND", "mpi_send__")
if not open_mpi:  # MPICH's mpif.h procedures reach the C wrappers; its f08 ones without buffers do not
    expected_fortran = ("mpi_init_f08_", "mpi_waitall_f08_", "mpi_barrier_f08_", "mpi_comm_split_f08_",
                        "mpi_comm_free_f08_", "mpi_comm_rank_f08_", "mpi_finalize_f08_", "mpi_test_f08_")
for name in expected_fortran:
    if not re.search(rf"void {name}\(", fortran):
        failures.append(f"Fortran entry point {name} not generated")

# Every Fortran procedure that Open MPI's libmpi_mpifh exports has a traced entry point,
# except MPI_SIZEOF's (answered from the argument's type, no MPI call) and the functions the table
# leaves unwrapped (MPI_WTIME, MPI_WTICK). The `_cptr` twins of `use mpi` count as procedures.
import subprocess  # noqa: E402
mpifh = "/usr/lib/x86_64-linux-gnu/openmpi/lib/libmpi_mpifh.so"
mpichfort = "/usr/lib/x86_64-linux-gnu/libmpichfort.so.12"
if not open_mpi and os.path.exists(mpichfort):
    # Every f08 procedure without choice buffers calls PMPI_<Name> (libtrace/mpi/fortran_gen.py):
    # each one of a wrapped function needs an entry point; those with buffers (_f08ts) do not.
    nm = subprocess.run(["nm", "-D", "--defined-only", mpichfort], capture_output=True, text=True).stdout
    exported = set(re.findall(r" mpi_(\w+?)_f08_$", nm, re.M))
    twins = set(re.findall(r" pmpir_(\w+?)_f08_$", nm, re.M))
    generated = set(re.findall(ENTRY + r"[\w ]+ mpi_(\w+?)_f08_\(", fortran, re.M))
    def c_name(lower):
        return f"MPI_{lower[0].upper()}{lower[1:]}"
    wanted = {n for n in exported if c_name(n) in table and table[c_name(n)][1] not in ("none",)
              and (n in twins or table[c_name(n)][1] not in ("generic", "fortran"))}
    missing = sorted(c_name(n) for n in wanted - generated)
    if missing:
        failures.append(f"{len(missing)} f08 procedures of libmpichfort without a traced entry point: "
                        f"{', '.join(missing[:20])}")
    print(f"{len(wanted) - len(missing)} of the {len(wanted)} f08 procedures of libmpichfort that call "
          f"PMPI directly have a traced entry point")
if open_mpi and os.path.exists(mpifh):
    nm = subprocess.run(["nm", "-D", "--defined-only", mpifh], capture_output=True, text=True).stdout
    def c_name(lower):
        return f"MPI_{lower[0].upper()}{lower[1:]}"
    exported = {n for n in re.findall(r" pmpi_(\w+)_$", nm, re.M) if not n.endswith("_")}
    unwrapped = {n for n in exported if n.startswith("sizeof_")
                 or (c_name(n) in table and table[c_name(n)][1] == "none")}
    generated = set(re.findall(ENTRY + r"[\w ]+ mpi_(\w+?)_\(", fortran, re.M))
    missing = sorted(c_name(n) for n in exported - unwrapped - generated)
    if missing:
        failures.append(f"{len(missing)} Fortran procedures of libmpi_mpifh without a traced entry "
                        f"point: {', '.join(missing[:20])}")
    for name, (family, skeleton, _) in table.items():
        if skeleton == "fortran" and name[4:].lower() not in exported:
            failures.append(f"{name}: skeleton fortran but libmpi_mpifh has no pmpi_{name[4:].lower()}_")
    print(f"{len(exported - unwrapped) - len(missing)} of the {len(exported - unwrapped)} Fortran "
          f"procedures of libmpi_mpifh have a traced entry point (not wrapped: MPI_SIZEOF, MPI_WTIME, "
          f"MPI_WTICK)")

for f in failures:
    print("FAIL:", f)
entry_points = len(re.findall(ENTRY + r'void mpi_\w*[a-z0-9]_\(', fortran, re.M))
print(f"{len(table)} table rows, {len(header)} prototypes in mpi.h, {len(defined)} C wrappers, "
      f"{entry_points} Fortran entry points")
sys.exit(1 if failures else 0)
