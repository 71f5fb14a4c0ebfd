# report: sweep records (JSONL), statistics, the side-by-side table and its
# renderers, and `compare` (docs/reports.md). See schedlab/report/*.h.
target_sources(schedlab PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/stats.cpp
  ${CMAKE_CURRENT_LIST_DIR}/record.cpp
  ${CMAKE_CURRENT_LIST_DIR}/result_file.cpp
  ${CMAKE_CURRENT_LIST_DIR}/results_lock.cpp
  ${CMAKE_CURRENT_LIST_DIR}/compare.cpp
  ${CMAKE_CURRENT_LIST_DIR}/table.cpp
  ${CMAKE_CURRENT_LIST_DIR}/table_export.cpp
  ${CMAKE_CURRENT_LIST_DIR}/format.cpp
  ${CMAKE_CURRENT_LIST_DIR}/plot.cpp
  ${CMAKE_CURRENT_LIST_DIR}/heatmap.cpp
  ${CMAKE_CURRENT_LIST_DIR}/html.cpp
  ${CMAKE_CURRENT_LIST_DIR}/verdict.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ab.cpp
  ${CMAKE_CURRENT_LIST_DIR}/merge.cpp
  ${CMAKE_CURRENT_LIST_DIR}/curves.cpp
)
target_link_libraries(schedlab PRIVATE nlohmann_json::nlohmann_json)
