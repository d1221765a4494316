#!/usr/bin/env bash
# A malformed option is an error that names the variable; a valid one passes.
set -uo pipefail
config=$1
out=$(HTRACE_BUFFER_SIZE=12x "$config" --check 2>&1); rc=$?
[[ $rc -eq 1 ]] || { echo "expected exit 1, got $rc"; exit 1; }
[[ $out == *"HTRACE_BUFFER_SIZE='12x'"* ]] || { echo "error does not name the variable: $out"; exit 1; }
HTRACE_BUFFER_SIZE=64k "$config" --check >/dev/null || { echo "valid value rejected"; exit 1; }
"$config" --bogus 2>/dev/null; [[ $? -eq 2 ]] || { echo "usage error must exit 2"; exit 1; }
