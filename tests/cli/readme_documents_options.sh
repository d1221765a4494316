#!/usr/bin/env bash
# Every row of the option table must appear in the README's option table.
set -euo pipefail
config=$1 readme=$2
missing=0
while IFS= read -r var; do
  if ! grep -q "\`$var\`" "$readme"; then
    echo "README.md does not document $var (run htrace-config --markdown)" >&2
    missing=1
  fi
done < <("$config" --markdown | sed -n 's/^| `\(HTRACE_[A-Z_]*\)`.*/\1/p')
exit $missing
