# Tests applying nvFuser-style user schedules to fusions from configs/fusions.
schedlab_test(sched_user_schedules_test user_schedules_test.cpp)
