#include "tests/temp_dir.h"

#include <errno.h>   // errno, program_invocation_short_name
#include <stdlib.h>  // mkdtemp

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace graphsieve::testing {
namespace {

// mkdtemp(<parent>/<name>-XXXXXX). Aborts the test program, naming the
// directory, when that fails: a test has nowhere else to write.
std::string MakeDirectory(absl::string_view parent, absl::string_view name) {
  std::string templ = absl::StrCat(parent, absl::EndsWith(parent, "/") ? "" : "/", name, "-XXXXXX");
  if (::mkdtemp(templ.data()) == nullptr) {
    const int err = errno;
    std::fprintf(stderr,
                 "cannot create the temporary directory %s: %s (TEST_TMPDIR, else TMPDIR, "
                 "must name an existing writable directory)\n",
                 templ.c_str(), std::strerror(err));
    std::abort();
  }
  return templ;
}

// The directory of ProcessTempDir(); never destroyed (it is removed by the
// Environment below, not by a static destructor).
std::optional<ScopedTempDir>& ProcessDir() {
  static auto* dir = new std::optional<ScopedTempDir>();
  return *dir;
}

class RemoveProcessTempDir : public ::testing::Environment {
 public:
  void TearDown() override { ProcessDir().reset(); }
};

// Registered before main(): torn down after every Environment main() adds.
[[maybe_unused]] ::testing::Environment* const kRemoveProcessTempDir =
    ::testing::AddGlobalTestEnvironment(new RemoveProcessTempDir());

}  // namespace

ScopedTempDir::ScopedTempDir(absl::string_view prefix)
    : path_(MakeDirectory(::testing::TempDir(), prefix)) {}

ScopedTempDir::~ScopedTempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
  if (ec)
    ADD_FAILURE() << "cannot remove the temporary directory " << path_ << ": " << ec.message();
}

const std::string& ProcessTempDir() {
  std::optional<ScopedTempDir>& dir = ProcessDir();
  if (!dir.has_value()) dir.emplace(program_invocation_short_name);
  return dir->path();
}

std::string NewTempDir(absl::string_view name) { return MakeDirectory(ProcessTempDir(), name); }

}  // namespace graphsieve::testing
