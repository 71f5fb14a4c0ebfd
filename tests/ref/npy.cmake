# Included by tests/ref/CMakeLists.txt: .npy reading and writing, against
# files written by NumPy (tests/fixtures/npy, made by gen_npy.py there).
schedlab_test(ref_npy_test npy_test.cpp)
