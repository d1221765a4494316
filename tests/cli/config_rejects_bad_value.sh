#!/usr/bin/env bash
# htrace-config --check runs libhtrace's parser: a bad value is an error naming the variable (exit
# 1), an unknown HTRACE_* variable a warning naming the closest option (exit 0).
set -uo pipefail
config=$1
out=$(HTRACE_BUFFER_SIZE=12x "$config" --check 2>&1); rc=$?
[[ $rc -eq 1 ]] || { echo "expected exit 1, got $rc"; exit 1; }
[[ $out == *"HTRACE_BUFFER_SIZE='12x'"* ]] || { echo "error does not name the variable: $out"; exit 1; }
out=$(HTRACE_HARMONIZE_SHRINK_PERCENT=150 "$config" --check 2>&1); rc=$?
[[ $rc -eq 1 && $out == *"HTRACE_HARMONIZE_SHRINK_PERCENT='150' is not an integer in 1..100"* ]] ||
  { echo "out-of-range value: exit $rc: $out"; exit 1; }
out=$(HTRACE_BUDGET=abc "$config" --check 2>&1); rc=$?
[[ $rc -eq 1 && $out == *"HTRACE_BUDGET='abc' is not a byte count such as 4096, 64k, 16M or 1G"* ]] ||
  { echo "bad budget: exit $rc: $out"; exit 1; }
HTRACE_BUFFER_SIZE=64k "$config" --check >/dev/null || { echo "valid value rejected"; exit 1; }
HTRACE_BUDGET=512M "$config" --check >/dev/null || { echo "valid budget rejected"; exit 1; }
filter=$(mktemp)
printf 'SCOREP_REGION_NAMES_BEGIN\n EXCLUDE MPI_Test*\n' >"$filter"
out=$(HTRACE_FILTER_FILE=$filter "$config" --check 2>&1); rc=$?
rm -f "$filter"
[[ $rc -eq 1 && $out == *"HTRACE_FILTER_FILE='$filter': line 1: SCOREP_REGION_NAMES_BEGIN without its END"* ]] ||
  { echo "malformed filter file: exit $rc: $out"; exit 1; }
out=$(HTRACE_OVERWRTE=1 "$config" --check 2>&1); rc=$?
[[ $rc -eq 0 ]] || { echo "unknown variable: exit $rc: $out"; exit 1; }
[[ $out == *"htrace-config: warning: HTRACE_OVERWRTE: unknown option; did you mean HTRACE_OVERWRITE?"* ]] ||
  { echo "unknown variable: $out"; exit 1; }
[[ $(grep -c warning <<<"$out") -eq 1 ]] || { echo "the test environment's variables warn: $out"; exit 1; }
"$config" --bogus 2>/dev/null; [[ $? -eq 2 ]] || { echo "usage error must exit 2"; exit 1; }
echo PASS
