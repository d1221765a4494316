# `cpack -G DEB` (in the build directory) builds htrace_<version>_<arch>.deb from the same install
# rules as `cmake --install`, under /usr. Configure with -DCMAKE_INSTALL_PREFIX=/usr so that the
# library lands in Debian's multiarch directory (GNUInstallDirs then picks lib/<triplet>).
# The run-time dependencies are not listed by hand: dpkg-shlibdeps derives them (with minimum
# versions) from the libraries the installed binaries really load (libopenmpi3,
# libopen-trace-format2-10, libhwloc15, libstdc++6, ...). mpirun itself is only recommended: a
# site may launch with srun.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME htrace)
set(CPACK_PACKAGE_VENDOR "htrace")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "MPI and OpenMP tracing into OTF2 with synchronized clocks")
set(CPACK_PACKAGE_DESCRIPTION
    "libhtrace.so records every MPI call and OpenMP event (OMPT) of an unmodified program into one OTF2 archive (LD_PRELOAD), with all ranks' clocks synchronized in MPI_Init. htrace-correct removes clock-condition violations from OTF2 archives. Also: MPIX_Harmonize, htrace-clockcheck, htrace-bench, htrace-config; CMake and pkg-config files and an environment-modules file.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Stripped like any Debian package: a RelWithDebInfo build would otherwise ship ~55 MB of debug info.
set(CPACK_STRIP_FILES ON)

# Debian version from the build's version string: "0.1.0-3-gabc1234-dirty" -> "0.1.0+3.gabc1234.dirty"
# (a '-' would start the Debian revision).
string(REGEX REPLACE "^([0-9.]+)-" "\\1+" _deb_version "${HTRACE_VERSION_STRING}")
string(REPLACE "-" "." _deb_version "${_deb_version}")
set(CPACK_PACKAGE_VERSION ${_deb_version})
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "htrace maintainers <htrace@localhost>")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "openmpi-bin")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libopenmpi-dev, otf2-tools, vite") # -dev: to build against htrace

include(CPack)
