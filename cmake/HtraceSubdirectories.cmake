# htrace_add_all_subdirectories([EXCEPT name...]): adds every immediate subfolder that has a
# CMakeLists.txt, so examples, benchmarks and test areas are picked up without a central list.
function(htrace_add_all_subdirectories)
  cmake_parse_arguments(A "" "" "EXCEPT" ${ARGN})
  file(GLOB entries LIST_DIRECTORIES true ${CMAKE_CURRENT_SOURCE_DIR}/*)
  foreach(dir IN LISTS entries)
    get_filename_component(name ${dir} NAME)
    if(IS_DIRECTORY ${dir} AND EXISTS ${dir}/CMakeLists.txt AND NOT name IN_LIST A_EXCEPT)
      add_subdirectory(${dir})
    endif()
  endforeach()
endfunction()
