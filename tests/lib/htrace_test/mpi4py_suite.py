"""mpi4py's own test suite (../shared/third-party/mpi4py-3.1.4/test, run with Debian's
python3-mpi4py) under mpirun, traced or not: the one runner of tests/coverage/mpi4py_suite.py and
of the mpi4py benchmark. Each rank writes its output into its own file (htrace_test.rank_output):
in a shared stream the ranks' partial lines interleave, and a launcher may drop some."""
import os
import re
import signal
import subprocess
import time

from htrace_test.mpi import mpirun_command
from htrace_test.rank_output import RankOutput

DEFAULT_SUITE = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                              "..", "..", "shared", "third-party", "mpi4py-3.1.4",
                                              "test"))


def missing_module():
    """Why the suite cannot run here, or None: it runs the installed module, and without it every
    run fails alike, traced as untraced."""
    if subprocess.run(["/usr/bin/python3", "-c", "import mpi4py"], capture_output=True).returncode:
        return "/usr/bin/python3 cannot import mpi4py (apt-get install python3-mpi4py)"
    return None


def verdicts(output):
    """{rank: 'Ran N OK (skipped=S)'} from each rank's own output files (a RankOutput)."""
    out = {}
    for rank in output.ranks():
        text = output.stdout(rank) + output.stderr(rank)
        ran = re.findall(r"^Ran (\d+) tests? in", text, re.M)
        result = re.findall(r"^(OK|FAILED)\b(.*)$", text, re.M)
        if ran and result:
            out[rank] = f"Ran {ran[-1]} {result[-1][0]}{result[-1][1].rstrip()}"
    return out


def run(ranks, work, output_dir, suite=DEFAULT_SUITE, lib=None, archive_name=None, only=None,
        exclude=None, timeout=600):
    """Runs runtests.py on `ranks` ranks in `work`; traced when `lib` is given (archives into
    work, named archive_name if given); the ranks' output goes into output_dir. only/exclude:
    runtests.py -i/-e patterns. Returns dict: hung, status (None if hung), verdicts ({rank:
    verdict}), seconds, log (libhtrace's lines), stdout and stderr (mpirun's own). A hung run is
    killed with everything mpirun started (its own session) after `timeout` s."""
    forward = []
    if lib:
        forward = ["HTRACE_ARCHIVE_DIR=" + work]
        if archive_name:
            forward.append("HTRACE_ARCHIVE_NAME=" + archive_name)
    program = ["/usr/bin/python3", os.path.join(suite, "runtests.py")]
    if only:
        program += ["-i", only]
    if exclude:
        program += ["-e", exclude]
    output = RankOutput(output_dir)
    cmd = mpirun_command(ranks, program, forward=forward, preload=os.path.abspath(lib) if lib else None,
                         output=output)
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=work,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        hung = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        hung = True
    return {"hung": hung, "status": None if hung else proc.returncode, "verdicts": verdicts(output),
            "seconds": timeout if hung else time.monotonic() - start, "log": output.log(),
            "stdout": out or "", "stderr": err or ""}
