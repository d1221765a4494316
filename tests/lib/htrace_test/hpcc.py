"""Debian's hpcc as a traced application: its program, its example input shrunk for a test."""
import os

HPCC = "/usr/bin/hpcc"
HPCC_INPUT = "/usr/share/doc/hpcc/examples/_hpccinf.txt"


def available():
    return os.path.exists(HPCC) and os.path.exists(HPCC_INPUT)


def hpcc_input(ranks):
    """Debian's example input shrunk to N=200, NB=40 (all of HPCC in a few seconds) on a P x Q grid
    of `ranks` processes (1 x 2 for two ranks, 2 x ranks/2 from four)."""
    p = 2 if ranks >= 4 else 1
    with open(HPCC_INPUT) as f:
        lines = f.read().splitlines()
    lines[5], lines[7], lines[10], lines[11] = "200 Ns", "40 NBs", f"{p} Ps", f"{ranks // p} Qs"
    return "\n".join(lines) + "\n"


def succeeded(run_dir):
    """hpcc's own verdict on its results, from the hpccoutf.txt it wrote into run_dir."""
    with open(os.path.join(run_dir, "hpccoutf.txt")) as f:
        return "Success=1" in f.read()
