#!/usr/bin/env bash
# Every route of `use mpi_f08` into the MPI library that bypasses the C entry points has an htrace
# entry point. MPICH (HTRACE_MPI_FLAVOR=mpich): each f08 procedure mpi_<name>_f08_ of libmpichfort
# without choice buffers calls PMPI_<Name> itself, so each one of a function htrace wraps (the
# C wrapper exists) is interposed; `objdump -d libmpichfort.so` shows which procedures call PMPI.
# Open MPI's mpi_f08 procedures reach the MPI library through undefined symbols of
# libmpi_usempif08.so: ompi_<name>_f (the mpif.h implementation), pmpi_<name>_ (functions with
# LOGICAL arguments) and a few PMPI_* C functions. libhtrace must define an entry point for each:
# ompi_<name>_f, or mpi_<name>_f08_ for the pmpi_<name>_ and PMPI_<Name> routes (the f08 procedure
# itself is interposed: MPI_Buffer_detach calls PMPI_Buffer_detach). No exceptions.
#   f08_entry_points.sh LIBHTRACE
set -euo pipefail
lib=$1
ours=$(nm -D --defined-only "$lib" | awk 'NF == 3 {print $3}' | sort)
if [[ ${HTRACE_MPI_FLAVOR:-openmpi} == mpich ]]; then
  fort=/usr/lib/x86_64-linux-gnu/libmpichfort.so.12
  [[ -r $fort ]] || { echo "FAIL: $fort not found"; exit 1; }
  procedures=$(nm -D --defined-only "$fort" | awk 'NF == 3 && $3 ~ /^mpi_[a-z0-9_]+_f08_$/ {print $3}')
  # Functions with a C wrapper in libhtrace (MPI_Send -> mpi_send_f08_).
  wrapped=$(grep -E '^MPI_[A-Z][a-z0-9_]+$' <<<"$ours" | sed -E 's/^MPI_(.*)$/mpi_\L\1_f08_/')
  wanted=$(comm -12 <(sort <<<"$procedures") <(sort <<<"$wrapped"))
  missing=$(comm -23 <(echo "$wanted") <(echo "$ours") | tr '\n' ' ')
  echo "$(wc -l <<<"$wanted") f08 procedures call PMPI directly; not intercepted: ${missing:-none}"
  [[ -z $missing ]] || { echo "FAIL: f08 procedures without an htrace entry point: $missing"; exit 1; }
  exit 0
fi
f08=
for dir in $(mpifort --showme:libdirs) /usr/lib/x86_64-linux-gnu/openmpi/lib; do
  [[ -r $dir/libmpi_usempif08.so ]] && { f08=$dir/libmpi_usempif08.so; break; }
done
[[ -n $f08 ]] || { echo "FAIL: libmpi_usempif08.so not found"; exit 1; }
undefined=$(nm -D --undefined-only "$f08" | awk '{print $2}')
# PMPI_Buffer_detach -> mpi_buffer_detach_f08_
direct=$(grep -E '^PMPI_[A-Z][a-z0-9_]+$' <<<"$undefined" | grep -vE '_(c2f|f2c)$' || true)
wanted=$( (grep -E '^ompi_[a-z0-9_]+_f$' <<<"$undefined" || true
           grep -E '^pmpi_[a-z0-9_]+_$' <<<"$undefined" | sed -E 's/^pmpi_(.*)_$/mpi_\1_f08_/' || true
           [[ -z $direct ]] || sed -E 's/^PMPI_(.*)$/mpi_\L\1_f08_/' <<<"$direct") | sort)
missing=$(comm -23 <(echo "$wanted") <(echo "$ours") | tr '\n' ' ')
echo "$(wc -l <<<"$wanted") f08 routes into the MPI library (direct PMPI calls:" \
  "$(tr '\n' ' ' <<<"${direct:-none}")); not intercepted: ${missing:-none}"
[[ -z $missing ]] || { echo "FAIL: f08 routes without an htrace entry point: $missing"; exit 1; }
