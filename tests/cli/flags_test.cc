// ParseFlags (core/cli/flags.h): a bad command line is a status naming the
// flag (the program exits 2), never Abseil's exit(1); the flags that parsed
// are set even then.
#include "core/cli/flags.h"

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "gtest/gtest.h"
#include "tests/temp_dir.h"

ABSL_FLAG(double, test_alpha, 0.2, "a number");
ABSL_FLAG(bool, test_json, false, "a switch");
ABSL_FLAG(std::string, test_name, "", "a text");

namespace graphsieve {
namespace {

class ParseFlagsTest : public ::testing::Test {
 protected:
  ParsedFlags Parse(std::vector<std::string> argv) {
    argv.insert(argv.begin(), "prog");
    storage_ = NormaliseFlagNames(static_cast<int>(argv.size()), ArgvPointers(argv).data());
    args_ = ArgvPointers(storage_);
    return ParseFlags(args_);
  }

 private:
  absl::FlagSaver saver_;  // every test starts from the defaults
  std::vector<std::string> storage_;
  std::vector<char*> args_;
};

TEST_F(ParseFlagsTest, UnknownFlagIsAStatusNamingItAndLaterFlagsAreStillRead) {
  ParsedFlags p = Parse({"--bogus=1", "--test-json"});
  EXPECT_EQ(p.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(p.status.message(), "--bogus: unknown flag (--help lists this program's flags)");
  EXPECT_FALSE(p.exit_now);
  EXPECT_TRUE(absl::GetFlag(FLAGS_test_json));  // so a failure can still be printed as JSON
}

TEST_F(ParseFlagsTest, ValuesOfTheWrongTypeOrMissingNameTheFlag) {
  EXPECT_EQ(Parse({"--test_alpha=abc"}).status.message(),
            "--test_alpha=abc: Illegal value 'abc' specified for flag 'test_alpha'");
  EXPECT_EQ(Parse({"--test_alpha"}).status.message(),
            "--test_alpha needs a value (--test_alpha=VALUE)");
  EXPECT_EQ(Parse({"--test_alpha", "--test_json"}).status.message(),
            "--test_alpha needs a value (--test_alpha=VALUE)");
  EXPECT_EQ(Parse({"--test_alpha="}).status.message(),
            "--test_alpha= needs a value (--test_alpha=VALUE)");
  EXPECT_FALSE(Parse({"--test_json=maybe"}).status.ok());
  EXPECT_FALSE(Parse({"--notest_alpha"}).status.ok());
  EXPECT_FALSE(Parse({"--notest_json=1"}).status.ok());
}

TEST_F(ParseFlagsTest, GoodCommandLineParsesAsAbseilDoes) {
  ParsedFlags p = Parse({"--test-alpha", "-0.5", "pos", "--notest_json",
                         "--test_name=", "--undefok=later", "--later=3", "--", "--not-a-flag"});
  ASSERT_TRUE(p.status.ok()) << p.status;
  EXPECT_FALSE(p.exit_now);
  EXPECT_EQ(absl::GetFlag(FLAGS_test_alpha), -0.5);
  EXPECT_FALSE(absl::GetFlag(FLAGS_test_json));
  ASSERT_EQ(p.positional.size(), 3u);
  EXPECT_EQ(std::string(p.positional[1]), "pos");
  EXPECT_EQ(std::string(p.positional[2]), "--not-a-flag");
}

// Flags read from a file or the environment are checked like the command
// line's: an error is a status naming the file and line (exit 2), where
// Abseil's own reader would end the process with exit 1.
TEST_F(ParseFlagsTest, FlagfileErrorsAreStatusesNamingTheFileAndLine) {
  testing::ScopedTempDir dir("flagfile");
  auto write = [&](const std::string& name, const std::string& text) {
    const std::string path = dir.path() + "/" + name;
    std::ofstream(path) << text;
    return path;
  };
  const std::string bad_value = write("bad_value", "--test_json\n--test-alpha=abc\n");
  EXPECT_EQ(Parse({"--flagfile=" + bad_value}).status.message(),
            "--test_alpha=abc: Illegal value 'abc' specified for flag 'test_alpha'");
  const std::string unknown = write("unknown", "# a comment\n\n  --bogus=1\n");
  EXPECT_EQ(Parse({"--flagfile", unknown}).status.message(),
            "--bogus: unknown flag (--help lists this program's flags)");
  const std::string not_a_flag = write("not_a_flag", "--test_json\nalpha 3\n");
  ParsedFlags p = Parse({"--flagfile=" + not_a_flag});
  EXPECT_EQ(p.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(p.status.message(),
            "--flagfile=" + not_a_flag +
                " line 2: 'alpha 3' is not a flag (a flag file holds one --name=value a line)");
  const std::string missing = dir.path() + "/missing";
  EXPECT_EQ(Parse({"--flagfile=" + missing}).status.message(),
            "--flagfile=" + missing + ": cannot read");
  const std::string nested = write("nested", "--flagfile=" + bad_value + "\n");
  EXPECT_EQ(Parse({"--flagfile=" + nested}).status.message(),
            "--test_alpha=abc: Illegal value 'abc' specified for flag 'test_alpha'");
  const std::string loop = dir.path() + "/loop";
  write("loop", "--flagfile=" + loop + "\n");
  EXPECT_NE(Parse({"--flagfile=" + loop}).status.message().find("nested more than"),
            absl::string_view::npos);
  EXPECT_EQ(Parse({"--fromenv=graphsieve_flags_test_unset"}).status.message(),
            "--fromenv=graphsieve_flags_test_unset: environment variable "
            "FLAGS_graphsieve_flags_test_unset is not set");
}

TEST_F(ParseFlagsTest, FlagfileAndEnvironmentFlagsAreRead) {
  testing::ScopedTempDir dir("flagfile");
  const std::string path = dir.path() + "/good";
  std::ofstream(path) << "# defaults\n  --test-alpha=0.75  \n--test_json\n";
  ASSERT_EQ(setenv("FLAGS_test_name", "from-env", 1), 0);
  ParsedFlags p = Parse({"a", "--flagfile=" + path, "--tryfromenv=test_name,test_unset", "b"});
  unsetenv("FLAGS_test_name");
  ASSERT_TRUE(p.status.ok()) << p.status;
  EXPECT_EQ(absl::GetFlag(FLAGS_test_alpha), 0.75);
  EXPECT_TRUE(absl::GetFlag(FLAGS_test_json));
  EXPECT_EQ(absl::GetFlag(FLAGS_test_name), "from-env");
  ASSERT_EQ(p.positional.size(), 3u);
  EXPECT_EQ(std::string(p.positional[1]), "a");
  EXPECT_EQ(std::string(p.positional[2]), "b");
}

TEST(NormaliseFlagNamesTest, ADashValueJoinsItsFlagUnlessTheFlagIsASwitch) {
  std::vector<std::string> argv = {"prog", "--test-name", "-",   "--test_json",
                                   "-",    "--",          "--x", "-"};
  const std::vector<std::string> out =
      NormaliseFlagNames(static_cast<int>(argv.size()), ArgvPointers(argv).data());
  // "--test_name=-": no "did you really mean '-'" warning from Abseil; a
  // switch takes no value, so its "-" stays positional, as after "--".
  EXPECT_EQ(out, (std::vector<std::string>{"prog", "--test_name=-", "--test_json", "-", "--", "--x",
                                           "-"}));
}

}  // namespace
}  // namespace graphsieve
