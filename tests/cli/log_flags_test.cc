// The shared log-column flags: primary spellings, the older aliases and the
// rule that merges them (core/cli/log_flags.h).
#include "core/cli/log_flags.h"

#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "gtest/gtest.h"

namespace graphsieve {
namespace {

class LogFlagsTest : public ::testing::Test {
 private:
  absl::FlagSaver saver_;  // every test starts from the defaults
};

absl::StatusOr<LogReaderOptions> FromFlags() {
  return LogReaderOptionsFromFlags(LogReaderOptions(), /*read_pilot=*/true);
}

TEST_F(LogFlagsTest, DefaultsAreTheReaderDefaults) {
  absl::StatusOr<LogReaderOptions> r = FromFlags();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->user_column, "user_id");
  EXPECT_EQ(r->item_column, "item_id");
  EXPECT_EQ(r->label.ToString(), "label");
  EXPECT_EQ(r->pilot_column, "");
  EXPECT_EQ(r->delimiter, '\0');
  EXPECT_EQ(r->id_mode, IdMode::kAuto);
}

TEST_F(LogFlagsTest, PrimarySpellings) {
  absl::SetFlag(&FLAGS_user_col, "u");
  absl::SetFlag(&FLAGS_item_col, "i");
  absl::SetFlag(&FLAGS_label_rule, "watch_ratio > 3");
  absl::SetFlag(&FLAGS_pilot_col, "p");
  absl::SetFlag(&FLAGS_delimiter, "pipe");
  absl::SetFlag(&FLAGS_id_mode, "string");
  absl::StatusOr<LogReaderOptions> r = FromFlags();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->user_column, "u");
  EXPECT_EQ(r->item_column, "i");
  EXPECT_EQ(r->label.ToString(), "watch_ratio > 3");
  EXPECT_EQ(r->pilot_column, "p");
  EXPECT_EQ(r->delimiter, '|');
  EXPECT_EQ(r->id_mode, IdMode::kString);
}

TEST_F(LogFlagsTest, AliasesAloneAreUsed) {
  absl::SetFlag(&FLAGS_user_column, "u");
  absl::SetFlag(&FLAGS_item_column, "i");
  absl::SetFlag(&FLAGS_label, "rating >= 4");
  absl::SetFlag(&FLAGS_pilot_column, "p");
  absl::StatusOr<LogReaderOptions> r = FromFlags();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->user_column, "u");
  EXPECT_EQ(r->item_column, "i");
  EXPECT_EQ(r->label.ToString(), "rating >= 4");
  EXPECT_EQ(r->pilot_column, "p");
}

TEST_F(LogFlagsTest, LabelAliasWithAColumnNameSetsTheColumn) {
  absl::SetFlag(&FLAGS_label, "clicked");
  absl::StatusOr<LogReaderOptions> r = FromFlags();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->label.column, "clicked");
  EXPECT_EQ(r->label.op, LabelRule::Op::kBinary);
}

TEST_F(LogFlagsTest, AliasAndPrimaryAgreeingIsFine) {
  absl::SetFlag(&FLAGS_user_col, "u");
  absl::SetFlag(&FLAGS_user_column, "u");
  absl::SetFlag(&FLAGS_label_col, "clicked");
  absl::SetFlag(&FLAGS_label, "clicked");
  absl::StatusOr<LogReaderOptions> r = FromFlags();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->user_column, "u");
  EXPECT_EQ(r->label.column, "clicked");
}

TEST_F(LogFlagsTest, AliasAndPrimaryDisagreeingIsAnErrorNamingBoth) {
  absl::SetFlag(&FLAGS_item_col, "a");
  absl::SetFlag(&FLAGS_item_column, "b");
  absl::StatusOr<LogReaderOptions> r = FromFlags();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("--item-col='a'"), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find("--item-column='b'"), std::string::npos) << r.status();
}

TEST_F(LogFlagsTest, LabelAliasDisagreeingWithTheRuleIsAnError) {
  absl::SetFlag(&FLAGS_label_rule, "watch_ratio > 3");
  absl::SetFlag(&FLAGS_label, "watch_ratio > 2");
  absl::StatusOr<LogReaderOptions> r = FromFlags();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--label="), std::string::npos) << r.status();
}

TEST_F(LogFlagsTest, DatasetPresetIsOverriddenOnlyByGivenFlags) {
  absl::SetFlag(&FLAGS_dataset, "kuairec");
  absl::StatusOr<LogReaderOptions> preset = FromFlags();
  ASSERT_TRUE(preset.ok()) << preset.status();
  EXPECT_EQ(preset->item_column, "video_id");
  EXPECT_EQ(preset->label.ToString(), "watch_ratio > 3");
  absl::SetFlag(&FLAGS_item_column, "clip");  // the alias overrides the preset too
  absl::StatusOr<LogReaderOptions> r = FromFlags();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->item_column, "clip");
  EXPECT_EQ(r->label.ToString(), "watch_ratio > 3");
}

TEST_F(LogFlagsTest, PilotColumnIsIgnoredWhenNotRead) {
  absl::SetFlag(&FLAGS_pilot_col, "p");
  absl::StatusOr<LogReaderOptions> r =
      LogReaderOptionsFromFlags(LogReaderOptions(), /*read_pilot=*/false);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->pilot_column, "");
}

