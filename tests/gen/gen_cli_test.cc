// The graphsieve-gen binary run as a user would: flags, exit codes, messages
// naming the flag, and byte-identical output across separate processes.
#include <sys/wait.h>

#include <cstdio>
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
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("cannot create /nonexistent/dir/x.csv.tmp"));
  r = RunGen("--no_such_flag");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("no_such_flag"));
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
