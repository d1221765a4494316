#!/usr/bin/env python3
"""Generates htrace-score's table of MPI functions from libhtrace's one function table.

    gen_function_table.py TABLE OUT

writes OUT (score_functions.gen.h): every row of mpi_functions.txt, both MPIs' functions, sorted
by name, with its family, whether HTRACE_MPI_EXCLUDE may exclude it, which of its calls an
exclusion still records, and what its records mean to the analysis. The rules are gen_wrappers.py's
own (STRUCTURAL, UNWRAPPED, REVEAL, POLLS), imported, so the estimate follows the wrappers."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "libtrace",
                                "mpi"))
import gen_wrappers  # noqa: E402

# What the records of a skeleton's calls are for (score_functions.h: Effect).
EFFECTS = {
    "send": "Send", "isend": "Send", "send_init": "Send",
    "recv": "Receive", "irecv": "Receive", "recv_init": "Receive", "mrecv": "Receive",
    "imrecv": "Receive",
    "sendrecv": "SendReceive", "sendrecv_replace": "SendReceive",
    "wait": "Completion", "test": "Completion", "waitany": "Completion", "testany": "Completion",
    "waitall": "Completion", "testall": "Completion", "waitsome": "Completion",
    "testsome": "Completion", "request_free": "Completion", "cancel": "Completion",
    "iprobe": "Probe", "improbe": "Probe", "mprobe": "Probe",
    "start": "Start", "startall": "Start",
    "coll": "Collective", "nbcoll": "NbCollective",
}


def effect(family, skeleton):
    if skeleton in EFFECTS:
        return EFFECTS[skeleton]
    if skeleton == "rma" or skeleton.startswith("win_"):
        return "Rma"
    if skeleton.startswith("file_"):
        return "Io"
    return "Other"


def kept(skeleton):
    """Which calls of an excluded function the wrapper still records (score_functions.h: Kept)."""
    if skeleton not in gen_wrappers.REVEAL:
        return "Never"
    if skeleton == "waitall":
        return "Always"  # recorded whenever count > 0, even if every request was null
    if skeleton == "improbe":
        return "UnlessMissedPoll"  # a found message records nothing of its own
    return "IfCompleted"


def main():
    table, out = sys.argv[1], sys.argv[2]
    rows = sorted(gen_wrappers.read_table(table), key=lambda r: r[2].name)
    not_excludable = gen_wrappers.UNWRAPPED | gen_wrappers.STRUCTURAL
    lines = [gen_wrappers.HEADER.format(table=os.path.basename(table),
                                        gen=os.path.basename(__file__)),
             "// Included once, by mpi_function_table.cpp.",
             "constexpr MpiFunction kMpiFunctions[] = {"]
    for family, skeleton, p in rows:
        excludable = "false" if skeleton in not_excludable else "true"
        poll = "true" if skeleton in gen_wrappers.POLLS else "false"
        lines.append(f'    {{"{p.name}", "{family}", {excludable}, Kept::{kept(skeleton)}, {poll}, '
                     f'Effect::{effect(family, skeleton)}}},')
    lines += ["};", ""]
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines))
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
