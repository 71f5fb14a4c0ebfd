# schedlab_add_plugin(<name> [OUTPUT_DIRECTORY <dir>] <sources...>)
#
# Builds one scheduler plugin: a MODULE library <name>.so that links nothing
# from schedlab, only the plugin API headers (schedlab::plugin_api). Symbols
# are hidden and a version script exports schedlab_plugin_entry alone, so
# two versions of a plugin loaded side by side during a hot reload never bind
# to each other's code. Warnings are errors. Works in the schedlab tree and,
# after find_package(schedlab), in any other project.
include_guard(GLOBAL)

function(schedlab_add_plugin name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "OUTPUT_DIRECTORY" "")
  if(NOT ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "schedlab_add_plugin(${name}): no sources")
  endif()
  add_library(${name} MODULE ${ARG_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PRIVATE schedlab::plugin_api)
  set_target_properties(${name} PROPERTIES
    PREFIX ""
    SUFFIX ".so"
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    POSITION_INDEPENDENT_CODE ON)
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIRECTORY})
  endif()
  # plugin.hpp needs C++17; a project that asks for more keeps its choice.
  target_compile_features(${name} PRIVATE cxx_std_17)
  target_compile_options(${name} PRIVATE -Wall -Wextra -Werror
    # GNU unique symbols would pin the library in memory (never dlclosed).
    $<$<COMPILE_LANG_AND_ID:CXX,GNU>:-fno-gnu-unique>)
  set(map ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/plugin.map)
  target_link_options(${name} PRIVATE "LINKER:--version-script=${map}" "LINKER:--no-undefined")
  set_property(TARGET ${name} APPEND PROPERTY LINK_DEPENDS ${map})
endfunction()
