# Warnings for htrace's own C and C++ code (everything built here is ours, the generated MPI
# wrappers and record tables included; third-party headers come from system include directories,
# which compilers do not warn about). The build is warning-free with GCC 12 and Clang 14;
# -DHTRACE_WERROR=ON keeps it so.
option(HTRACE_WERROR "Treat compiler warnings as errors" OFF)
set(HTRACE_WARNING_FLAGS -Wall -Wextra -Wshadow)
if(HTRACE_WERROR)
  list(APPEND HTRACE_WARNING_FLAGS -Werror)
endif()
add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${HTRACE_WARNING_FLAGS}>")
