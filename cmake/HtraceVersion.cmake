# The version comes from one place: project(htrace VERSION ...). In a git checkout `git describe`
# adds where the build stands relative to it (commits since the tag, commit, -dirty), so two builds
# from different commits never report the same string; a tarball without .git reports the plain
# project version.
#
# include/htrace/version.h is generated into the build tree at build time, not at configure time:
# a commit after the last cmake run still changes the string. configure_file() rewrites the header
# only when its text changes, so an unchanged version recompiles nothing.
#
# Consumers link the INTERFACE target htrace_version (include directory + ordering on the
# generation step).

set(HTRACE_VERSION_INCLUDE_DIR ${PROJECT_BINARY_DIR}/include)
set(HTRACE_VERSION_HEADER ${HTRACE_VERSION_INCLUDE_DIR}/htrace/version.h)

add_custom_target(htrace_version_header ALL
  COMMAND ${CMAKE_COMMAND}
          -DHTRACE_SOURCE_DIR=${PROJECT_SOURCE_DIR}
          -DHTRACE_PROJECT_VERSION=${PROJECT_VERSION}
          -DHTRACE_VERSION_MAJOR=${PROJECT_VERSION_MAJOR}
          -DHTRACE_VERSION_MINOR=${PROJECT_VERSION_MINOR}
          -DHTRACE_VERSION_PATCH=${PROJECT_VERSION_PATCH}
          -DHTRACE_TEMPLATE=${PROJECT_SOURCE_DIR}/cmake/templates/version.h.in
          -DHTRACE_OUTPUT=${HTRACE_VERSION_HEADER}
          -P ${PROJECT_SOURCE_DIR}/cmake/HtraceVersionHeader.cmake
  BYPRODUCTS ${HTRACE_VERSION_HEADER}
  COMMENT "htrace version header"
  VERBATIM)

add_library(htrace_version INTERFACE)
target_include_directories(htrace_version INTERFACE $<BUILD_INTERFACE:${HTRACE_VERSION_INCLUDE_DIR}>)
add_dependencies(htrace_version htrace_version_header)

# The same computation at configure time, for what cannot wait for the build: the .deb's version
# and the summary below.
include(${PROJECT_SOURCE_DIR}/cmake/HtraceGitDescribe.cmake)
htrace_describe_version(${PROJECT_SOURCE_DIR} ${PROJECT_VERSION} HTRACE_VERSION_STRING)
message(STATUS "htrace version ${HTRACE_VERSION_STRING}")
