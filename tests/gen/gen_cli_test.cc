// The graphsieve-gen binary run as a user would: flags, exit codes, messages
// naming the flag, and byte-identical output across separate processes.
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/io/test_files.h"

namespace graphsieve {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

struct Result {
  int exit_code = -1;
  std::string output;  // stdout + stderr
};

Result RunGen(const std::string& args) {
  Result r;
  const std::string command = std::string(GRAPHSIEVE_GEN_BINARY) + " " + args + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof(buf), pipe)) > 0) r.output.append(buf, n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(GenCliTest, WritesTheFileAndASummary) {
  testing_io::TempFiles files;
  const std::string out = files.Path("t.csv");
  Result r = RunGen("--preset tiny --seed 3 --pilot --output " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("graphsieve-gen: wrote " + out));
  EXPECT_THAT(r.output, HasSubstr("60 users"));
  EXPECT_THAT(testing_io::ReadFile(out), StartsWith("user_id,item_id,label,pilot_score\n"));
}

TEST(GenCliTest, SameFlagsSameBytesAcrossProcesses) {
  testing_io::TempFiles files;
  ASSERT_EQ(
      RunGen("--preset tiny --scale 3 --seed 5 --quiet --output " + files.Path("a.csv")).exit_code,
      0);
  ASSERT_EQ(
      RunGen("--preset tiny --scale 3 --seed 5 --quiet --output " + files.Path("b.csv")).exit_code,
      0);
  ASSERT_EQ(
      RunGen("--preset tiny --scale 3 --seed 6 --quiet --output " + files.Path("c.csv")).exit_code,
      0);
  const std::string a = testing_io::ReadFile(files.Path("a.csv"));
  EXPECT_EQ(a, testing_io::ReadFile(files.Path("b.csv")));
  EXPECT_NE(a, testing_io::ReadFile(files.Path("c.csv")));
  Result to_stdout = RunGen("--preset tiny --scale 3 --seed 5 --quiet --output=-");
  EXPECT_EQ(to_stdout.exit_code, 0);
  EXPECT_EQ(to_stdout.output, a);
}

TEST(GenCliTest, FlagNamesMayUseDashes) {
  testing_io::TempFiles files;
  ASSERT_EQ(RunGen("--preset tiny --scale 2 --nodes_scale 2 --seed 5 --quiet --output " +
                   files.Path("a.csv"))
                .exit_code,
            0);
  const Result r = RunGen("--preset tiny --scale 2 --nodes-scale 2 --seed 5 --quiet --output " +
                          files.Path("b.csv"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(testing_io::ReadFile(files.Path("a.csv")), testing_io::ReadFile(files.Path("b.csv")));
}

TEST(GenCliTest, BadFlagsExitWithAMessageNamingTheFlag) {
  Result r = RunGen("--preset tiny");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("--output is required"));
  r = RunGen("--preset bogus --output /dev/null");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("--preset/--scale: unknown preset 'bogus'"));
  r = RunGen("--preset tiny --scale -1 --output /dev/null");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("scale must be a positive number"));
  r = RunGen("--preset tiny --positive_rate 0.9 --output /dev/null");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("positive_rate must be in (0, 0.5)"));
  r = RunGen("--preset tiny --output /dev/null extra");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("unexpected argument 'extra'"));
  r = RunGen("--preset tiny --output /nonexistent/dir/x.csv");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output,
              HasSubstr("--output '/nonexistent/dir/x.csv': the directory '/nonexistent/dir' "
                        "does not exist"));
  r = RunGen("--preset tiny --output /tmp");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("--output '/tmp' is a directory"));
  r = RunGen("--no_such_flag");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("no_such_flag"));
}

TEST(GenCliTest, ASymlinkedOutputWritesItsTargetAndStaysALink) {
  testing_io::TempFiles files;
  const std::string target = files.Write("target.csv", "old\n");
  std::filesystem::create_symlink("target.csv", files.Path("link.csv"));
  const Result r = RunGen("--preset tiny --quiet --output " + files.Path("link.csv"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::filesystem::is_symlink(files.Path("link.csv")));
  EXPECT_THAT(testing_io::ReadFile(target), StartsWith("user_id,item_id,label\n"));
}

TEST(GenCliTest, TheTestSetMayNotOverwriteTheLog) {
  testing_io::TempFiles files;
  const Result r = RunGen("--preset tiny --output " + files.Path("t.csv") + " --test_output " +
                          files.dir() + "/./t.csv");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("is the same file as --output"));
  EXPECT_FALSE(std::filesystem::exists(files.Path("t.csv"))) << "refused before writing";
}

TEST(GenCliTest, SizesTheMachineCannotHoldAreRefusedUpFront) {
  testing_io::TempFiles files;
  // 2^31 users and items: about 512 GiB of node tables.
  Result r = RunGen(
      "--preset tiny --users 2147483648 --items 2147483648 --instances 1000 "
      "--output " +
      files.Path("a.csv"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("GiB of memory"));
  EXPECT_THAT(r.output, HasSubstr("lower --users, --items or --scale"));
  // 2e15 rows: about 40 PB of text.
  r = RunGen("--preset tiny --scale 1e12 --output " + files.Path("b.csv"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("GB free: lower --instances or --scale, or add --gzip"));
  EXPECT_FALSE(std::filesystem::exists(files.Path("b.csv.tmp")));
}

// A signal that ends the run removes the temporary. Held deterministically:
// stderr is a pipe whose reader is already gone, so the first progress line
// (written after the temporary exists) raises SIGPIPE, which takes the same
// path as SIGINT and SIGTERM.
TEST(GenCliTest, ASignalThatEndsTheRunLeavesNoTemporary) {
  testing_io::TempFiles files;
  const std::string out = files.Path("k.csv");
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[0]);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(fds[1], 2);
    ::execl(GRAPHSIEVE_GEN_BINARY, GRAPHSIEVE_GEN_BINARY, "--preset", "small", "--output",
            out.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[1]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGPIPE);
  EXPECT_FALSE(std::filesystem::exists(out + ".tmp"));
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(GenCliTest, HelpListsEveryFlag) {
  Result r = RunGen("--help");
  for (const char* flag :
       {"--preset", "--scale", "--seed", "--output", "--pilot", "--truth", "--gzip", "--gzip_level",
        "--users", "--items", "--instances", "--positive_rate", "--repeat_rate", "--quiet"}) {
    EXPECT_THAT(r.output, HasSubstr(flag));
  }
  EXPECT_THAT(r.output, HasSubstr("docs/DATA.md"));
}

}  // namespace
}  // namespace graphsieve
