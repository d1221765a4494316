#!/bin/sh
# usage: rank_files.sh DIR PROGRAM ARGS...   (the command a launcher starts on every rank)
# Runs PROGRAM with its stdout and stderr in DIR/rank-R.out and DIR/rank-R.err, R the world rank
# the launcher gives it (Open MPI, PMIx, hydra, Slurm). The rank writes them itself: a launcher
# may drop or cut what it forwards. See rank_output.py.
rank=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-${PMI_RANK:-${SLURM_PROCID:-unknown}}}}
dir=$1
shift
exec "$@" >"$dir/rank-$rank.out" 2>"$dir/rank-$rank.err"
