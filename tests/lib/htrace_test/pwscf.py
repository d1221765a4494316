"""Debian's Quantum ESPRESSO (pw.x, plane-wave DFT in Fortran) as a traced application: mostly
collectives (allreduce, alltoall, bcast), with point-to-point messages from its FFT and band
groups only on more than two ranks. The input is a self-consistent field run of bulk silicon with
the pseudopotential Debian ships among QE's examples; it takes about a second on 2 to 4 ranks."""
import gzip
import os
import shutil

PW = "/usr/bin/pw.x"
PSEUDOPOTENTIAL = "/usr/share/doc/quantum-espresso/examples/EPW/sic/pp/Si.pz-vbc.UPF.gz"

INPUT = """&control
  calculation = 'scf', prefix = 'si', outdir = './out', pseudo_dir = './'
/
&system
  ibrav = 2, celldm(1) = 10.20, nat = 2, ntyp = 1, ecutwfc = 16.0
/
&electrons
  conv_thr = 1.0d-8
/
ATOMIC_SPECIES
 Si 28.086 Si.pz-vbc.UPF
ATOMIC_POSITIONS alat
 Si 0.00 0.00 0.00
 Si 0.25 0.25 0.25
K_POINTS automatic
 4 4 4 1 1 1
"""


def available():
    return os.path.exists(PW) and os.path.exists(PSEUDOPOTENTIAL)


def prepare(run_dir):
    """Writes the input and the pseudopotential into run_dir; returns the command line."""
    os.makedirs(run_dir, exist_ok=True)
    with open(os.path.join(run_dir, "si.in"), "w") as f:
        f.write(INPUT)
    with gzip.open(PSEUDOPOTENTIAL, "rb") as src, \
            open(os.path.join(run_dir, "Si.pz-vbc.UPF"), "wb") as dst:
        shutil.copyfileobj(src, dst)
    return [PW, "-in", "si.in"]


def converged(run_dir_output):
    """pw.x's own verdict, from its standard output."""
    return "convergence has been achieved" in run_dir_output and "JOB DONE" in run_dir_output
