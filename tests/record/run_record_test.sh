#!/bin/bash
# usage: run_record_test.sh CASE RECORD_WRITER CHECK_ARCHIVE_PY [HTRACE_SALVAGE]
# Runs record_writer with 2 ranks under $MPIRUN in a scratch directory and checks the outcome.
# What the ranks say is read from files, never from what the launcher forwards (it may drop lines):
# each rank writes its own stdout and stderr (tests/lib/htrace_test/rank_files.sh), the recorder
# its diagnostics into HTRACE_LOG_FILE.
set -u
case_name=$1 writer=$2 checker=$3 salvage=${4:-}
python=${HTRACE_PYTHON:-/usr/bin/python3}
mpirun_cmd=${MPIRUN:-mpirun --allow-run-as-root --oversubscribe}
work=$(mktemp -d "${TMPDIR:-/tmp}/htrace-record-XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
rank_files=${HTRACE_SOURCE_DIR:?}/tests/lib/htrace_test/rank_files.sh
export HTRACE_BUFFER_SIZE=4k HTRACE_SYNC=none HTRACE_LOG_FILE=$work/log
fail() {
  echo "FAIL ($case_name): $*"
  for f in out err log launcher; do [ -s $f ] && echo "  $f:" && sed 's/^/  | /' $f; done
  exit 1
}
# run [-np N] ARG...: record_writer ARG... on 2 (or N) ranks; afterwards out and err hold the
# ranks' stdout and stderr in rank order, log the recorder's diagnostic lines.
run() {
  np=2
  if [ "$1" = -np ]; then np=$2; shift 2; fi
  rm -rf ranks log && mkdir ranks
  $mpirun_cmd -np "$np" sh "$rank_files" "$work/ranks" "$writer" "$@" >launcher 2>&1
  status=$?
  cat ranks/*.out >out 2>/dev/null
  cat ranks/*.err >err 2>/dev/null
  touch log
  return $status
}

case $case_name in
archive)
  HTRACE_ARCHIVE_DIR=$work/traces HTRACE_ARCHIVE_NAME=run run write || fail "exit code $?"
  "$python" "$checker" full "$work/traces/run" out || fail "archive check"
  ;;
unwritable_dir)
  # A directory below a regular file cannot be created, even by root.
  touch plainfile
  HTRACE_ARCHIVE_DIR=$work/plainfile/sub run write || fail "exit code $? (must run untraced)"
  grep -q "plainfile/sub' is not usable: Not a directory" log || fail "no one-line reason"
  [ "$(grep -c 'is not usable' log)" = 1 ] || fail "reason printed more than once"
  [ "$(grep -c "tracing disabled" err)" = 2 ] || fail "start() did not return false"
  ;;
no_overwrite)
  # Occupy the default names of the next two minutes (mpirun may take seconds to start on a
  # loaded machine): the run must pick a numbered name instead.
  for s in $(seq 0 120); do
    name=htrace-record_writer-$(date -d "+$s sec" +%Y%m%d-%H%M%S)
    mkdir -p "$name" && echo keep >"$name/sentinel"
  done
  run write || fail "exit code $?"
  for d in htrace-record_writer-*; do
    if [ -f "$d/sentinel" ]; then
      [ "$(cat "$d/sentinel")" = keep ] && [ "$(ls "$d")" = sentinel ] || fail "'$d' was modified"
    fi
  done
  made=$(ls -d htrace-record_writer-*-* 2>/dev/null | grep -E -- '-[0-9]+-[0-9]+$' | grep -E -- '-[0-9]{6}-[0-9]+$')
  [ -n "$made" ] && [ -f "$made/traces.otf2" ] || fail "no numbered archive beside the existing ones"
  "$python" "$checker" readable "$made" || fail "numbered archive unreadable"
  # An explicit name that exists is not replaced without HTRACE_OVERWRITE=1.
  mkdir mine && echo keep >mine/sentinel
  HTRACE_ARCHIVE_NAME=mine run write || fail "exit code $?"
  [ "$(ls mine)" = sentinel ] || fail "explicit existing archive was modified"
  grep -q "'mine' exists; tracing into" log || fail "no message about the existing name"
  ;;
volume)
  # 64 KiB buffers (1365 records) and 2 MiB of OTF2 chunks: both levels of flushing happen.
  HTRACE_BUFFER_SIZE=64k HTRACE_ARCHIVE_NAME=vol run volume 100000 || fail "exit code $?"
  "$python" "$checker" volume vol 100000 out || fail "archive check"
  ;;
volume_ahead)
  # Converting ahead, as at a receive: no full buffer, so the BufferFlush records mark the chunk
  # writes, about 10 of them.
  HTRACE_BUFFER_SIZE=64k HTRACE_ARCHIVE_NAME=vol run volume-ahead 100000 || fail "exit code $?"
  "$python" "$checker" volume-ahead vol 100000 out || fail "archive check"
  ;;
full_disk)
  # A 300 KiB file system fills up mid-run: one line per rank, exit code 0, no hang.
  mkdir small
  mount -t tmpfs -o size=300k tmpfs small 2>/dev/null || { echo "SKIP: cannot mount a tmpfs"; exit 77; }
  trap 'umount "$work/small"; rm -rf "$work"' EXIT
  HTRACE_BUFFER_SIZE=64k HTRACE_ARCHIVE_DIR=small HTRACE_ARCHIVE_NAME=full run volume 200000 ||
    fail "exit code $?"
  n=$(grep -c "recording stopped: writing the trace archive failed (No space left on device" log)
  [ "$n" -ge 1 ] && [ "$n" -le 2 ] || fail "expected one line per failing rank, got $n"
  grep -q "archive 'small/full' is incomplete (writing failed on $n rank(s))" log ||
    fail "rank 0 did not say the archive is incomplete"
  [ "$(grep -c htrace log)" = "$((n + 1))" ] || fail "more diagnostics than one line per rank"
  [ "$(grep -c '^RANK .*recorded=' out)" = 2 ] || fail "application did not finish on both ranks"
  ;;
exit_without_finalize)
  # The launcher reports the missing MPI_Finalize (non-zero exit); the tracer must not hang and
  # must keep what was recorded.
  # MPICH's hydra SIGKILLs the other rank once one has exited without MPI_Finalize, sometimes
  # before that rank's own exit handler ran: there, each rank that got to say so kept its events.
  HTRACE_ARCHIVE_NAME=gone run exit
  note="exit without MPI_Finalize: wrote 312 events of this process to 'gone'"
  n=$(grep -c "$note" log)
  if [ "${HTRACE_MPI_FLAVOR:-openmpi}" = mpich ]; then
    [ "$n" -ge 1 ] || fail "expected the one-line note from at least one rank, got $n"
    for loc in 0 1; do
      if grep -q "htrace\[$loc\]: error: $note" log; then
        [ -s gone/traces/$loc.evt ] || fail "event file of location $loc missing"
      fi
    done
  else
    [ "$n" = 2 ] || fail "expected the one-line note from both ranks, got $n"
    for loc in 0 1; do [ -s gone/traces/$loc.evt ] || fail "event file of location $loc missing"; done
  fi
  ;;
emergency)
  HTRACE_ARCHIVE_NAME=crash run emergency || fail "exit code $?"
  grep -q "record_writer emergency test: wrote .* lacks its global definitions" log ||
    fail "no emergency message"
  for loc in 0 1; do [ -s crash/traces/$loc.evt ] || fail "event file of location $loc missing"; done
  ;;
emergency_race)
  # One rank, so the recording thread has a core of its own and is mid-record when the flush
  # reads its buffer; repeated, as each run has one flush. A recorder that counted records before
  # they were filled would fail about 1 attempt in 10; one that wrote events after dropping some
  # while stopped (a gap followed by later events) would fail most attempts.
  for attempt in 1 2 3 4 5; do
    rm -rf race salvaged
    HTRACE_BUFFER_SIZE=64k HTRACE_ARCHIVE_NAME=race run -np 1 emergency-race || fail "exit code $?"
    grep -q "record_writer emergency race: wrote" log || fail "no emergency message"
    "$salvage" race salvaged >salvage.out 2>&1 || fail "htrace-salvage: $(cat salvage.out)"
    "$python" "$checker" race salvaged || fail "attempt $attempt: records torn or out of order"
  done
  ;;
*) echo "unknown case $case_name"; exit 2 ;;
esac
echo "PASS ($case_name)"
