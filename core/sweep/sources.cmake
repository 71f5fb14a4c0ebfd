# sweep: one folder per role (docs/architecture.md, the layers table): spec,
# search, tuned, pipeline, run; each may include only the roles below it.
target_sources(schedlab PRIVATE
  # spec: the sweep YAML, parameter spaces, constraints, size buckets
  ${CMAKE_CURRENT_LIST_DIR}/spec/space.cpp
  ${CMAKE_CURRENT_LIST_DIR}/spec/constraint.cpp
  ${CMAKE_CURRENT_LIST_DIR}/spec/param_values.cpp
  ${CMAKE_CURRENT_LIST_DIR}/spec/bucket.cpp
  ${CMAKE_CURRENT_LIST_DIR}/spec/bucket_yaml.cpp
  ${CMAKE_CURRENT_LIST_DIR}/spec/spec.cpp
  ${CMAKE_CURRENT_LIST_DIR}/spec/spec_schedulers.cpp
  ${CMAKE_CURRENT_LIST_DIR}/spec/scheduler.cpp
  ${CMAKE_CURRENT_LIST_DIR}/spec/draw.cpp
  # search: the strategies and the expansion of a sweep into points
  ${CMAKE_CURRENT_LIST_DIR}/search/search_strategy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/search/strategy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/search/adaptive.cpp
  ${CMAKE_CURRENT_LIST_DIR}/search/halving.cpp
  ${CMAKE_CURRENT_LIST_DIR}/search/evolution.cpp
  ${CMAKE_CURRENT_LIST_DIR}/search/model_search.cpp
  # tuned: the tuned database
  ${CMAKE_CURRENT_LIST_DIR}/tuned/tuned_file.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tuned/tuned.cpp
  # pipeline: the steps of a point as plain functions
  ${CMAKE_CURRENT_LIST_DIR}/pipeline/pipeline.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pipeline/mutate.cpp
  # run: the runner, measurement, A/B twins, shards
  ${CMAKE_CURRENT_LIST_DIR}/run/measure.cpp
  ${CMAKE_CURRENT_LIST_DIR}/run/timed_group.cpp
  ${CMAKE_CURRENT_LIST_DIR}/run/runner.cpp
  ${CMAKE_CURRENT_LIST_DIR}/run/runner_point.cpp
  ${CMAKE_CURRENT_LIST_DIR}/run/runner_isolate.cpp
  ${CMAKE_CURRENT_LIST_DIR}/run/runner_measure.cpp
  ${CMAKE_CURRENT_LIST_DIR}/run/ab.cpp
  ${CMAKE_CURRENT_LIST_DIR}/run/shard.cpp
)
# The runner registers validated points with Google Benchmark.
target_link_libraries(schedlab PRIVATE benchmark::benchmark)
# The `model` strategy's cost model: XGBoost's C API (cmake/FindXGBoost.cmake).
target_link_libraries(schedlab PRIVATE XGBoost::xgboost)
