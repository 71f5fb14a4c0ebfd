# Schedule scripts. invalid_schedules/ holds one malformed script per
# diagnostic; schedule_script_test.cpp finds them at run time.
schedlab_test(frontend_schedule_script_test schedule_script_test.cpp)
# The parser alone: text to ParsedSchedule, with no fusion; and the grammar in
# docs/schedule-scripts.md, run against it.
schedlab_test(frontend_schedule_parser_test schedule_parser_test.cpp schedule_grammar_test.cpp)
