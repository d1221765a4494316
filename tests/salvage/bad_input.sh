#!/usr/bin/env bash
# htrace-salvage's refusals, one behaviour each: exact exit code (never a signal), a one-line
# message naming the file, the input unchanged, nothing left under OUT's name or as a temporary.
# usage: bad_input.sh HTRACE_SALVAGE
set -uo pipefail
salvage=$1
work=$(mktemp -d)
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

expect() { # expect CODE MESSAGE-REGEX IN OUT
  local code=$1 message=$2 in=$3 out=$4 before after
  before=$(find "$in" -type f -exec sha256sum {} + 2>/dev/null | sort)
  "$salvage" "$in" "$out" >stdout 2>stderr
  local rc=$?
  after=$(find "$in" -type f -exec sha256sum {} + 2>/dev/null | sort)
  [[ $rc == "$code" ]] || fail "'$in' '$out': exit $rc, expected $code ($(cat stderr))"
  [[ $(wc -l <stderr) == 1 ]] && grep -Eq "^htrace-salvage: error: .*$message" stderr ||
    fail "'$in': message '$(cat stderr)' does not match '$message'"
  [[ $before == "$after" ]] || fail "'$in': input changed"
  ls -a | grep -q 'htrace-salvage-' && fail "a temporary directory was left behind"
}

# Inputs that are not salvageable: no directory, no salvage files, a finished archive, a damaged file.
mkdir -p nosalvage/traces complete damaged/salvage damaged/traces
touch complete/traces.otf2
printf 'not a salvage file' >damaged/salvage/0.defs
printf 'running' >damaged/salvage/0.end

expect 3 "no such|not a directory" missing out
expect 3 "no salvage files" nosalvage out
expect 3 "a complete archive" complete out
expect 3 "not an htrace salvage file" damaged out
[[ -e out ]] && fail "OUT created on bad input"
mkdir existing
expect 4 "output exists" damaged existing
mkdir readonly && chmod a-w readonly
if [[ $(id -u) != 0 ]]; then
  expect 4 "cannot create OUT there" damaged readonly/out
fi
expect 4 "parent directory does not exist" damaged nowhere/out

[[ $failures == 0 ]] && echo PASS
exit $((failures > 0))
