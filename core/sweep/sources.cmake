# sweep: sweep files, parameter spaces, constraints, search strategies
target_sources(schedlab PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/space.cpp
  ${CMAKE_CURRENT_LIST_DIR}/constraint.cpp
  ${CMAKE_CURRENT_LIST_DIR}/param_values.cpp
  ${CMAKE_CURRENT_LIST_DIR}/spec.cpp
  ${CMAKE_CURRENT_LIST_DIR}/spec_schedulers.cpp
  ${CMAKE_CURRENT_LIST_DIR}/scheduler.cpp
  ${CMAKE_CURRENT_LIST_DIR}/search_strategy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/strategy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/adaptive.cpp
  ${CMAKE_CURRENT_LIST_DIR}/halving.cpp
  ${CMAKE_CURRENT_LIST_DIR}/evolution.cpp
  ${CMAKE_CURRENT_LIST_DIR}/model_search.cpp
  # the point pipeline and the runner
  ${CMAKE_CURRENT_LIST_DIR}/pipeline.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mutate.cpp
  ${CMAKE_CURRENT_LIST_DIR}/measure.cpp
  ${CMAKE_CURRENT_LIST_DIR}/runner.cpp
  ${CMAKE_CURRENT_LIST_DIR}/runner_point.cpp
  ${CMAKE_CURRENT_LIST_DIR}/runner_isolate.cpp
  ${CMAKE_CURRENT_LIST_DIR}/runner_measure.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ab.cpp
  ${CMAKE_CURRENT_LIST_DIR}/shard.cpp
  ${CMAKE_CURRENT_LIST_DIR}/bucket.cpp
  ${CMAKE_CURRENT_LIST_DIR}/bucket_yaml.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tuned_file.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tuned.cpp
)
# The runner registers validated points with Google Benchmark.
target_link_libraries(schedlab PRIVATE benchmark::benchmark)
# The `model` strategy's cost model: XGBoost's C API (cmake/FindXGBoost.cmake).
target_link_libraries(schedlab PRIVATE XGBoost::xgboost)
