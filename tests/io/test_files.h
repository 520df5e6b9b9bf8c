// Temporary files for the io tests: plain text and gzip (written with zlib
// directly, independent of the code under test). Each test gets its own
// directory under ::testing::TempDir(), removed at the end.
#ifndef GRAPHSIEVE_TESTS_IO_TEST_FILES_H_
#define GRAPHSIEVE_TESTS_IO_TEST_FILES_H_

#include <string>

#include "gtest/gtest.h"

namespace graphsieve::testing_io {

class TempFiles {
 public:
  TempFiles();
  ~TempFiles();
  // Writes `content` to <dir>/<name> and returns the path.
  std::string Write(const std::string& name, const std::string& content) const;
  // Writes `content` gzip-compressed (one member) and returns the path.
  std::string WriteGzip(const std::string& name, const std::string& content) const;
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

// The gzip bytes of `content` (windowBits 15+16, level 6).
std::string Gzip(const std::string& content);
std::string ReadFile(const std::string& path);

}  // namespace graphsieve::testing_io

#endif  // GRAPHSIEVE_TESTS_IO_TEST_FILES_H_
