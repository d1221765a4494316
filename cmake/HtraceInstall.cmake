# Everything `cmake --install` puts into a prefix, in one place (included last by the top-level
# CMakeLists.txt, after every target exists). S is the MPI's suffix (HTRACE_MPI_SUFFIX,
# cmake/HtraceMpiFlavor.cmake: "" for Open MPI, "-mpich" for the MPICH ABI), so builds for
# several MPIs share a prefix:
#   bin/                        the tools, those built with MPI named htrace-<tool>S (RPATH
#                               $ORIGIN/../<libdir> plus the link path)
#   <libdir>/libhtraceS.so      the preload library
#   include/htrace/             the public C headers and the generated version.h
#   <libdir>/cmake/htraceS/     CMake package: find_package(htraceS CONFIG) -> htrace::htrace, htrace::<tool>
#   <libdir>/pkgconfig/htraceS.pc  pkg-config; `pkg-config --variable=htrace_lib htraceS` is the preload path
#   share/modulefiles/htraceS/<version>  Tcl environment module (PATH, LD_LIBRARY_PATH, MANPATH,
#                               PKG_CONFIG_PATH, CMAKE_PREFIX_PATH, HTRACE_LIB)
#   share/man/man1, man7        one short page per tool and htrace(7); the option lists themselves
#                               stay in each tool's --help and in htrace-config, so they cannot drift
#   share/doc/htrace/           the README files the man pages point to
# Paths that depend on the prefix (.pc, module file) are written at install time, so
# `cmake --install build --prefix P` and the .deb (prefix /usr) both get correct absolute paths.
include(CMakePackageConfigHelpers)

set(HTRACE_TOOLS htrace-correct htrace-salvage htrace-clockcheck htrace-bench htrace-config
                 htrace-report htrace-score)
# Built for one MPI (htrace-config reports it): the suffix keeps the builds for several MPIs apart.
# htrace-report and htrace-score read archives only and are the same for every MPI.
set(HTRACE_MPI_TARGETS htrace htrace-correct htrace-salvage htrace-clockcheck htrace-bench htrace-config)
set(HTRACE_PACKAGE htrace${HTRACE_MPI_SUFFIX})
foreach(target IN LISTS HTRACE_MPI_TARGETS)
  if(TARGET ${target})
    set_target_properties(${target} PROPERTIES OUTPUT_NAME ${target}${HTRACE_MPI_SUFFIX})
  endif()
endforeach()
set(HTRACE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/${HTRACE_PACKAGE})
set(HTRACE_INSTALL_MODULEFILEDIR ${CMAKE_INSTALL_DATADIR}/modulefiles CACHE STRING
    "Directory (relative to the prefix) for the environment-modules file htrace/<version>")

set(_installed_tools)
foreach(tool IN LISTS HTRACE_TOOLS)
  if(TARGET ${tool})
    list(APPEND _installed_tools ${tool})
  endif()
endforeach()

install(TARGETS htrace ${_installed_tools} EXPORT htraceTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${HTRACE_VERSION_HEADER} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/htrace)

