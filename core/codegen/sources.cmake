# codegen: the device runtime is device code in .cuh files, each embedded
# into the library at build time as schedlab::embedded::<symbol>
# (runtime/embed_text.cmake); runtime_header.cpp has their accessors. The
# printers are listed in core/CMakeLists.txt.
function(schedlab_embed_cuh cuh symbol out)
  set(text ${CMAKE_CURRENT_BINARY_DIR}/generated/${out})
  add_custom_command(
    OUTPUT ${text}
    COMMAND ${CMAKE_COMMAND} -DIN=${CMAKE_CURRENT_LIST_DIR}/${cuh} -DOUT=${text}
            -DSYMBOL=${symbol} -P ${CMAKE_CURRENT_LIST_DIR}/../runtime/embed_text.cmake
    DEPENDS ${CMAKE_CURRENT_LIST_DIR}/${cuh} ${CMAKE_CURRENT_LIST_DIR}/../runtime/embed_text.cmake
    COMMENT "Embedding ${cuh}"
    VERBATIM)
  target_sources(schedlab PRIVATE ${text})
endfunction()
# runtime.cuh: every unit starts with it (runtime_header()).
schedlab_embed_cuh(runtime.cuh kRuntimeHeaderText runtime_header_text.cpp)
# The tensor-core runtime (mma.cuh): only the units that use it append it
# (codegen::mma_header()).
schedlab_embed_cuh(mma.cuh kMmaHeaderText mma_header_text.cpp)
# The cache-policy loads (cache_load.cuh: sl_ldcg, sl_vec_copy_cg, ...): only
# the units with a cached load append it (codegen::cache_load_header()).
schedlab_embed_cuh(cache_load.cuh kCacheLoadText cache_load_text.cpp)
# The native half math (half_math.cuh: __hmul2, ...): only the units that
# compute half ops natively append it (codegen::half_math_header()).
schedlab_embed_cuh(half_math.cuh kHalfMathText half_math_text.cpp)