TEST_F(LogFlagsTest, BadValuesNameTheFlag) {
  absl::SetFlag(&FLAGS_delimiter, "two");
  absl::StatusOr<LogReaderOptions> r = FromFlags();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--delimiter"), std::string::npos) << r.status();
  absl::SetFlag(&FLAGS_delimiter, "auto");
  absl::SetFlag(&FLAGS_id_mode, "hex");
  r = FromFlags();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--id-mode"), std::string::npos) << r.status();
}

// Two column flags naming one column (the label leaking into the pilot
// score, an id read from the label) are refused, naming both flags.
TEST_F(LogFlagsTest, TwoColumnFlagsNamingOneColumnAreRefusedNamingBoth) {
  struct Case {
    std::string user, item, label_col, label_rule, pilot, message;
  };
  const Case cases[] = {
      {"user_id", "item_id", "y", "", "y", "--label-col=y and --pilot-col=y both name column 'y'"},
      {"u", "item_id", "u", "", "", "--user-col=u and --label-col=u both name column 'u'"},
      {"user_id", "i", "label", "", "i", "--item-col=i and --pilot-col=i both name column 'i'"},
      {"user_id", "item_id", "label", "watch_ratio > 3", "watch_ratio",
       "--label-rule='watch_ratio > 3' and --pilot-col=watch_ratio both name column "
       "'watch_ratio'"},
      {"user_id", "item_id", "user_id", "", "", "--user-col=user_id and --label-col=user_id"},
      {"x", "x", "label", "", "", "--user-col=x and --item-col=x both name column 'x'"},
  };
  for (const Case& c : cases) {
    absl::SetFlag(&FLAGS_user_col, c.user);
    absl::SetFlag(&FLAGS_item_col, c.item);
    absl::SetFlag(&FLAGS_label_col, c.label_col);
    absl::SetFlag(&FLAGS_label_rule, c.label_rule);
    absl::SetFlag(&FLAGS_pilot_col, c.pilot);
    absl::StatusOr<LogReaderOptions> r = FromFlags();
    ASSERT_FALSE(r.ok()) << c.message;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.message), std::string::npos) << r.status();
  }
  // A preset's column is named as the preset's.
  absl::SetFlag(&FLAGS_user_col, "user_id");
  absl::SetFlag(&FLAGS_item_col, "item_id");
  absl::SetFlag(&FLAGS_label_col, "label");
  absl::SetFlag(&FLAGS_label_rule, "");
  absl::SetFlag(&FLAGS_dataset, "kuairec");
  absl::SetFlag(&FLAGS_pilot_col, "video_id");
  absl::StatusOr<LogReaderOptions> r = FromFlags();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--item-col=video_id (from --dataset=kuairec) and "
                                      "--pilot-col=video_id"),
            std::string::npos)
      << r.status();
  // The CLI reads no pilot column: a --pilot-col it ignores conflicts with nothing.
  absl::SetFlag(&FLAGS_dataset, "");
  absl::SetFlag(&FLAGS_pilot_col, "label");
  EXPECT_TRUE(LogReaderOptionsFromFlags(LogReaderOptions(), /*read_pilot=*/false).ok());
}

TEST_F(LogFlagsTest, ReaderHintAboutAHeaderNamesThePreset) {
  const absl::Status reader = absl::InvalidArgumentError(
      "a.tsv:1: column 'rating': 'rating' is not a number (is line 1 a header? column_names is "
      "for files without one)");
  EXPECT_EQ(ExplainLogReadError(reader), reader);  // no --dataset: as it was
  absl::SetFlag(&FLAGS_dataset, "movielens");
  const absl::Status s = ExplainLogReadError(reader);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "a.tsv:1: column 'rating': 'rating' is not a number (is line 1 a header? "
            "--dataset=movielens is for files without a header; for a file with one, drop "
            "--dataset and name the columns: --user-col=user_id --item-col=item_id "
            "--label-rule='rating >= 4' (with that file's names))");
  const absl::Status other = absl::NotFoundError("cannot open a.tsv");
  EXPECT_EQ(ExplainLogReadError(other), other);
  EXPECT_TRUE(ExplainLogReadError(absl::OkStatus()).ok());
}

// The flags' help is shared by the builder and the clients: it must read
// right in each (it used to tell graphsieve-build to match itself).
TEST(LogFlagsHelpTest, IdModeHelpFitsEveryProgram) {
  const absl::CommandLineFlag* flag = absl::FindCommandLineFlag("id_mode");
  ASSERT_NE(flag, nullptr);
  EXPECT_EQ(flag->Help().find("Must match graphsieve-build's"), std::string::npos) << flag->Help();
  EXPECT_NE(flag->Help().find("built (graphsieve-build) and queried (graphsieve) with the same"),
            std::string::npos)
      << flag->Help();
}

TEST(MergeAliasFlagTest, Rule) {
  EXPECT_EQ(*MergeAliasFlag("input", "-", "pairs", "p.csv", "-"), "p.csv");
  EXPECT_EQ(*MergeAliasFlag("input", "a.csv", "pairs", "-", "-"), "a.csv");
  EXPECT_EQ(*MergeAliasFlag("input", "a.csv", "pairs", "a.csv", "-"), "a.csv");
  EXPECT_FALSE(MergeAliasFlag("input", "a.csv", "pairs", "b.csv", "-").ok());
}

}  // namespace
}  // namespace graphsieve
