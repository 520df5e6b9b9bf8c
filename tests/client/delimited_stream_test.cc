#include "client/delimited_stream.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/flags/flag.h"
#include "client/cli/flags.h"
#include "core/io/ids.h"
#include "gtest/gtest.h"
#include "tests/temp_dir.h"

namespace graphsieve {
namespace {

// <ProcessTempDir()>/name (tests/temp_dir.h: removed after the last test).
std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = testing::ProcessTempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(DelimitedStream, ReadsHeaderRowsAndRawLines) {
  const std::string path =
      WriteTemp("pairs.csv", "user_id,item_id,label\n1,10,0\n\n\"u,2\",20,1\r\n3,30,0\n");
  auto s = DelimitedStream::Open(path, LogReaderOptions());
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)->delimiter(), ',');
  ASSERT_EQ(*(*s)->Column("item_id", "--item-column"), 1u);
  std::vector<std::string> users, lines;
  while (true) {
    auto more = (*s)->Next();
    ASSERT_TRUE(more.ok()) << more.status();
    if (!*more) break;
    users.emplace_back((*s)->fields()[0]);
    lines.emplace_back((*s)->line());
  }
  EXPECT_EQ(users, (std::vector<std::string>{"1", "u,2", "3"}));
  EXPECT_EQ(lines[1], "\"u,2\",20,1");
}

TEST(DelimitedStream, DetectsTabs) {
  auto s =
      DelimitedStream::Open(WriteTemp("t.tsv", "user_id\titem_id\n5\t6\n"), LogReaderOptions());
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)->delimiter(), '\t');
  ASSERT_TRUE(*(*s)->Next());
  EXPECT_EQ((*s)->fields()[1], "6");
}

TEST(DelimitedStream, ErrorsNameTheFileLineAndColumn) {
  const std::string path = WriteTemp("bad.csv", "user_id,item_id\n1,2\n3\n");
  auto s = DelimitedStream::Open(path, LogReaderOptions());
  ASSERT_TRUE(s.ok());
  auto missing = (*s)->Column("video_id", "--item-column");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("video_id"), std::string::npos);
  EXPECT_NE(missing.status().message().find("--item-column"), std::string::npos);
  EXPECT_NE(missing.status().message().find("'user_id', 'item_id'"), std::string::npos)
      << missing.status();
  ASSERT_TRUE(*(*s)->Next());
  auto short_row = (*s)->Next();
  ASSERT_FALSE(short_row.ok());
  EXPECT_NE(short_row.status().message().find("bad.csv:3:"), std::string::npos)
      << short_row.status();

  auto none =
      DelimitedStream::Open(testing::ProcessTempDir() + "/does-not-exist.csv", LogReaderOptions());
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("does-not-exist.csv"), std::string::npos);
  auto empty = DelimitedStream::Open(WriteTemp("empty.csv", ""), LogReaderOptions());
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("empty"), std::string::npos);
}

// graphsieve-build trims spaces around header names and fields; the stream
// trims them the same way, so " 0" is the id 0, not the text " 0" hashed.
TEST(DelimitedStream, SpacesAroundFieldsAreTrimmedAsTheBuilderDoes) {
  auto plain = DelimitedStream::Open(WriteTemp("plain.csv", "user_id,item_id,label\n0,19,1\n"),
                                     LogReaderOptions());
  auto spaced = DelimitedStream::Open(
      WriteTemp("spaced.csv", "user_id, item_id , label\n 0, 19 ,1 \n"), LogReaderOptions());
  ASSERT_TRUE(plain.ok() && spaced.ok());
  for (const char* name : {"user_id", "item_id", "label"}) {
    auto a = (*plain)->Column(name, "--flag");
    auto b = (*spaced)->Column(name, "--flag");
    ASSERT_TRUE(a.ok() && b.ok()) << name << ": " << b.status();
    EXPECT_EQ(*a, *b);
  }
  ASSERT_TRUE(*(*plain)->Next());
  ASSERT_TRUE(*(*spaced)->Next());
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ((*plain)->fields()[i], (*spaced)->fields()[i]) << i;
    EXPECT_EQ(*ParseId((*plain)->fields()[i], IdMode::kAuto),
              *ParseId((*spaced)->fields()[i], IdMode::kAuto));
  }
  EXPECT_EQ(*ParseId((*spaced)->fields()[0], IdMode::kAuto), 0u);
}

