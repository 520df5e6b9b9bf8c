#include "core/io/output_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "tests/temp_dir.h"

namespace graphsieve {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void Spit(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(OutputFile, ARegularFileIsReplacedOnlyAtCommit) {
  testing::ScopedTempDir dir;
  const std::string path = dir.path() + "/out.csv";
  Spit(path, "old");
  absl::StatusOr<OutputFile> out = OutputFile::Resolve(path, "--output");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->write_path(), path + ".tmp");
  EXPECT_FALSE(out->in_place());
  Spit(out->write_path(), "new");
  EXPECT_EQ(Slurp(path), "old") << "the old file stays whole until the commit";
  ASSERT_TRUE(out->Commit().ok());
  EXPECT_EQ(Slurp(path), "new");
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST(OutputFile, AbandonLeavesTheOldFileAndNoTemporary) {
  testing::ScopedTempDir dir;
  const std::string path = dir.path() + "/out.csv";
  Spit(path, "old");
  absl::StatusOr<OutputFile> out = OutputFile::Resolve(path, "--output");
  ASSERT_TRUE(out.ok()) << out.status();
  Spit(out->write_path(), "half");
  out->Abandon();
  EXPECT_EQ(Slurp(path), "old");
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST(OutputFile, ASymlinkIsFollowedAndStaysALink) {
  testing::ScopedTempDir dir;
  const std::string target = dir.path() + "/target.csv", link = dir.path() + "/link.csv";
  Spit(target, "old");
  fs::create_symlink("target.csv", link);  // relative, as `ln -s target.csv link.csv`
  absl::StatusOr<OutputFile> out = OutputFile::Resolve(link, "--output");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->final_path(), target);
  Spit(out->write_path(), "new");
  ASSERT_TRUE(out->Commit().ok());
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_EQ(Slurp(target), "new");
  EXPECT_EQ(Slurp(link), "new");
}

TEST(OutputFile, AFifoOrADeviceIsWrittenInPlace) {
  testing::ScopedTempDir dir;
  const std::string fifo = dir.path() + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  absl::StatusOr<OutputFile> out = OutputFile::Resolve(fifo, "--output");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->in_place());
  EXPECT_EQ(out->write_path(), fifo);
  ASSERT_TRUE(out->Commit().ok());
  out->Abandon();
  struct stat st;
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "neither Commit nor Abandon touches the node";

  absl::StatusOr<OutputFile> null = OutputFile::Resolve("/dev/null", "--output");
  ASSERT_TRUE(null.ok()) << null.status();
  EXPECT_TRUE(null->in_place());

  // A link to a pipe's descriptor, as /dev/stdout is when stdout is a pipe:
  // its target "pipe:[N]" is no path, the link itself is written.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string via_proc = "/proc/self/fd/" + std::to_string(fds[1]);
  absl::StatusOr<OutputFile> piped = OutputFile::Resolve(via_proc, "--output_md");
  ::close(fds[0]);
  ::close(fds[1]);
  ASSERT_TRUE(piped.ok()) << piped.status();
  EXPECT_TRUE(piped->in_place());
  EXPECT_EQ(piped->write_path(), via_proc);
}

TEST(OutputFile, ADirectoryOrAMissingParentIsRefusedNamingTheFlag) {
  testing::ScopedTempDir dir;
  absl::StatusOr<OutputFile> d = OutputFile::Resolve(dir.path(), "--export");
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("--export"), std::string::npos) << d.status();
  EXPECT_NE(d.status().message().find("is a directory"), std::string::npos) << d.status();

  absl::StatusOr<OutputFile> m = OutputFile::Resolve(dir.path() + "/no/such/x.md", "--output_md");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("does not exist"), std::string::npos) << m.status();

  EXPECT_FALSE(OutputFile::Resolve("", "--output").ok());
}

TEST(OutputFile, WriteAllCommitsAWholeTextAndReportsAFullDevice) {
  testing::ScopedTempDir dir;
  const std::string path = dir.path() + "/report.md";
  Spit(path, "old");
  absl::StatusOr<OutputFile> out = OutputFile::Resolve(path, "--output_md");
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE(out->WriteAll("new report\n", "--output_md").ok());
  EXPECT_EQ(Slurp(path), "new report\n");
  EXPECT_FALSE(fs::exists(path + ".tmp"));

  absl::StatusOr<OutputFile> full = OutputFile::Resolve("/dev/full", "--output_md");
  ASSERT_TRUE(full.ok()) << full.status();
  const absl::Status s = full->WriteAll("text", "--output_md");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--output_md: writing /dev/full"), std::string::npos) << s;
}

TEST(RefuseOutputOverInput, TheSameFileByAnyPathIsRefused) {
  testing::ScopedTempDir dir;
  const std::string log = dir.path() + "/log.csv";
  Spit(log, "user_id,item_id,label\n");
  fs::create_symlink(log, dir.path() + "/alias.csv");
  fs::create_directory(dir.path() + "/sub");
  for (const std::string& out : {log, dir.path() + "/alias.csv", dir.path() + "/sub/../log.csv"}) {
    absl::Status s = RefuseOutputOverInput(out, "--export", log, "--input");
    ASSERT_FALSE(s.ok()) << out;
    EXPECT_NE(s.message().find("--export"), std::string::npos) << s;
    EXPECT_NE(s.message().find("--input"), std::string::npos) << s;
  }
  // A different file, a new file, standard streams and /dev/null pass.
  EXPECT_TRUE(RefuseOutputOverInput(dir.path() + "/other.csv", "--export", log, "--input").ok());
  EXPECT_TRUE(RefuseOutputOverInput("-", "--output", "-", "--input").ok());
  EXPECT_TRUE(RefuseOutputOverInput("/dev/null", "--output", "/dev/null", "--input").ok());
}

TEST(RefuseOutputOverInput, TwoOutputsThatDoNotExistYetButAreOnePathAreRefused) {
  testing::ScopedTempDir dir;
  const std::string a = dir.path() + "/t.csv";
  EXPECT_FALSE(RefuseOutputOverInput(a, "--test_output", a, "--output").ok());
  EXPECT_FALSE(
      RefuseOutputOverInput(dir.path() + "/sub/../t.csv", "--test_output", a, "--output").ok());
  // Relative and absolute spellings of one new file.
  const fs::path cwd = fs::current_path();
  fs::current_path(dir.path());
  const absl::Status relative =
      RefuseOutputOverInput("./t.csv", "--test_output", "t.csv", "--output");
  const absl::Status mixed = RefuseOutputOverInput("t.csv", "--test_output", a, "--output");
  fs::current_path(cwd);
  EXPECT_FALSE(relative.ok());
  EXPECT_FALSE(mixed.ok());
}

}  // namespace
}  // namespace graphsieve
