// Temporary directories of the tests. Every test creates its files under
// ::testing::TempDir() (GoogleTest 1.12: $TEST_TMPDIR, else $TMPDIR, else
// /tmp/) and removes them when it finishes, so a passing run leaves nothing
// behind; scripts/test.sh points both variables at a directory of its own and
// fails when anything is left there (docs/RELIABILITY.md, "Temporary files").
//
// Two lifetimes:
//   ScopedTempDir dir("name");      removed when `dir` goes (a test body, a fixture member);
//   NewTempDir("name")              removed after the program's last test (a directory
//                                   handed to servers or to a gtest Environment that
//                                   outlive the test body or fixture that made it).
// Stop every process and close every store that writes into a directory before it goes.
//
// Not thread-safe: make directories from the test's main thread.
#ifndef GRAPHSIEVE_TESTS_TEMP_DIR_H_
#define GRAPHSIEVE_TESTS_TEMP_DIR_H_

#include <string>

#include "absl/strings/string_view.h"

namespace graphsieve::testing {

// A fresh directory <TempDir()>/<prefix>-XXXXXX (mkdtemp), removed with
// everything in it when the object is destroyed. A directory that cannot be
// made aborts the program naming it; one that cannot be removed is a test
// failure naming it.
class ScopedTempDir {
 public:
  explicit ScopedTempDir(absl::string_view prefix = "graphsieve-test");
  ~ScopedTempDir();
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// This test program's directory, <TempDir()>/<program>-XXXXXX, made on first
// use. A gtest Environment registered before main() removes it with everything
// in it after the last test: gtest tears Environments down in reverse order,
// so that comes after every test, every fixture and every other Environment's
// TearDown (which stop the servers the tests started).
const std::string& ProcessTempDir();

// A fresh directory <ProcessTempDir()>/<name>-XXXXXX, unique per call, removed
// with ProcessTempDir().
std::string NewTempDir(absl::string_view name);

}  // namespace graphsieve::testing

#endif  // GRAPHSIEVE_TESTS_TEMP_DIR_H_
