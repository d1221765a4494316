"""Helpers shared by htrace's Python tests (tests/lib is on PYTHONPATH for every ctest test):

  check      fail(message) and require(condition, message): end the test with a message
  mpi        the mpirun command line of a test run
  rank_output  what the ranks said, from files (HTRACE_LOG_FILE, each rank's own stdout and
             stderr): no verdict rests on what a launcher forwards
  harness    run a program traced under mpirun and find its archive (tests/mpi, ompt, rma_io)
  archive    read an archive back with the independent reader (python3-otf2, otf2-print)
  messages   the message matcher of the Python oracles (point-to-point and collectives)
  tree       digests of a directory tree
  salvage    the oracle of a salvaged fail_app archive (tests/salvage, tests/slurm)
  hpcc       the input of Debian's hpcc used by the tests
  fidelity   the ground-truth cases of htrace-correct (tests/fidelity; the fidelity benchmark)
  mpi4py_suite  mpi4py's own test suite under mpirun (tests/coverage; the mpi4py benchmark)

The benchmarks may import these; the tests import nothing from the benchmarks. Outside ctest, put
tests/lib on PYTHONPATH.
Nothing here imports htrace's own code: these are the tests' independent view of an archive."""
