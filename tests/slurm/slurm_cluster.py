"""A private single-node Slurm cluster on this machine, for the tests in tests/slurm.

    with SlurmCluster() as cluster:
        done = cluster.run(["srun", "--mpi=pmix", "-n", "4", program])

Everything lives in one temporary directory: slurm.conf, munged's key, socket and seed,
slurmctld's state, slurmd's spool, pid and log files. The cluster has its own munged (its own key
and socket, so a munged of the machine, running or not, plays no part), slurmctld and slurmd on
free TCP ports, all as root. Entering waits until sinfo shows the node idle and fails with the
logs' tail when it does not come up; leaving cancels every job, stops the daemons and kills what
is left of the jobs, also when the test failed.

Machine assumptions, each a consequence of this machine or of Slurm 22.05:
- root: slurmd starts tasks as the submitting user and slurmstepd needs root for that;
- no cgroup plugin (proctrack/linuxproc, task/none): a container may have no usable cgroups;
- CPUs may exceed the cores (SlurmdParameters=config_overrides), so 4 ranks fit on 2 cores;
- munged refuses a socket directory that not everyone may enter: the directory is 0755;
- the slurmstepd of a job outlives slurmd, so the daemons get a marker variable in their
  environment, which every slurmstepd and task inherits; leaving kills the processes carrying it
  (by pid: only what this cluster started).
"""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from htrace_test.check import fail

# The marker variable (the cluster's directory) is no HTRACE_* one: libhtrace would warn.
MARKER = "TESTS_SLURM_CLUSTER"
DAEMONS = ("munged", "mungekey", "slurmctld", "slurmd", "srun", "sinfo", "scontrol", "scancel")
START_TIMEOUT = 30  # seconds until the node must be idle
SKIP = 77  # ctest's SKIP_RETURN_CODE


def skip_unless_possible():
    """Ends the test as skipped (77) unless it runs as root with Slurm and munge installed."""
    missing = [d for d in DAEMONS if shutil.which(d) is None and
               not os.access(os.path.join("/usr/sbin", d), os.X_OK)]
    reason = None
    if os.geteuid() != 0:
        reason = "needs root (slurmd starts the tasks)"
    elif missing:
        reason = "missing: " + " ".join(missing) + " (Debian packages slurm-wlm, munge)"
    if reason:
        print(f"SKIP: {reason}", flush=True)
        raise SystemExit(SKIP)


def _tool(name):
    return shutil.which(name) or os.path.join("/usr/sbin", name)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(path, lines=25):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError as error:
        return f"({error})\n"


