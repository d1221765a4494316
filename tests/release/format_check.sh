#!/usr/bin/env bash
# Every C/C++ source of the repository is formatted as the checked-in .clang-format says, with
# clang-format 14 (Debian 12's; other versions format some constructs differently, so the test
# skips rather than fails with them). Fix with: clang-format-14 -i FILE...
#   format_check.sh SOURCE_DIR
set -euo pipefail
cd "$1"
cf=${CLANG_FORMAT:-$(command -v clang-format-14 || command -v clang-format || true)}
if [[ -z $cf ]]; then
  echo "SKIP: clang-format 14 not installed (Debian package clang-format)"
  exit 77
fi
if ! "$cf" --version | grep -q "version 14\."; then
  echo "SKIP: $("$cf" --version) is not clang-format 14"
  exit 77
fi
if [[ -d .git || -f .git ]]; then
  mapfile -t files < <(git ls-files -- '*.c' '*.cpp' '*.h')
else
  mapfile -t files < <(find . -path ./build -prune -o \( -name '*.c' -o -name '*.cpp' -o -name '*.h' \) -print)
fi
bad=()
for f in "${files[@]}"; do
  [[ -f $f ]] || continue
  "$cf" --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if ((${#bad[@]})); then
  echo "FAIL: ${#bad[@]} of ${#files[@]} files are not formatted (clang-format-14 -i to fix):"
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "${#files[@]} files formatted as .clang-format says"
