# Locates every external dependency once; targets below are what the rest of the build links.
find_package(MPI REQUIRED COMPONENTS C Fortran)
include(HtraceMpiFlavor)
find_package(PkgConfig REQUIRED)
pkg_check_modules(OTF2 REQUIRED IMPORTED_TARGET otf2)
# Where OTF2's headers are: the record tables and the tracer's event encoders are generated from
# them (format/tools/generate_record_tables.py).
pkg_get_variable(HTRACE_OTF2_INCLUDEDIR otf2 includedir)
if(NOT HTRACE_OTF2_INCLUDEDIR)
  set(HTRACE_OTF2_INCLUDEDIR /usr/include)
endif()
set(HTRACE_RECORD_TABLES_GENERATOR ${PROJECT_SOURCE_DIR}/format/tools/generate_record_tables.py)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc)
find_package(Threads REQUIRED)
find_package(Python3 REQUIRED COMPONENTS Interpreter)

# The independent trace reader used by tests: Debian's python3-otf2 exists only for /usr/bin/python3.
set(HTRACE_TEST_PYTHON /usr/bin/python3 CACHE FILEPATH "Python interpreter that can import otf2")

# Compile MPI code without the deprecated C++ bindings.
add_compile_definitions(OMPI_SKIP_MPICXX MPICH_SKIP_MPICXX)

if(HTRACE_WITH_OMPT)
  # omp-tools.h ships with clang, not with g++; search the LLVM installs Debian provides.
  file(GLOB _htrace_omp_tools_dirs /usr/lib/llvm-*/lib/clang/*/include)
  find_path(HTRACE_OMP_TOOLS_INCLUDE omp-tools.h HINTS ${_htrace_omp_tools_dirs})
  if(NOT HTRACE_OMP_TOOLS_INCLUDE)
    message(FATAL_ERROR "omp-tools.h not found: install clang/libomp-dev or pass -DHTRACE_WITH_OMPT=OFF")
  endif()
  file(GLOB _htrace_libomp /usr/lib/llvm-*/lib/libomp.so.5 /usr/lib/x86_64-linux-gnu/libomp.so.5)
  list(GET _htrace_libomp 0 HTRACE_LIBOMP)
  set(HTRACE_LIBOMP ${HTRACE_LIBOMP} CACHE FILEPATH "LLVM OpenMP runtime used for OMPT tests")
endif()

find_package(GTest)
