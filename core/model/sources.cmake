# model: the performance model (docs/model.md): device
# models, compiler resources, occupancy, emulated memory traffic, roofline
target_sources(schedlab PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/device.cpp
  ${CMAKE_CURRENT_LIST_DIR}/resources.cpp
  ${CMAKE_CURRENT_LIST_DIR}/occupancy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/roofline.cpp
  ${CMAKE_CURRENT_LIST_DIR}/reduction_depth.cpp
  ${CMAKE_CURRENT_LIST_DIR}/traffic.cpp
  ${CMAKE_CURRENT_LIST_DIR}/profile.cpp
  ${CMAKE_CURRENT_LIST_DIR}/accuracy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/calibrate.cpp
  ${CMAKE_CURRENT_LIST_DIR}/collective.cpp
)
target_link_libraries(schedlab PRIVATE nlohmann_json::nlohmann_json)
