# The CUDA backend. runtime_cuda_test: NVRTC compile-only tests, run anywhere.
# runtime_cuda_gpu_test (CTest label gpu): launch and timing tests, which
# skip when cuda_available() is false.
schedlab_test(runtime_cuda_test ${CMAKE_CURRENT_LIST_DIR}/cuda_backend_test.cpp)
schedlab_test(runtime_cuda_gpu_test ${CMAKE_CURRENT_LIST_DIR}/cuda_device_test.cpp LABELS gpu)

# runtime_cuda_fake_driver_test: the driver plumbing against a fake
# libcuda.so.1. The fake is found through an RPATH (not RUNPATH), which dlopen
# searches before LD_LIBRARY_PATH, so a real driver never shadows it.
add_library(schedlab_fake_cuda SHARED ${CMAKE_CURRENT_LIST_DIR}/fake_libcuda.cpp)
set_target_properties(schedlab_fake_cuda PROPERTIES
  OUTPUT_NAME cuda PREFIX lib SUFFIX .so.1
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/fake_cuda)
target_include_directories(schedlab_fake_cuda PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
schedlab_warnings(schedlab_fake_cuda)

schedlab_test(runtime_cuda_fake_driver_test ${CMAKE_CURRENT_LIST_DIR}/cuda_fake_driver_test.cpp)
add_dependencies(runtime_cuda_fake_driver_test schedlab_fake_cuda)
target_link_libraries(runtime_cuda_fake_driver_test PRIVATE ${CMAKE_DL_LIBS})
target_link_options(runtime_cuda_fake_driver_test PRIVATE -Wl,--disable-new-dtags)
set_target_properties(runtime_cuda_fake_driver_test PROPERTIES
  BUILD_RPATH ${CMAKE_CURRENT_BINARY_DIR}/fake_cuda)
