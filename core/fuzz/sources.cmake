# core/fuzz: the differential fuzzer behind `schedlab fuzz` (issue #11,
# docs/fuzz.md): generators, runner and classifier, minimiser, campaign.
target_sources(schedlab PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/fusion_gen.cpp
  ${CMAKE_CURRENT_LIST_DIR}/inputs_gen.cpp
  ${CMAKE_CURRENT_LIST_DIR}/matmul_gen.cpp
  ${CMAKE_CURRENT_LIST_DIR}/schedule_gen.cpp
  ${CMAKE_CURRENT_LIST_DIR}/runner.cpp
  ${CMAKE_CURRENT_LIST_DIR}/minimize.cpp
  ${CMAKE_CURRENT_LIST_DIR}/campaign.cpp
  ${CMAKE_CURRENT_LIST_DIR}/shard_gen.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mesh_runner.cpp
)
