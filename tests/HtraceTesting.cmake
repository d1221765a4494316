# Helpers shared by all test folders.
#
# htrace_add_gtest(NAME SOURCES... LIBS...)   a GoogleTest binary registered with ctest
# htrace_add_script_test(NAME COMMAND...)     any command; environment carries the paths below
#
# Every test sees: HTRACE_LIB (path of libhtrace.so), HTRACE_BUILD_DIR, HTRACE_SOURCE_DIR,
# HTRACE_PYTHON (/usr/bin/python3 with otf2), MPIRUN (mpirun --allow-run-as-root --oversubscribe),
# PYTHONPATH=tests/lib (the test helpers: import htrace_test..., import trace_check).
include(GoogleTest)

set(HTRACE_MPIRUN "${MPIEXEC_EXECUTABLE} --allow-run-as-root --oversubscribe")

function(htrace_test_environment name)
  set_tests_properties(${name} PROPERTIES ENVIRONMENT
    "HTRACE_LIB=$<TARGET_FILE:htrace>;HTRACE_BUILD_DIR=${PROJECT_BINARY_DIR};HTRACE_SOURCE_DIR=${PROJECT_SOURCE_DIR};HTRACE_PYTHON=${HTRACE_TEST_PYTHON};HTRACE_CLUSTER_RUN=${HTRACE_CLUSTER_RUN};MPIRUN=${HTRACE_MPIRUN};OMPI_MCA_rmaps_base_oversubscribe=1;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;PYTHONDONTWRITEBYTECODE=1;PYTHONPATH=${PROJECT_SOURCE_DIR}/tests/lib")
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
