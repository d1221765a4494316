#!/usr/bin/env bash
# Open MPI's mpi_f08 procedures reach the MPI library through undefined symbols of
# libmpi_usempif08.so: ompi_<name>_f (the mpif.h implementation), pmpi_<name>_ (functions with
# LOGICAL arguments) and a few PMPI_* C functions. libhtrace must define an entry point for each
# (ompi_<name>_f, or mpi_<name>_f08_ for the pmpi_ ones), except the documented ones
# (libtrace/mpi/README.md): MPI_Aint_add/MPI_Aint_diff (address arithmetic, not in mpi.h's table),
# MPI_F_sync_reg (a compiler barrier) and MPI_Buffer_detach (f08 calls PMPI_Buffer_detach).
#   f08_entry_points.sh LIBHTRACE
set -euo pipefail
lib=$1
f08=
for dir in $(mpifort --showme:libdirs) /usr/lib/x86_64-linux-gnu/openmpi/lib; do
  [[ -r $dir/libmpi_usempif08.so ]] && { f08=$dir/libmpi_usempif08.so; break; }
done
[[ -n $f08 ]] || { echo "FAIL: libmpi_usempif08.so not found"; exit 1; }
ours=$(nm -D --defined-only "$lib" | awk 'NF == 3 {print $3}' | sort)
undefined=$(nm -D --undefined-only "$f08" | awk '{print $2}')
wanted=$( (grep -E '^ompi_[a-z0-9_]+_f$' <<<"$undefined" || true
           grep -E '^pmpi_[a-z0-9_]+_$' <<<"$undefined" | sed -E 's/^pmpi_(.*)_$/mpi_\1_f08_/' || true) | sort)
missing=$(comm -23 <(echo "$wanted") <(echo "$ours") | tr '\n' ' ')
direct=$(grep -E '^PMPI_' <<<"$undefined" | tr '\n' ' ' || true)
echo "$(wc -l <<<"$wanted") f08 routes into the MPI library; not intercepted: ${missing:-none};" \
  "direct PMPI calls: ${direct:-none}"
status=0
[[ $missing == "ompi_aint_add_f ompi_aint_diff_f ompi_f_sync_reg_f " ]] ||
  { echo "FAIL: undocumented f08 routes without an htrace entry point: $missing"; status=1; }
[[ $direct == "PMPI_Buffer_detach " ]] ||
  { echo "FAIL: f08 calls PMPI functions directly beyond MPI_Buffer_detach: $direct"; status=1; }
exit $status