# CMake package. The version file accepts any request with the same major.minor: before 1.0 a
# minor release may change the API.
install(EXPORT htraceTargets NAMESPACE htrace:: DESTINATION ${HTRACE_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/templates/htraceConfig.cmake.in
  ${PROJECT_BINARY_DIR}/package/${HTRACE_PACKAGE}Config.cmake INSTALL_DESTINATION ${HTRACE_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/${HTRACE_PACKAGE}ConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/package/${HTRACE_PACKAGE}Config.cmake
              ${PROJECT_BINARY_DIR}/package/${HTRACE_PACKAGE}ConfigVersion.cmake
        DESTINATION ${HTRACE_INSTALL_CMAKEDIR})

# Man pages: one per tool from one template (name, purpose, where the options are documented).
set(HTRACE_MAN_htrace-correct_SUMMARY "remove clock-condition violations from an OTF2 trace")
set(HTRACE_MAN_htrace-correct_SYNOPSIS "[mpirun -np P] htrace-correct [options] IN OUT")
set(HTRACE_MAN_htrace-correct_TEXT
    "reads any OTF2 archive IN, applies the clock measurements htrace stored in it and the controlled logical clock, and writes OUT, in which only timestamps differ. IN is never modified; an existing OUT is refused without --force. Run it serially or under mpirun: the output is the same for every process count.")
set(HTRACE_MAN_htrace-salvage_SUMMARY "make a readable trace of a run that ended badly")
set(HTRACE_MAN_htrace-salvage_SYNOPSIS "htrace-salvage IN OUT")
set(HTRACE_MAN_htrace-salvage_TEXT
    "rebuilds the global definitions of the libhtrace archive IN, whose run did not reach MPI_Finalize (MPI_Abort, a signal, a batch time limit, SIGKILL, a full disk), from the definition snapshots every process kept beside its event files, and writes OUT, which every OTF2 reader opens and htrace-correct corrects. Every event that reached the disk is kept; a rank that was cut off ends with a zero-length region naming the cause, and its open regions are closed at its last recorded time. IN is never modified.")
set(HTRACE_MAN_htrace-report_SUMMARY "HTML report, Perfetto export and ViTE copy of an OTF2 trace")
set(HTRACE_MAN_htrace-report_SYNOPSIS "htrace-report [--format html|perfetto|vite] [options] ARCHIVE -o OUT")
set(HTRACE_MAN_htrace-report_TEXT
    "reads the OTF2 archive ARCHIVE once, streaming, and writes one self-contained HTML file (summary, profile with imbalance, communication matrix, timeline overview and detail, clock quality, clock-condition violations and the htrace-correct report given with --correction), or a Chrome/Perfetto JSON trace (--format perfetto; exact nanoseconds), or a copy of the archive in the communicator layout ViTE 1.2 reads without warnings (--format vite). ARCHIVE is never modified; OUT is written atomically.")
set(HTRACE_MAN_htrace-score_SUMMARY "estimate a trace's size before the long run")
set(HTRACE_MAN_htrace-score_SYNOPSIS "htrace-score [--ranks N] [--seconds T] [--limit SIZE] [--json] [-o FILE] ARCHIVE")
set(HTRACE_MAN_htrace-score_TEXT
    "reads any OTF2 archive ARCHIVE (a short run of the program, or a previous one) once and reports the records and bytes of its event files per MPI function, family, rank and in total, projects them to N ranks and T seconds, and with --limit names the HTRACE_MPI_EXCLUDE value (and Score-P filter file) that keeps the projection under SIZE, with what the analysis loses by it. ARCHIVE is never modified.")
set(HTRACE_MAN_htrace-clockcheck_SUMMARY "measure the accuracy of htrace's clock synchronization")
set(HTRACE_MAN_htrace-clockcheck_SYNOPSIS "mpirun -np P htrace-clockcheck [options]")
set(HTRACE_MAN_htrace-clockcheck_TEXT
    "synchronizes the clocks of all ranks with each configuration given (the grammar of HTRACE_SYNC), measures every rank's offset on the global clock right after the synchronization and again after a wait, and reports the maximum and median offsets and the synchronization's duration.")
set(HTRACE_MAN_htrace-bench_SUMMARY "collective latency with synchronized processes")
set(HTRACE_MAN_htrace-bench_SYNOPSIS "mpirun -np P htrace-bench [options]")
set(HTRACE_MAN_htrace-bench_TEXT
    "measures the latency of MPI collectives on the global clock with barrier, window-based, Round-Time or MPIX_Harmonize process synchronization, and compares result sets with a Wilcoxon rank-sum test.")
set(HTRACE_MAN_htrace-config_SUMMARY "list and check libhtrace's HTRACE_* options")
set(HTRACE_MAN_htrace-config_SYNOPSIS "htrace-config [options]")
set(HTRACE_MAN_htrace-config_TEXT
    "prints every HTRACE_* environment variable libhtrace reads, with its kind, default, current value and meaning, and with --check validates the current environment with libhtrace's own parser.")
string(TIMESTAMP HTRACE_MAN_DATE "%Y-%m-%d" UTC)
foreach(tool IN LISTS _installed_tools)
  set(TOOL ${tool})
  set(SUMMARY "${HTRACE_MAN_${tool}_SUMMARY}")
  set(SYNOPSIS "${HTRACE_MAN_${tool}_SYNOPSIS}")
  set(TEXT "${HTRACE_MAN_${tool}_TEXT}")
  configure_file(${PROJECT_SOURCE_DIR}/cmake/templates/tool.1.in ${PROJECT_BINARY_DIR}/man/${tool}.1 @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/man/${tool}.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/cmake/templates/htrace.7.in ${PROJECT_BINARY_DIR}/man/htrace.7 @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/man/htrace.7 DESTINATION ${CMAKE_INSTALL_MANDIR}/man7)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
# Debian's machine-readable copyright file (DEP-5), which the .deb carries as
# /usr/share/doc/htrace/copyright: the license text from LICENSE, indented as the format requires.
file(READ ${PROJECT_SOURCE_DIR}/LICENSE _license)
string(REGEX REPLACE "^[^\n]*\n\n[^\n]*\n\n" "" _license_terms "${_license}")
string(REGEX REPLACE "\n\n" "\n.\n" _license_terms "${_license_terms}")
string(REGEX REPLACE "\n([^\n])" "\n \\1" _license_terms " ${_license_terms}")
string(STRIP "${_license_terms}" _license_terms)
configure_file(${PROJECT_SOURCE_DIR}/cmake/templates/copyright.in ${PROJECT_BINARY_DIR}/package/copyright @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/package/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})
foreach(readme correct libtrace/clock libtrace/mpi libtrace/ompt libtrace/record tools/htrace-bench)
  string(REPLACE "/" "-" name ${readme})
  install(FILES ${PROJECT_SOURCE_DIR}/${readme}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR}
          RENAME README-${name}.md)
