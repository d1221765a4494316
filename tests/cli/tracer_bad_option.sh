#!/usr/bin/env bash
# libhtrace's one policy for its options, end to end: a bad HTRACE_* value turns tracing off for
# the whole run (no archive, no OMPT, every rank) with one error line naming the variable, value
# and accepted form; the application runs with its own exit status. An unknown HTRACE_* variable
# gives one warning naming the closest option and changes nothing else.
# libhtrace's lines are read from HTRACE_LOG_FILE and the program's own from the files its ranks
# write (tests/lib/htrace_test/rank_files.sh), never from what the launcher forwards.
set -uo pipefail
examples=${HTRACE_BUILD_DIR:?}/examples
ring=$examples/pingpong-ring/pingpong-ring
failures_app=$examples/failures/failures
rank_files=${HTRACE_SOURCE_DIR:?}/tests/lib/htrace_test/rank_files.sh
read -r -a mpirun <<<"${MPIRUN:-mpirun}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=1; }

traced() { # traced NAME ARG...: runs mpirun ARG..., its output into $work/NAME.launcher, exit in $rc
  local name=$1
  shift
  timeout 120 "${mpirun[@]}" "$@" >"$work/$name.launcher" 2>&1
  rc=$?
}
env_of() { # env_of NAME=VALUE: the launcher's option setting NAME for the ranks (of one MPMD context)
  if [[ ${HTRACE_MPI_FLAVOR:-openmpi} == mpich ]]; then echo "-env ${1%%=*} ${1#*=}"; else echo "-x $1"; fi
}
# preload NAME: the options that trace into $work/NAME and log into $work/NAME.log (per app
# context for MPMD)
preload() {
  mkdir -p "$work/$1"
  touch "$work/$1.log"
  echo "$(env_of LD_PRELOAD="${HTRACE_LIB:?}") $(env_of HTRACE_ARCHIVE_DIR="$work/$1")" \
    "$(env_of HTRACE_LOG_FILE="$work/$1.log")"
}
# ranks NAME: the prefix of the program that has each rank write its stdout and stderr into
# $work/NAME.ranks/rank-R.{out,err}
ranks() {
  mkdir -p "$work/$1.ranks"
  echo "sh $rank_files $work/$1.ranks"
}
# said NAME: everything the run said, for a failure message
said() { cat "$work/$1.log" "$work/$1.ranks"/* "$work/$1.launcher" 2>/dev/null; }
archives() { find "$work/$1" -mindepth 1 -maxdepth 1 | wc -l; }

size_error="HTRACE_BUFFER_SIZE='12x' is not a byte count such as 4096, 64k, 16M or 1G; tracing is off for this run"

# A bad value on every rank: one line (from the first rank), nothing traced, the program runs.
traced bad -np 2 $(preload bad) $(env_of HTRACE_BUFFER_SIZE=12x) $(ranks bad) "$ring"
[[ $rc -eq 0 ]] || fail "bad value: the program's exit status became $rc"
[[ $(grep -c "error: HTRACE_BUFFER_SIZE" "$work/bad.log") -eq 1 ]] ||
  fail "bad value: not one error line: $(said bad)"
grep -qF "htrace[0]: error: $size_error" "$work/bad.log" || fail "bad value: message: $(said bad)"
[[ $(archives bad) -eq 0 ]] || fail "bad value: an archive was written"

# HTRACE_BUDGET is a Size like HTRACE_BUFFER_SIZE: a bad one turns tracing off the same way.
traced budget -np 2 $(preload budget) $(env_of HTRACE_BUDGET=abc) $(ranks budget) "$ring"
[[ $rc -eq 0 ]] || fail "bad budget: the program's exit status became $rc"
grep -qF "htrace[0]: error: HTRACE_BUDGET='abc' is not a byte count such as 4096, 64k, 16M or 1G; tracing is off for this run" \
  "$work/budget.log" || fail "bad budget: message: $(said budget)"
[[ $(grep -c "error:" "$work/budget.log") -eq 1 ]] || fail "bad budget: not one error line: $(said budget)"
grep -q "pingpong-ring: ranks=2 .* OK" "$work/budget.ranks/rank-0.out" || fail "bad budget: the program's output: $(said budget)"
[[ $(archives budget) -eq 0 ]] || fail "bad budget: an archive was written"

# HTRACE_SYNC_INTERVAL_MS is auto or milliseconds, checked when the options are read.
traced interval -np 2 $(preload interval) $(env_of HTRACE_SYNC_INTERVAL_MS=5s) $(ranks interval) "$ring"
[[ $rc -eq 0 ]] || fail "bad interval: the program's exit status became $rc"
grep -qF "htrace[0]: error: HTRACE_SYNC_INTERVAL_MS='5s' is not auto or an integer in 0..86400000; tracing is off for this run" \
  "$work/interval.log" || fail "bad interval: message: $(said interval)"
grep -q "pingpong-ring: ranks=2 .* OK" "$work/interval.ranks/rank-0.out" || fail "bad interval: the program's output: $(said interval)"
[[ $(archives interval) -eq 0 ]] || fail "bad interval: an archive was written"

# The application's own exit status survives (failures without arguments exits 2).
traced status -np 2 $(preload status) $(env_of HTRACE_BUFFER_SIZE=12x) $(ranks status) "$failures_app"
[[ $rc -eq 2 ]] || fail "the program's exit status 2 became $rc"
grep -q "usage: failures" "$work/status.ranks/rank-0.err" || fail "the program's own message is missing: $(said status)"

# A malformed Score-P filter file is a bad value too, named with its line.
printf 'SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE MPI_Test*\n  INCLUDE\nSCOREP_REGION_NAMES_END\n' >"$work/bad.filter"
traced filter -np 2 $(preload filter) $(env_of HTRACE_FILTER_FILE="$work/bad.filter") $(ranks filter) "$ring"
[[ $rc -eq 0 ]] || fail "bad filter file: the program's exit status became $rc"
grep -qF "htrace[0]: error: HTRACE_FILTER_FILE='$work/bad.filter': line 3: INCLUDE without a name pattern; tracing is off for this run" \
  "$work/filter.log" || fail "bad filter file: message: $(said filter)"
[[ $(grep -c "error:" "$work/filter.log") -eq 1 ]] || fail "bad filter file: not one error line: $(said filter)"
[[ $(archives filter) -eq 0 ]] || fail "bad filter file: an archive was written"
grep -q "pingpong-ring: ranks=2" "$work/filter.ranks/rank-0.out" ||
  fail "bad filter file: the program's result is missing: $(said filter)"

# Different environments per rank (MPMD): rank 1's bad value turns tracing off on both, no hang.
traced mpmd -np 1 $(preload mpmd) $(ranks mpmd) "$ring" : -np 1 $(preload mpmd) $(env_of HTRACE_VERBOSE=9) $(ranks mpmd) "$ring"
[[ $rc -eq 0 ]] || fail "MPMD: exit $rc"
[[ $(grep -c "error:" "$work/mpmd.log") -eq 1 ]] || fail "MPMD: not one error line: $(said mpmd)"
grep -qF "htrace[1]: error: HTRACE_VERBOSE='9' is not an integer in 0..2; tracing is off" "$work/mpmd.log" ||
  fail "MPMD: message: $(said mpmd)"
[[ $(archives mpmd) -eq 0 ]] || fail "MPMD: an archive was written"

# An unknown variable warns once and the run is traced; the tests' own HTRACE_* (HTRACE_LIB, ...)
# are known and silent.
traced unknown -np 2 $(preload unknown) $(env_of HTRACE_BUFER_SIZE=1M) $(env_of HTRACE_CLUSTER_OFFSETS=0) \
  $(ranks unknown) "$ring"
[[ $rc -eq 0 ]] || fail "unknown variable: exit $rc"
[[ $(grep -c "warning:" "$work/unknown.log") -eq 1 ]] || fail "unknown variable: not one warning: $(said unknown)"
grep -qF "htrace[0]: warning: HTRACE_BUFER_SIZE: unknown option; did you mean HTRACE_BUFFER_SIZE?" \
  "$work/unknown.log" || fail "unknown variable: message: $(said unknown)"
[[ $(archives unknown) -eq 1 ]] || fail "unknown variable: the run was not traced"

# HTRACE_ENABLE differing between ranks must not leave one rank in the recorder's collective start:
# both run untraced, and rank 0 says why.
traced mixed -np 1 $(preload mixed) $(ranks mixed) "$ring" : -np 1 $(preload mixed) $(env_of HTRACE_ENABLE=0) \
  $(ranks mixed) "$ring"
[[ $rc -eq 0 ]] || fail "mixed HTRACE_ENABLE: exit $rc"
grep -qF "htrace[0]: warning: HTRACE_ENABLE differs between ranks; tracing is off for this run" \
  "$work/mixed.log" || fail "mixed HTRACE_ENABLE: message: $(said mixed)"
[[ $(archives mixed) -eq 0 ]] || fail "mixed HTRACE_ENABLE: an archive was written"

[[ $failed -eq 0 ]] || exit 1
echo PASS
