# core/segment: the segmenter (docs/segments.md); depends on ir only.
target_sources(schedlab PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/segment.cpp
)