class SlurmCluster:
    """The cluster; `cpus` CPUs on one node named after this host; `kill_wait` seconds from
    Slurm's SIGTERM to its SIGKILL when a job is cancelled or hits its time limit."""

    def __init__(self, cpus=4, kill_wait=5, keep=False):
        self.cpus = cpus
        self.kill_wait = kill_wait
        self.keep = keep  # keep the directory (the test failed and wants it inspected)
        self.host = socket.gethostname().split(".")[0]
        self.dir = None
        self.conf = None
        self._procs = []  # (name, Popen), in start order

    # --- setup -----------------------------------------------------------------------------

    def __enter__(self):
        self.dir = tempfile.mkdtemp(prefix="htrace-slurm-")
        os.chmod(self.dir, 0o755)
        try:
            self._start()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _start(self):
        munge = os.path.join(self.dir, "munge")
        os.mkdir(munge, 0o755)
        self.munge_socket = os.path.join(munge, "socket")
        key = os.path.join(munge, "munge.key")
        subprocess.run([_tool("mungekey"), "--create", "--keyfile", key], check=True,
                       capture_output=True)
        self._spawn("munged", [_tool("munged"), "--foreground", "--socket", self.munge_socket,
                               "--key-file", key, "--pid-file", os.path.join(munge, "pid"),
                               "--seed-file", os.path.join(munge, "seed")])
        self._wait_for(lambda: os.path.exists(self.munge_socket), 10, "munged's socket")
        self.conf = os.path.join(self.dir, "slurm.conf")
        with open(self.conf, "w") as f:
            f.write(self._slurm_conf())
        self._spawn("slurmctld", [_tool("slurmctld"), "-D", "-c", "-f", self.conf])
        self._spawn("slurmd", [_tool("slurmd"), "-D", "-f", self.conf])
        self._wait_for(self._node_idle, START_TIMEOUT, "the node to be idle in sinfo")

    def _slurm_conf(self):
        d = self.dir
        os.mkdir(os.path.join(d, "state"))
        os.mkdir(os.path.join(d, "spool"))
        open(os.path.join(d, "plugstack.conf"), "w").close()  # an empty SPANK stack
        return "\n".join([
            "ClusterName=htrace",
            f"SlurmctldHost={self.host}(127.0.0.1)",
            f"SlurmctldPort={_free_port()}",
            f"SlurmdPort={_free_port()}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket}",
            f"StateSaveLocation={d}/state",
            f"SlurmdSpoolDir={d}/spool",
            f"SlurmctldPidFile={d}/slurmctld.pid",
            f"SlurmdPidFile={d}/slurmd.pid",
            f"SlurmctldLogFile={d}/slurmctld.log",
            f"SlurmdLogFile={d}/slurmd.log",
            "SlurmctldDebug=info",
            "SlurmdDebug=info",
            f"PlugStackConfig={d}/plugstack.conf",  # none of the machine's SPANK plugins
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "SchedulerType=sched/builtin",
            "SwitchType=switch/none",
            "MpiDefault=none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "MailProg=/bin/true",
            f"KillWait={self.kill_wait}",
            "OverTimeLimit=0",
            "MinJobAge=600",  # finished jobs stay visible to scontrol for the checks
            "ReturnToService=2",
            "SlurmdParameters=config_overrides",
            f"NodeName={self.host} NodeAddr=127.0.0.1 CPUs={self.cpus} State=UNKNOWN",
            f"PartitionName=htrace Nodes={self.host} Default=YES MaxTime=INFINITE State=UP",
            ""])

    def _spawn(self, name, command):
        log = open(os.path.join(self.dir, f"{name}.out"), "w")
        env = self.env()
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env,
                                cwd=self.dir, start_new_session=True)
        log.close()
        self._procs.append((name, proc))

    def _wait_for(self, ready, timeout, what):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for name, proc in self._procs:
                if proc.poll() is not None:
                    fail(f"{name} exited with status {proc.returncode} while waiting for {what}\n"
                         + self.logs())
            if ready():
                return
            time.sleep(0.2)
        fail(f"no {what} within {timeout} s\n" + self.logs())

    def _node_idle(self):
        out = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], env=self.env(),
                             capture_output=True, text=True)
        return out.returncode == 0 and out.stdout.strip() == "idle"

    def logs(self):
        """The tail of every log of the cluster, for a failure message."""
        text = ""
        for name in ("munged.out", "slurmctld.log", "slurmctld.out", "slurmd.log", "slurmd.out"):
            text += f"--- {os.path.join(self.dir, name)}\n{_tail(os.path.join(self.dir, name))}"
        return text

    # --- use -------------------------------------------------------------------------------

    def env(self, extra=None):
        """The environment of Slurm's commands: this cluster's SLURM_CONF, no variable of a job
        the test itself may run in, and the marker every process of the cluster inherits."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SBATCH_",
                                                                        "SRUN_", "SALLOC_"))}
        env.pop("LD_PRELOAD", None)
        env["SLURM_CONF"] = self.conf or ""
        env[MARKER] = self.dir
        env.update(extra or {})
        return env

    def run(self, command, timeout=120, env=None, cwd=None):
        """Runs a Slurm command (srun, scontrol, ...) to its end: (CompletedProcess, seconds)."""
        start = time.monotonic()
        try:
            done = subprocess.run(command, env=self.env(env), cwd=cwd or self.dir,
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as expired:
            fail(f"{' '.join(command)} did not end within {timeout} s\nstdout: {expired.stdout}\n"
                 f"stderr: {expired.stderr}\n" + self.logs())
        return done, time.monotonic() - start

    def start(self, command, env=None, cwd=None):
        """Starts a Slurm command in the background: a Popen with text stdout and stderr."""
        return subprocess.Popen(command, env=self.env(env), cwd=cwd or self.dir, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def job(self, name, settled=True, timeout=30):
        """{field: value} of the job named `name` from scontrol show job; {} if there is none.
        settled: first wait (bounded) until it is no longer COMPLETING: srun returns when the
        tasks have ended, slurmd reports the job's end a moment later."""
        deadline = time.monotonic() + timeout
        while True:
            out = subprocess.run(["scontrol", "-o", "show", "job"], env=self.env(),
                                 capture_output=True, text=True).stdout
            fields = {}
            for line in out.splitlines():
                words = dict(w.split("=", 1) for w in line.split() if "=" in w)
                if words.get("JobName") == name:
                    fields = words
            if not settled or fields.get("JobState") != "COMPLETING" or \
                    time.monotonic() > deadline:
                return fields
            time.sleep(0.5)

    # --- teardown --------------------------------------------------------------------------

    def __exit__(self, *_):
        if self.conf and any(n == "slurmctld" and p.poll() is None for n, p in self._procs):
            subprocess.run(["scancel", "--full", "--quiet", "--user", "root"], env=self.env(),
                           capture_output=True, timeout=30)
        for name, proc in reversed(self._procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        self._kill_leftovers()
        if self.dir and not self.keep:
            shutil.rmtree(self.dir, ignore_errors=True)
        elif self.dir:
            print(f"Slurm cluster directory kept: {self.dir}", flush=True)
        return False

    def _kill_leftovers(self):
        """SIGKILL every process whose environment carries this cluster's marker (slurmstepd and
        the tasks of jobs still running), by pid."""
        needle = b"\0" + f"{MARKER}={self.dir}".encode() + b"\0"
        for pid in filter(str.isdigit, os.listdir("/proc")):
            if int(pid) == os.getpid():
                continue
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    if needle in b"\0" + f.read() + b"\0":
                        os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
