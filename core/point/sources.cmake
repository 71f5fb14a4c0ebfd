# point: one point through schedule, lower, compile, run, sanitize, validate
# and profile (schedlab/point/point.h), driven by exec, show, run and fuzz
target_sources(schedlab PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/point.cpp
  ${CMAKE_CURRENT_LIST_DIR}/sharded.cpp
  ${CMAKE_CURRENT_LIST_DIR}/trace.cpp
)
