# Tests for the memory primitives, the queries and the debug printers.
schedlab_test(sched_cache_test ${CMAKE_CURRENT_LIST_DIR}/cache_test.cpp)
schedlab_test(sched_queries_test ${CMAKE_CURRENT_LIST_DIR}/queries_test.cpp)
schedlab_test(sched_debug_print_test ${CMAKE_CURRENT_LIST_DIR}/debug_print_test.cpp)
