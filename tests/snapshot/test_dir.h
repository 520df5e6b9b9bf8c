// A fresh temporary directory per test, removed at the end.
#ifndef GRAPHSIEVE_TESTS_SNAPSHOT_TEST_DIR_H_
#define GRAPHSIEVE_TESTS_SNAPSHOT_TEST_DIR_H_

#include <stdlib.h>

#include <filesystem>
#include <string>

#include "gtest/gtest.h"

namespace graphsieve {
namespace testing_util {

class TestDir {
 public:
  TestDir() {
    std::string templ = ::testing::TempDir() + "/graphsieve-snapshot-XXXXXX";
    char* p = ::mkdtemp(templ.data());
    EXPECT_NE(p, nullptr);
    path_ = templ;
  }
  ~TestDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace testing_util
}  // namespace graphsieve

#endif  // GRAPHSIEVE_TESTS_SNAPSHOT_TEST_DIR_H_
