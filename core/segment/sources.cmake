# core/segment: the segmenter (DESIGN.md section 8); depends on ir only.
target_sources(schedlab PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/segment.cpp
)
