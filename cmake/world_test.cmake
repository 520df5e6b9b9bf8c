# graphsieve_world_test(TEST): CTest properties of a gtest program whose tests
# share a world set up once by a gtest Environment (tests/client/*_test.cc).
#
# Such a program is one CTest test. It reads "Skipped" only when it exits 77
# (tests/world_main.h: every test passed or skipped, at least one skipped),
# never by matching "[  SKIPPED ]" in its output: when the Environment's SetUp
# fails, gtest lists every test as skipped yet the run failed (exit 1), and a
# skip regex would show that broken set-up as "Skipped" (docs/RELIABILITY.md,
# "No silent skips").
function(graphsieve_world_test test)
  set_tests_properties(${test} PROPERTIES SKIP_RETURN_CODE 77)
endfunction()
