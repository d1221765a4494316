#!/usr/bin/env bash
# libhtrace.so exports only what a traced program or its runtimes must resolve in it:
#   MPI_*     the C wrappers and MPI_Init & co. (no PMPI_*: those must stay the MPI library's,
#             or the wrappers would call themselves)
#   mpi_*     the Fortran entry points (mpi_x_, mpi_x__, mpi_x, mpi_x_f08_, mpi_x_cptr_) and their
#             upper-case aliases MPI_X
#   ompi_*_f  the same entry points under the names Open MPI's mpi_f08 procedures call (Open MPI)
#   MPIX_*    include/htrace/mpix_harmonize.h
#   htrace_*  include/htrace/version.h (C functions only; C++ symbols are mangled and never match)
#   ompt_start_tool (when built with OMPT)
# Anything else (an internal C++ symbol, a std:: template instance) fails the test, named.
#   exported_symbols.sh LIBHTRACE [ompt]
set -euo pipefail
lib=$1
with_ompt=${2:-}

symbols=$(nm -D --defined-only "$lib" | awk 'NF == 3 {print $3}')
[[ -n $symbols ]] || { echo "FAIL: nm -D found no defined symbol in $lib"; exit 1; }

allowed='^(MPI_[A-Za-z0-9_]+|mpi_[a-z0-9_]+|ompi_[a-z0-9_]+_f|MPIX_[A-Za-z0-9_]+|htrace_[a-z0-9_]+|ompt_start_tool)$'
leaked=$(grep -Ev "$allowed" <<<"$symbols" || true)
status=0
if [[ -n $leaked ]]; then
  echo "FAIL: $(wc -l <<<"$leaked") symbols exported beyond the allowed set:"
  c++filt <<<"$leaked" | head -40 | cut -c1-160 | sed "s/^/  /"
  status=1
fi

# ... and the routes beyond mpi.h's current C functions: a removed MPI-1 function in C
# and Fortran, a Fortran-only FUNCTION, a `use mpi` C_PTR twin, f08's direct PMPI route.
required=(MPI_Init MPI_Init_thread MPI_Finalize MPI_Abort MPI_Send MPI_Allreduce mpi_test_f08_
          MPIX_Harmonize htrace_version MPI_Address MPI_Attr_get mpi_f_sync_reg_)
if [[ ${HTRACE_MPI_FLAVOR:-openmpi} == mpich ]]; then
  # MPICH's mpif.h procedures reach the C wrappers, except the attribute ones; its f08
  # procedures without choice buffers are interposed, MPI_Init's among them.
  required+=(mpi_attr_get_ mpi_comm_get_attr_ mpi_init_f08_ mpi_barrier_f08_ mpi_aint_add_f08_
             mpi_f_sync_reg_f08ts_ MPI_Isendrecv MPI_Send_c)
else
  required+=(mpi_init_ mpi_send_ mpi_send__ mpi_send MPI_SEND ompi_send_f mpi_address_ ompi_aint_add_f
             mpi_win_allocate_cptr_ mpi_buffer_detach_f08_)
fi
[[ $with_ompt == ompt ]] && required+=(ompt_start_tool)
for s in "${required[@]}"; do
  grep -qx "$s" <<<"$symbols" || { echo "FAIL: $s is not exported"; status=1; }
done

echo "$(wc -l <<<"$symbols") exported symbols: $(grep -c '^MPI_' <<<"$symbols") MPI_*," \
  "$(grep -c '^mpi_' <<<"$symbols") mpi_*, $(grep -Ec '^(MPIX_|htrace_|ompt_)' <<<"$symbols") API"
exit $status
