# codegen: the device runtime is device code in runtime.cuh, embedded into
# the library at build time (runtime_header() returns it). The printers are
# listed in core/CMakeLists.txt.
set(SCHEDLAB_RUNTIME_HEADER_TEXT ${CMAKE_CURRENT_BINARY_DIR}/generated/runtime_header_text.cpp)
add_custom_command(
  OUTPUT ${SCHEDLAB_RUNTIME_HEADER_TEXT}
  COMMAND ${CMAKE_COMMAND} -DIN=${CMAKE_CURRENT_LIST_DIR}/runtime.cuh
          -DOUT=${SCHEDLAB_RUNTIME_HEADER_TEXT} -DSYMBOL=kRuntimeHeaderText
          -P ${CMAKE_CURRENT_LIST_DIR}/../runtime/embed_text.cmake
  DEPENDS ${CMAKE_CURRENT_LIST_DIR}/runtime.cuh ${CMAKE_CURRENT_LIST_DIR}/../runtime/embed_text.cmake
  COMMENT "Embedding runtime.cuh"
  VERBATIM)
target_sources(schedlab PRIVATE ${SCHEDLAB_RUNTIME_HEADER_TEXT})
# The tensor-core runtime (mma.cuh), embedded the same way; only the units
# that use it append it (codegen::mma_header()).
set(SCHEDLAB_MMA_HEADER_TEXT ${CMAKE_CURRENT_BINARY_DIR}/generated/mma_header_text.cpp)
add_custom_command(
  OUTPUT ${SCHEDLAB_MMA_HEADER_TEXT}
  COMMAND ${CMAKE_COMMAND} -DIN=${CMAKE_CURRENT_LIST_DIR}/mma.cuh
          -DOUT=${SCHEDLAB_MMA_HEADER_TEXT} -DSYMBOL=kMmaHeaderText
          -P ${CMAKE_CURRENT_LIST_DIR}/../runtime/embed_text.cmake
  DEPENDS ${CMAKE_CURRENT_LIST_DIR}/mma.cuh ${CMAKE_CURRENT_LIST_DIR}/../runtime/embed_text.cmake
  COMMENT "Embedding mma.cuh"
  VERBATIM)
target_sources(schedlab PRIVATE ${SCHEDLAB_MMA_HEADER_TEXT} ${CMAKE_CURRENT_LIST_DIR}/mma_header.cpp)
# The cache-policy loads (cache_load.cuh: sl_ldcg, sl_vec_copy_cg, ...),
# embedded the same way; only the units with a cached load append it
# (codegen::cache_load_header()).
set(SCHEDLAB_CACHE_LOAD_TEXT ${CMAKE_CURRENT_BINARY_DIR}/generated/cache_load_text.cpp)
add_custom_command(
  OUTPUT ${SCHEDLAB_CACHE_LOAD_TEXT}
  COMMAND ${CMAKE_COMMAND} -DIN=${CMAKE_CURRENT_LIST_DIR}/cache_load.cuh
          -DOUT=${SCHEDLAB_CACHE_LOAD_TEXT} -DSYMBOL=kCacheLoadText
          -P ${CMAKE_CURRENT_LIST_DIR}/../runtime/embed_text.cmake
  DEPENDS ${CMAKE_CURRENT_LIST_DIR}/cache_load.cuh ${CMAKE_CURRENT_LIST_DIR}/../runtime/embed_text.cmake
  COMMENT "Embedding cache_load.cuh"
  VERBATIM)
target_sources(schedlab PRIVATE ${SCHEDLAB_CACHE_LOAD_TEXT})
