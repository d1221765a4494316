#!/bin/sh
# Runs the Fortran sentinel program under the tracer on 3 ranks and checks the archive.
# usage: fortran_sentinels.sh PROGRAM TRACE_CHECK
set -e
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
HTRACE_ARCHIVE_DIR=$dir HTRACE_ARCHIVE_NAME=fortran HTRACE_VERBOSE=0 \
  $MPIRUN -np 3 -x HTRACE_ARCHIVE_DIR -x HTRACE_ARCHIVE_NAME -x HTRACE_VERBOSE -x LD_PRELOAD="$HTRACE_LIB" "$1"
"$HTRACE_PYTHON" "$2" "$dir/fortran" --quiet --expect-locations 3 --expect-messages 3
