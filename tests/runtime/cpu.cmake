# The runtime's kernel ABI and the CPU backend (real kernels compiled by the
# host compiler). The backend test also asks NVRTC, which needs no GPU, to
# accept its kernels: they are the text the GPU would run.
schedlab_test(runtime_kernel_test kernel_test.cpp)
schedlab_test(runtime_cpu_backend_test cpu_backend_test.cpp)
target_link_libraries(runtime_cpu_backend_test PRIVATE CUDA::nvrtc)
schedlab_test(runtime_cpu_shuffle_test cpu_shuffle_test.cpp)
schedlab_test(runtime_sanitizer_test sanitizer_test.cpp)
schedlab_test(runtime_sanitizer_fusion_test sanitizer_fusion_test.cpp)
schedlab_test(runtime_work_estimate_test work_estimate_test.cpp)
