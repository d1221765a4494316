# Which MPI this build is for, from the mpi.h FindMPI chose (-DMPI_C_COMPILER=... or MPI_HOME):
#   HTRACE_MPI_FLAVOR   openmpi | mpich (the MPICH ABI: MPICH, Intel MPI, Cray MPICH, MVAPICH)
#   HTRACE_MPI_LIBRARY  what the header says it is, e.g. "MPICH 4.0.2" or "Open MPI 4.1.4"
#   HTRACE_MPI_HEADER   that mpi.h; the wrappers are generated from its prototypes
#   HTRACE_MPI_SUFFIX   appended to the installed names, so builds for several MPIs can share a
#                       prefix: "" for Open MPI (Debian's default MPI), "-mpich" for the MPICH ABI
# Any other MPI stops the configuration: libhtrace depends on the handle types, status layout and
# Fortran bindings of the MPI it wraps, and a build for an MPI it does not know would trace nothing.

find_file(HTRACE_MPI_HEADER mpi.h PATHS ${MPI_C_INCLUDE_DIRS} ${MPI_C_HEADER_DIR} NO_DEFAULT_PATH)
if(NOT HTRACE_MPI_HEADER)
  message(FATAL_ERROR "htrace: no mpi.h in the MPI include directories '${MPI_C_INCLUDE_DIRS}'")
endif()
file(READ ${HTRACE_MPI_HEADER} _htrace_mpi_h)

function(_htrace_header_define name out)
  if(_htrace_mpi_h MATCHES "#define[ \t]+${name}[ \t]+\"?([^\"\n]*)\"?")
    string(STRIP "${CMAKE_MATCH_1}" value)
    set(${out} "${value}" PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()

_htrace_header_define(OMPI_MAJOR_VERSION _ompi_major)
_htrace_header_define(MPICH_VERSION _mpich_version)
if(NOT _ompi_major STREQUAL "")
  _htrace_header_define(OMPI_MINOR_VERSION _ompi_minor)
  _htrace_header_define(OMPI_RELEASE_VERSION _ompi_release)
  if(_ompi_major LESS 4)
    message(FATAL_ERROR "htrace: Open MPI ${_ompi_major}.${_ompi_minor} is too old (${HTRACE_MPI_HEADER}); htrace needs Open MPI 4.0 or newer")
  endif()
  set(HTRACE_MPI_FLAVOR openmpi)
  set(HTRACE_MPI_LIBRARY "Open MPI ${_ompi_major}.${_ompi_minor}.${_ompi_release}")
  set(_default_suffix "")
elseif(NOT _mpich_version STREQUAL "")
  if(_mpich_version VERSION_LESS 3.1)
    message(FATAL_ERROR "htrace: MPICH ${_mpich_version} is too old (${HTRACE_MPI_HEADER}); htrace needs the MPICH 3.1 ABI or newer")
  endif()
  set(HTRACE_MPI_FLAVOR mpich)
  # Derivatives name themselves beside MPICH_VERSION.
  _htrace_header_define(I_MPI_VERSION _impi)
  _htrace_header_define(MVAPICH2_VERSION _mvapich)
  _htrace_header_define(CRAY_MPICH_VERSION _cray)
  if(_impi)
    set(HTRACE_MPI_LIBRARY "Intel MPI ${_impi} (MPICH ${_mpich_version} ABI)")
  elseif(_mvapich)
    set(HTRACE_MPI_LIBRARY "MVAPICH ${_mvapich} (MPICH ${_mpich_version} ABI)")
  elseif(_cray)
    set(HTRACE_MPI_LIBRARY "Cray MPICH ${_cray} (MPICH ${_mpich_version} ABI)")
  else()
    set(HTRACE_MPI_LIBRARY "MPICH ${_mpich_version}")
  endif()
  set(_default_suffix "-mpich")
else()
  message(FATAL_ERROR "htrace: ${HTRACE_MPI_HEADER} is neither Open MPI's nor of the MPICH family (MPICH, Intel MPI, Cray MPICH, MVAPICH); htrace supports only those (README: Which MPIs)")
endif()
# The launcher of the same MPI (tests, the demo): FindMPI looks for `mpiexec`, which on a system
# with several MPIs may be another MPI's (Debian's alternatives: Open MPI's orterun). For the
# MPICH family take hydra's mpiexec beside the compiler wrapper (mpicc.mpich -> mpiexec.mpich).
if(HTRACE_MPI_FLAVOR STREQUAL "mpich" AND MPIEXEC_EXECUTABLE)
  get_filename_component(_launcher "${MPIEXEC_EXECUTABLE}" REALPATH)
  if(_launcher MATCHES "orterun|prterun|ompi")
    get_filename_component(_compiler_dir "${MPI_C_COMPILER}" DIRECTORY)
    get_filename_component(_compiler_name "${MPI_C_COMPILER}" NAME)
    string(REGEX REPLACE "^mpicc" "mpiexec" _hydra_name "${_compiler_name}")
    find_program(HTRACE_MPICH_MPIEXEC NAMES ${_hydra_name} mpiexec.hydra mpiexec.mpich
                 HINTS ${_compiler_dir} NO_DEFAULT_PATH)
    if(NOT HTRACE_MPICH_MPIEXEC)
      message(FATAL_ERROR "htrace: ${MPIEXEC_EXECUTABLE} is Open MPI's launcher; pass the launcher of ${HTRACE_MPI_LIBRARY} with -DMPIEXEC_EXECUTABLE=...")
    endif()
    set(MPIEXEC_EXECUTABLE ${HTRACE_MPICH_MPIEXEC} CACHE FILEPATH "Executable for running MPI programs" FORCE)
  endif()
endif()

set(HTRACE_MPI_SUFFIX "${_default_suffix}" CACHE STRING
    "Suffix of the installed names (library, tools, CMake package, pkg-config, module file)")
message(STATUS "htrace: building for ${HTRACE_MPI_LIBRARY} (${HTRACE_MPI_HEADER}), launcher ${MPIEXEC_EXECUTABLE}, installed names suffix '${HTRACE_MPI_SUFFIX}'")
