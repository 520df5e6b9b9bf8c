// Temporary files for the io tests: plain text and gzip (written with zlib
// directly, independent of the code under test). Each TempFiles is its own
// directory under ::testing::TempDir(), removed with it (tests/temp_dir.h).
#ifndef GRAPHSIEVE_TESTS_IO_TEST_FILES_H_
#define GRAPHSIEVE_TESTS_IO_TEST_FILES_H_

#include <string>

#include "gtest/gtest.h"
#include "tests/temp_dir.h"

namespace graphsieve::testing_io {

class TempFiles {
 public:
  // Writes `content` to <dir>/<name> and returns the path.
  std::string Write(const std::string& name, const std::string& content) const;
  // Writes `content` gzip-compressed (one member) and returns the path.
  std::string WriteGzip(const std::string& name, const std::string& content) const;
  std::string Path(const std::string& name) const { return dir() + "/" + name; }
  const std::string& dir() const { return dir_.path(); }

 private:
  ::graphsieve::testing::ScopedTempDir dir_{"graphsieve_io"};
};

// The gzip bytes of `content` (windowBits 15+16, level 6).
std::string Gzip(const std::string& content);
std::string ReadFile(const std::string& path);

}  // namespace graphsieve::testing_io

#endif  // GRAPHSIEVE_TESTS_IO_TEST_FILES_H_