endforeach()

# pkg-config file and module file: generated at install time for the prefix actually used.
install(CODE "
  set(HTRACE_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  set(HTRACE_VERSION \"${PROJECT_VERSION}\")
  set(HTRACE_BINDIR \"${CMAKE_INSTALL_BINDIR}\")
  set(HTRACE_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
  set(HTRACE_INCLUDEDIR \"${CMAKE_INSTALL_INCLUDEDIR}\")
  set(HTRACE_MANDIR \"${CMAKE_INSTALL_MANDIR}\")
  set(HTRACE_LIBRARY_NAME \"$<TARGET_FILE_NAME:htrace>\")
  set(HTRACE_PACKAGE \"${HTRACE_PACKAGE}\")
  set(HTRACE_MPI_LIBRARY \"${HTRACE_MPI_LIBRARY}\")
  set(HTRACE_MPI_SUFFIX \"${HTRACE_MPI_SUFFIX}\")
  configure_file(\"${PROJECT_SOURCE_DIR}/cmake/templates/htrace.pc.in\"
                 \"${PROJECT_BINARY_DIR}/package/install/${HTRACE_PACKAGE}.pc\" @ONLY)
  configure_file(\"${PROJECT_SOURCE_DIR}/cmake/templates/modulefile.in\"
                 \"${PROJECT_BINARY_DIR}/package/install/${PROJECT_VERSION}\" @ONLY)
  file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig\" TYPE FILE
       FILES \"${PROJECT_BINARY_DIR}/package/install/${HTRACE_PACKAGE}.pc\")
  file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${HTRACE_INSTALL_MODULEFILEDIR}/${HTRACE_PACKAGE}\" TYPE FILE
       FILES \"${PROJECT_BINARY_DIR}/package/install/${PROJECT_VERSION}\")
")