// A wrong --delimiter: the message shows the header as that delimiter split
// it (one quoted name) and the delimiter that would find the column.
TEST(DelimitedStream, AMissingColumnShowsTheSplitHeaderAndSuggestsADelimiter) {
  LogReaderOptions tab;
  tab.delimiter = '\t';
  auto s = DelimitedStream::Open(WriteTemp("comma.csv", "user_id,item_id,label\n1,2,0\n"), tab);
  ASSERT_TRUE(s.ok()) << s.status();
  auto missing = (*s)->Column("user_id", "--user-col");
  ASSERT_FALSE(missing.ok());
  const std::string message(missing.status().message());
  EXPECT_NE(message.find("split on tab has 1 column: 'user_id,item_id,label'"), std::string::npos)
      << message;
  EXPECT_NE(message.find("--delimiter comma"), std::string::npos) << message;

  auto plain =
      DelimitedStream::Open(WriteTemp("plain2.csv", "user_id,item_id\n1,2\n"), LogReaderOptions());
  ASSERT_TRUE(plain.ok());
  auto absent = (*plain)->Column("label", "--label-col");
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.status().message().find("--delimiter"), std::string::npos) << absent.status();
}

TEST(EvaluateLabel, BinaryAndThresholdRules) {
  LabelRule binary;
  EXPECT_TRUE(*EvaluateLabel(binary, "1"));
  EXPECT_FALSE(*EvaluateLabel(binary, "0"));
  EXPECT_FALSE(EvaluateLabel(binary, "yes").ok());
  auto rule = LabelRule::Parse("watch_ratio > 3");
  ASSERT_TRUE(rule.ok());
  EXPECT_TRUE(*EvaluateLabel(*rule, "3.5"));
  EXPECT_FALSE(*EvaluateLabel(*rule, "3"));
  auto bad = EvaluateLabel(*rule, "abc");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("watch_ratio"), std::string::npos);
}

Subcommand TestCommand() {
  return Subcommand{"canary", "s", "u", {"sample_from", "sample", "json", "max_ks"}, nullptr};
}

int Parse(std::vector<std::string> args, bool* help, std::string* error) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  absl::Status s =
      ParseSubcommandFlags(TestCommand(), static_cast<int>(argv.size()), argv.data(), 0, help);
  *error = std::string(s.message());
  return s.ok() ? 0 : 1;
}

TEST(SubcommandFlags, DashesUnderscoresBooleansAndErrors) {
  bool help = false;
  std::string error;
  ASSERT_EQ(
      Parse({"--sample-from=log.csv", "--sample", "25", "--json", "--max_ks=0.2"}, &help, &error),
      0)
      << error;
  EXPECT_EQ(absl::GetFlag(FLAGS_sample_from), "log.csv");
  EXPECT_EQ(absl::GetFlag(FLAGS_sample), 25);
  EXPECT_TRUE(absl::GetFlag(FLAGS_json));
  EXPECT_DOUBLE_EQ(absl::GetFlag(FLAGS_max_ks), 0.2);
  ASSERT_EQ(Parse({"--no-json"}, &help, &error), 0) << error;
  EXPECT_FALSE(absl::GetFlag(FLAGS_json));
  EXPECT_FALSE(help);

  EXPECT_EQ(Parse({"--server=x:1"}, &help, &error), 1);  // not a flag of this command
  EXPECT_NE(error.find("--server"), std::string::npos);
  EXPECT_EQ(Parse({"--sample=many"}, &help, &error), 1);
  EXPECT_NE(error.find("--sample"), std::string::npos);
  EXPECT_EQ(Parse({"--sample"}, &help, &error), 1);
  EXPECT_NE(error.find("needs a value"), std::string::npos);
  EXPECT_EQ(Parse({"stray"}, &help, &error), 1);
  EXPECT_NE(error.find("stray"), std::string::npos);
  ASSERT_EQ(Parse({"--help"}, &help, &error), 0);
  EXPECT_TRUE(help);
  const std::string text = SubcommandHelp(TestCommand());
  EXPECT_NE(text.find("--sample-from"), std::string::npos);
  EXPECT_NE(text.find("--max-ks"), std::string::npos);
}

// A flag and its alias both given and different is refused, even when the
// flag is given at its default value (--user-col user_id is the default).
TEST(SubcommandFlags, AFlagAndItsAliasGivenDifferentlyAreRefused) {
  const Subcommand command{
      "rates", "s", "u", {"user_col", "user_column", "item_col", "item_column"}, nullptr};
  auto parse = [&](std::vector<std::string> args) {
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    bool help = false;
    return ParseSubcommandFlags(command, static_cast<int>(argv.size()), argv.data(), 0, &help);
  };
  absl::Status s = parse({"--user-col", "user_id", "--user-column", "foo"});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--user-col='user_id'"), std::string::npos) << s;
  EXPECT_NE(s.message().find("--user-column='foo'"), std::string::npos) << s;
  EXPECT_TRUE(parse({"--item-col", "video", "--item-column", "video"}).ok());
  EXPECT_TRUE(FlagGiven("item_column"));
}

}  // namespace
}  // namespace graphsieve
