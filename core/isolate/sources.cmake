# core/isolate: running plugin calls and kernel launches in a forked child
# (DESIGN.md section 10, --isolate).
target_sources(schedlab PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/isolate.cpp
)
