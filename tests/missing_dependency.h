// GRAPHSIEVE_SKIP_OR_FAIL(what): a test that cannot run because a tool, a
// file or a target is missing. Outside CI it skips, printing what is missing;
// under CI=true (the environment variable every CI runner sets) it fails,
// naming what is missing: a CI machine whose install step broke must not pass
// the suite by skipping (docs/RELIABILITY.md, "No silent skips").
//
// Use it only where a test would otherwise GTEST_SKIP for a missing
// dependency, in a void function (a TEST body or SetUp()):
//   if (!HaveOpenssl()) GRAPHSIEVE_SKIP_OR_FAIL("the openssl command-line tool");
#ifndef GRAPHSIEVE_TESTS_MISSING_DEPENDENCY_H_
#define GRAPHSIEVE_TESTS_MISSING_DEPENDENCY_H_

#include <cstdlib>
#include <cstring>

#include "gtest/gtest.h"

namespace graphsieve::testing {

// True when the environment says this is a CI run (CI=true).
inline bool UnderCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::strcmp(ci, "true") == 0;
}

}  // namespace graphsieve::testing

#define GRAPHSIEVE_SKIP_OR_FAIL(what)                                           \
  do {                                                                          \
    if (::graphsieve::testing::UnderCi()) {                                     \
      GTEST_FAIL() << "missing under CI=true: " << what                         \
                   << " (outside CI this test skips; install it or fix the CI " \
                      "machine's install step)";                                \
    }                                                                           \
    GTEST_SKIP() << "missing: " << what;                                        \
  } while (0)

#endif  // GRAPHSIEVE_TESTS_MISSING_DEPENDENCY_H_
