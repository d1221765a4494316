# htrace_describe_version(SOURCE_DIR PROJECT_VERSION OUT_VAR): the version string of a build.
#   no git checkout (tarball), or git fails:            0.1.0
#   HEAD is tag v0.1.0, clean:                          0.1.0
#   3 commits after tag v0.1.0 (git describe):          0.1.0-3-gabc1234[-dirty]
#   no matching tag:                                    0.1.0-gabc1234[-dirty]
# A tag naming another version than project() is ignored: project() is the one source.
function(htrace_describe_version source_dir project_version out_var)
  set(result ${project_version})
  find_package(Git QUIET)
  if(GIT_FOUND AND EXISTS ${source_dir}/.git)
    # Never take .git/index.lock: other git commands in the same checkout must not fail because
    # a build is running.
    set(ENV{GIT_OPTIONAL_LOCKS} 0)
    execute_process(COMMAND ${GIT_EXECUTABLE} describe --tags --match "v[0-9]*" --always --dirty --abbrev=7
                    WORKING_DIRECTORY ${source_dir}
                    OUTPUT_VARIABLE describe OUTPUT_STRIP_TRAILING_WHITESPACE
                    RESULT_VARIABLE rc ERROR_QUIET)
    if(rc EQUAL 0 AND describe)
      if(describe MATCHES "^v${project_version}(-.*)?$")
        string(SUBSTRING ${describe} 1 -1 result)
      elseif(describe MATCHES "^v[0-9]")
        # The nearest tag is another version: keep project()'s, say which commit.
        string(REGEX REPLACE "^.*-(g[0-9a-f]+(-dirty)?)$" "\\1" suffix ${describe})
        if(suffix STREQUAL describe)
          set(result "${project_version}")
        else()
          set(result "${project_version}-${suffix}")
        endif()
      else()
        set(result "${project_version}-g${describe}")
      endif()
    endif()
  endif()
  set(${out_var} ${result} PARENT_SCOPE)
endfunction()
