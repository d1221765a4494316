#!/bin/sh
# Runs the Fortran sentinel program under the tracer on 3 ranks and checks the archive.
# usage: fortran_sentinels.sh PROGRAM TRACE_CHECK
set -e
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
HTRACE_ARCHIVE_DIR=$dir HTRACE_ARCHIVE_NAME=fortran HTRACE_VERBOSE=0 \
  "$HTRACE_PYTHON" -m htrace_test.mpi -np 3 --forward HTRACE_ARCHIVE_DIR --forward HTRACE_ARCHIVE_NAME \
  --forward HTRACE_VERBOSE --preload "$HTRACE_LIB" -- "$1"
"$HTRACE_PYTHON" "$2" "$dir/fortran" --quiet --expect-locations 3 --expect-messages 3
