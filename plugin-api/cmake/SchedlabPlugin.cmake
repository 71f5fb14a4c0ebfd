# schedlab_add_plugin(<name> [OUTPUT_DIRECTORY <dir>] <sources...>)
#
# Builds one scheduler plugin: a MODULE library <name>.so that links nothing
# from schedlab, only the plugin API (schedlab::plugin_api, and the
# precompiled entry-point machinery schedlab::plugin_api_impl). Symbols
# are hidden and a version script exports schedlab_plugin_entry alone, so
# two versions of a plugin loaded side by side during a hot reload never bind
# to each other's code. Works in the schedlab tree and, after
# find_package(schedlab), in any other project.
#
# Warning flags are the project's business: schedlab's own plugins are built
# with -Wall -Wextra -Werror because schedlab's CMakeLists sets
# SCHEDLAB_PLUGIN_STRICT_WARNINGS; a user's plugin gets the user's flags only
# (set the variable to ON in your project to opt in).
#
# Beside <name>.so the build writes <name>.so.sources: the plugin's sources
# (absolute paths) and the command that rebuilds it, which `schedlab watch`
# reads to rebuild and hot-reload the plugin when one of them changes.
include_guard(GLOBAL)

function(schedlab_add_plugin name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "OUTPUT_DIRECTORY" "")
  if(NOT ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "schedlab_add_plugin(${name}): no sources")
  endif()
  add_library(${name} MODULE ${ARG_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PRIVATE schedlab::plugin_api)
  # The entry point's machinery precompiled (SCHEDLAB_PLUGIN_API_SEPARATE):
  # the plugin compiles only its own code.
  if(TARGET schedlab::plugin_api_impl)
    target_link_libraries(${name} PRIVATE schedlab::plugin_api_impl)
  endif()
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
  # GNU unique symbols would pin the library in memory (never dlclosed).
  target_compile_options(${name} PRIVATE $<$<COMPILE_LANG_AND_ID:CXX,GNU>:-fno-gnu-unique>)
  if(SCHEDLAB_PLUGIN_STRICT_WARNINGS)
    target_compile_options(${name} PRIVATE -Wall -Wextra -Werror)
  endif()
  set(map ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/plugin.map)
  target_link_options(${name} PRIVATE "LINKER:--version-script=${map}" "LINKER:--no-undefined")
  set_property(TARGET ${name} APPEND PROPERTY LINK_DEPENDS ${map})
  # What `schedlab watch` watches and how it rebuilds (docs/plugins.md).
  set(lines "# schedlab plugin ${name}: its sources and its build command (schedlab watch)\n")
  foreach(src IN LISTS ARG_UNPARSED_ARGUMENTS)
    get_filename_component(abs "${src}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    string(APPEND lines "source ${abs}\n")
  endforeach()
  string(APPEND lines "build \"${CMAKE_COMMAND}\" --build \"${CMAKE_BINARY_DIR}\" --target ${name}\n")
  file(GENERATE OUTPUT "$<TARGET_FILE:${name}>.sources" CONTENT "${lines}")
endfunction()
