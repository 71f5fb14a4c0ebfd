# core/isolate: running plugin calls and kernel launches in a forked child
# (--isolate; docs/sweeps.md, "Isolation").
target_sources(schedlab PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/isolate.cpp
)
