"""Parsing of MPI C prototypes, shared by the wrapper generator and the table test.

A prototype is one C declaration such as
    int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
and becomes a Prototype(ret, name, params); each Param keeps its declaration text, its name and
the text with the name removed (used to write casts and Fortran shims)."""

import os
import re
from dataclasses import dataclass
from typing import List


@dataclass
class Param:
    decl: str  # "const int sendcounts[]"
    name: str  # "sendcounts"
    type: str  # "const int *" (arrays decay to pointers)


@dataclass
class Prototype:
    ret: str
    name: str
    params: List[Param]
    variadic: bool = False
    removed: bool = False  # an MPI-1 function removed in MPI-3.0 (see prototypes_in_header)

    def signature(self) -> str:
        """Canonical text used to compare a table row with mpi.h (whitespace-normalized)."""
        params = [p.decl for p in self.params] + (["..."] if self.variadic else [])
        return f"{self.ret} {self.name}({', '.join(params) or 'void'})"


def normalize(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s*([(),\[\]*])\s*", r"\1", text)
    return text


def tidy(text: str) -> str:
    """Readable canonical spelling: single spaces, `T *name`, no space inside brackets."""
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s*(\*+)\s*", r" \1", text)
    text = re.sub(r"\s*\[\s*", "[", text)
    text = re.sub(r"\s*\]", "]", text)
    return text.replace("( *", "(*")


def split_params(text: str) -> List[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch in "(["
        depth -= ch in ")]"
        cur += ch
    if cur.strip():
        parts.append(cur)
    return [p.strip() for p in parts]


def parse_param(decl: str) -> Param:
    m = re.match(r"^(.*?)([A-Za-z_]\w*)\s*((?:\[[^\]]*\]\s*)*)$", decl)
    if not m:
        raise ValueError(f"cannot parse parameter '{decl}'")
    base, name, arrays = m.group(1).strip(), m.group(2), m.group(3)
    dims = re.findall(r"\[([^\]]*)\]", arrays)
    if dims:
        # T x[] -> T *; T x[][3] -> T (*)[3]
        inner = "".join(f"[{d}]" for d in dims[1:])
        ptype = f"{base} *" if not inner else f"{base} (*){inner}"
    else:
        ptype = base
    return Param(decl=tidy(decl), name=name, type=tidy(ptype))


def parse_prototype(text: str) -> Prototype:
    text = re.sub(r"\s+", " ", text).strip()
    m = re.match(r"^(.*?)\b((?:MPI|PMPI)_\w+)\s*\((.*)\)$", text)
    if not m:
        raise ValueError(f"cannot parse prototype '{text}'")
    ret, name, params = tidy(m.group(1)), m.group(2), split_params(m.group(3))
    variadic = bool(params) and params[-1] == "..."
    if variadic:
        params = params[:-1]
    if params == ["void"]:
        params = []
    return Prototype(ret=ret, name=name, params=[parse_param(p) for p in params], variadic=variadic)


def prototypes_of_mpi(mpi_h: str) -> List[Prototype]:
    """Every C function the MPI behind `mpi_h` declares: Open MPI's mpi.h, or the MPICH family's
    (its prototypes are in mpi_proto.h and ROMIO's mpio.h beside it)."""
    text = open(mpi_h).read()
    if "OMPI_DECLSPEC" in text:
        return prototypes_in_header(mpi_h)
    if re.search(r"#define\s+MPICH_VERSION\b", text):
        folder = os.path.dirname(mpi_h)
        parts = [os.path.join(folder, name) for name in ("mpi_proto.h", "mpio.h")]
        return mpich_prototypes([open(p).read() for p in parts if os.path.exists(p)] or [text])
    raise ValueError(f"{mpi_h}: neither Open MPI's nor an MPICH-family mpi.h")


def mpich_prototypes(texts: List[str]) -> List[Prototype]:
    """`<ret> MPI_X(...) <attribute macros>;` declarations of MPICH-style headers. Callback
    functions with upper-case names (MPI_DUP_FN, ...) are not MPI calls and are left out."""
    result = {}
    for text in texts:
        text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        text = re.sub(r"^\s*#.*$", "", text, flags=re.M)
        text = re.sub(r"\b(?:MPICH_ATTR_\w+|MPICH_API_PUBLIC|ROMIO_API_PUBLIC|MPIU_DLL_SPEC)\b"
                      r"(?:\s*\([^()]*\))?", "", text)
        for statement in text.split(";"):
            m = re.match(r"^\s*((?:const\s+)?\w+[\s*]+)(MPI_\w+)\s*\((.*)\)\s*$", statement, re.S)
            if not m or m.group(2).upper() == m.group(2) or m.group(1).strip() in ("typedef", "extern"):
                continue
            proto = parse_prototype(f"{m.group(1)} {m.group(2)}({m.group(3)})")
            result.setdefault(proto.name, proto)
    return list(result.values())


def prototypes_in_header(path: str) -> List[Prototype]:
    """Every `OMPI_DECLSPEC <ret> MPI_*(...)` declaration of Open MPI's mpi.h. Those of the MPI-1
    functions removed in MPI-3.0 come last with `removed` set: mpi.h declares them only when
    OMPI_OMIT_MPI1_COMPAT_DECLS is 0, but libmpi and libmpi_mpifh still export them. A trailing
    `__mpi_interface_*__(...)` attribute may hold a message with ';' in it."""
    text = open(path).read()
    removed = re.search(r"#if \(!OMPI_OMIT_MPI1_COMPAT_DECLS \|\| OMPI_BUILDING\)", text)
    result = []
    for m in re.finditer(r'OMPI_DECLSPEC\s+([^;{]*?\bMPI_\w+\s*\([^;]*?\))\s*'
                         r'(?:__mpi_interface\w*__\((?:"[^"]*"|[^";()])*\))?\s*;', text):
        decl = re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S)
        proto = parse_prototype(decl)
        proto.removed = bool(removed) and m.start() > removed.start()
        result.append(proto)
    return result
