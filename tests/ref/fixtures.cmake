# Included by tests/ref/CMakeLists.txt: the standard library against NumPy fixtures.
schedlab_test(ref_stdlib_fixture_test stdlib_fixture_test.cpp)
