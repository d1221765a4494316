# Run at build time by the htrace_version_header target (cmake -P): writes version.h from its
# template. configure_file() leaves the file untouched when the text is the same.
include(${CMAKE_CURRENT_LIST_DIR}/HtraceGitDescribe.cmake)
htrace_describe_version(${HTRACE_SOURCE_DIR} ${HTRACE_PROJECT_VERSION} HTRACE_VERSION_STRING)
configure_file(${HTRACE_TEMPLATE} ${HTRACE_OUTPUT} @ONLY)
