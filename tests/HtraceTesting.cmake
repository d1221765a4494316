# Helpers shared by all test folders.
#
# htrace_add_gtest(NAME SOURCES... LIBS...)   a GoogleTest binary registered with ctest
# htrace_add_script_test(NAME COMMAND...)     any command; environment carries the paths below
#
# Every test sees: HTRACE_LIB (path of libhtrace.so), HTRACE_BUILD_DIR, HTRACE_SOURCE_DIR,
# HTRACE_PYTHON (/usr/bin/python3 with otf2), HTRACE_MPI_FLAVOR (openmpi or mpich) and
# HTRACE_MPI_SUFFIX (of the MPI tools' names, tests/lib/htrace_test/build.py), MPIRUN (the
# build's launcher: mpirun --allow-run-as-root --oversubscribe, or MPICH's hydra mpiexec),
# PYTHONPATH=tests/lib (the test helpers: import htrace_test..., import trace_check).
include(GoogleTest)

if(HTRACE_MPI_FLAVOR STREQUAL "openmpi")
  set(HTRACE_MPIRUN "${MPIEXEC_EXECUTABLE} --allow-run-as-root --oversubscribe")
else()
  set(HTRACE_MPIRUN "${MPIEXEC_EXECUTABLE}")
endif()

# Label `mpi` (ctest -L mpi): the tests whose outcome depends on the MPI library, run once per MPI
# by tools/bootstrap test (the default Open MPI build, then a build for MPICH). The other tests
# (unit tests, the readers and the report on archives, the fuzz test, the tools' conventions) do
# not depend on it, or only through the launcher. Not labelled: programs Debian builds for Open
# MPI only (hpcc, MUMPS) and the demo, which is the default build's.
set(HTRACE_PER_MPI_AREAS mpi coverage wrappers salvage rma_io ompt spawn harmonize clock fidelity
                         record flush)
set(HTRACE_PER_MPI_TESTS correct_parallel correct_many_locations_mpi correct_e2e
                         cli_tracer_bad_option cli_htrace_correct_conventions score_traced
                         release_exported_symbols release_install_and_consume)
set(HTRACE_DEFAULT_MPI_ONLY mpi_hpcc mpi_demo fidelity_hpcc_none fidelity_hpcc_1host coverage_mumps)

function(htrace_test_environment name)
  get_filename_component(area ${CMAKE_CURRENT_SOURCE_DIR} NAME)
  if((area IN_LIST HTRACE_PER_MPI_AREAS OR name IN_LIST HTRACE_PER_MPI_TESTS)
     AND NOT name IN_LIST HTRACE_DEFAULT_MPI_ONLY)
    set_property(TEST ${name} APPEND PROPERTY LABELS mpi)
  endif()
  # Open MPI's mpirun creates and removes one session directory per user and host
  # (/tmp/ompi.HOST.UID); two tests launching at once race on it ("File exists", open-mpi/ompi
  # #8510). Each test gets its own base: short, so PMIx's socket paths stay within 108 bytes.
  string(MD5 session_tag "${PROJECT_BINARY_DIR}/${name}")
  string(SUBSTRING ${session_tag} 0 10 session_tag)
  set_tests_properties(${name} PROPERTIES ENVIRONMENT
    "OMPI_MCA_orte_tmpdir_base=/tmp/htrace-ompi-${session_tag};HTRACE_LIB=$<TARGET_FILE:htrace>;HTRACE_BUILD_DIR=${PROJECT_BINARY_DIR};HTRACE_SOURCE_DIR=${PROJECT_SOURCE_DIR};HTRACE_PYTHON=${HTRACE_TEST_PYTHON};HTRACE_CLUSTER_RUN=${HTRACE_CLUSTER_RUN};HTRACE_MPI_FLAVOR=${HTRACE_MPI_FLAVOR};HTRACE_MPI_SUFFIX=${HTRACE_MPI_SUFFIX};MPIRUN=${HTRACE_MPIRUN};OMPI_MCA_rmaps_base_oversubscribe=1;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;PYTHONDONTWRITEBYTECODE=1;PYTHONPATH=${PROJECT_SOURCE_DIR}/tests/lib")
endfunction()

function(htrace_add_gtest name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE GTest::gtest_main ${T_LIBS})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/libtrace ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR})
  add_test(NAME ${name} COMMAND ${name})
  htrace_test_environment(${name})
endfunction()

function(htrace_add_script_test name)
  add_test(NAME ${name} COMMAND ${ARGN})
  htrace_test_environment(${name})
endfunction()
