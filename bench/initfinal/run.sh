#!/usr/bin/env bash
# Added MPI_Init / MPI_Finalize time of libhtrace against p, old code next to new (see README.md).
# usage: bench/initfinal/run.sh [BUILD_DIR]
#   env: REPEAT (3), PS ("2 4 8 16 32 64"), CLUSTER_PS (same), OLD_REV (9922db9),
#        OLD_BUILD (a build tree of OLD_REV; made under BUILD_DIR/bench/initfinal when absent),
#        OUT (BUILD_DIR/bench/initfinal/results), MODEL_REPEAT (1)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=$(cd "${1:-${HTRACE_BUILD_DIR:-$repo/build}}" && pwd)
old_rev=${OLD_REV:-9922db9}
old_build=${OLD_BUILD:-$build/bench/initfinal/old-build}
out=${OUT:-$build/bench/initfinal/results}
mkdir -p "$out"

cmake --build "$build" --target htrace initfinal_barriers timens_exec >/dev/null
if [[ ! -f $old_build/libtrace/libhtrace.so ]]; then
  # The code before the tree merge, in its own worktree and build tree (only libhtrace).
  old_src=$build/bench/initfinal/old-src
  [[ -d $old_src ]] || git -C "$repo" worktree add --detach "$old_src" "$old_rev" >/dev/null
  echo "# building libhtrace at $old_rev in $old_build (once)" >&2
  cmake -S "$old_src" -B "$old_build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$old_build" -j"$(nproc)" --target htrace >/dev/null
fi

python3 "$here/measure.py" \
  --program "$build/bench/initfinal/initfinal_barriers" \
  --cluster "$build/tests/cluster/htrace-cluster-run" \
  --variant "old=$old_build/libtrace/libhtrace.so" \
  --variant "new=$build/libtrace/libhtrace.so" \
  --ps "${PS:-2 4 8 16 32 64}" --cluster-ps "${CLUSTER_PS:-${PS:-2 4 8 16 32 64}}" \
  --repeat "${REPEAT:-3}" --model-repeat "${MODEL_REPEAT:-1}" | tee "$out/initfinal.md"
