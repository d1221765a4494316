"""The srun command line of an MPI job in the tests' Slurm cluster, for either MPI.

srun_command("pmix", 4, [program, arg], preload=lib) gives
    srun --mpi=pmix -n 4 --export=ALL,OMPI_MCA_mpi_yield_when_idle=1,LD_PRELOAD=lib program arg
--export=ALL passes srun's environment (HTRACE_* among it) to the tasks, and LD_PRELOAD reaches
only the tasks: srun itself does not load the tracer.
"""

# srun's --mpi for each MPI: Open MPI talks PMIx to Slurm, Debian's MPICH PMI2.
PLUGINS = ("pmix", "pmi2")

# The node has more CPUs than cores (slurm_cluster.py), so its ranks share cores. mpirun
# --oversubscribe tells Open MPI so, and its ranks then yield the core while they poll; a rank
# started by srun cannot know, and 4 ranks busy-polling on 2 cores make a traced run slower and
# its archive larger by hundreds of thousands of MPI_Test* calls. The variable tells it.
TASK_ENV = {"pmix": {"OMPI_MCA_mpi_yield_when_idle": "1"}, "pmi2": {}}


def srun_command(plugin, np, program, preload=None, options=()):
    """[srun, --mpi=PLUGIN, -n NP, --export=ALL,..., OPTIONS..., PROGRAM...]"""
    if plugin not in PLUGINS:
        raise ValueError(f"MPI plugin '{plugin}' is none of {PLUGINS}")
    export = ["ALL"] + [f"{k}={v}" for k, v in TASK_ENV[plugin].items()]
    if preload:
        export.append(f"LD_PRELOAD={preload}")
    return (["srun", f"--mpi={plugin}", "-n", str(np), "--export=" + ",".join(export)] +
            list(options) + [str(p) for p in program])
