# core/plugin: the plugin host (loading, the ABI table, the registry, hot
# reload, Python heuristic files).
target_sources(schedlab PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/described.cpp
  ${CMAKE_CURRENT_LIST_DIR}/host.cpp
  ${CMAKE_CURRENT_LIST_DIR}/host_api.cpp
  ${CMAKE_CURRENT_LIST_DIR}/host_api_primitives.cpp
  ${CMAKE_CURRENT_LIST_DIR}/host_api_queries.cpp
  ${CMAKE_CURRENT_LIST_DIR}/loader.cpp
  ${CMAKE_CURRENT_LIST_DIR}/python_file.cpp
  ${CMAKE_CURRENT_LIST_DIR}/registry.cpp
  ${CMAKE_CURRENT_LIST_DIR}/transform_log.cpp
  ${CMAKE_CURRENT_LIST_DIR}/watcher.cpp
)
