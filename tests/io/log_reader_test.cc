// The streaming log reader: formats, label rules, and every malformed input
// with the error it must name (file, line, column).
#include "core/io/log_reader.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/io/test_files.h"

namespace graphsieve {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing_io::TempFiles;

absl::StatusOr<ImpressionLog> Read(const std::string& path, const LogReaderOptions& options = {}) {
  ImpressionLog log;
  absl::Status s = ReadImpressionLog(path, options, &log);
  if (!s.ok()) return s;
  return log;
}

std::string ErrorOf(const std::string& path, const LogReaderOptions& options = {}) {
  absl::StatusOr<ImpressionLog> log = Read(path, options);
  EXPECT_FALSE(log.ok()) << "expected an error reading " << path;
  return log.ok() ? "" : std::string(log.status().message());
}

TEST(LogReaderTest, ReadsCsvWithHeader) {
  TempFiles files;
  const std::string content = "user_id,item_id,label\n1,10,0\n2,20,1\n3,30,0\n";
  absl::StatusOr<ImpressionLog> log = Read(files.Write("a.csv", content));
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_THAT(log->user_ids, ElementsAre(1, 2, 3));
  EXPECT_THAT(log->item_ids, ElementsAre(10, 20, 30));
  EXPECT_THAT(log->labels, ElementsAre(0, 1, 0));
  EXPECT_TRUE(log->pilot_scores.empty());
  EXPECT_EQ(log->rows_read, 3u);
  EXPECT_EQ(log->bytes_read, content.size());
}

TEST(LogReaderTest, DetectsDelimiterAndFindsColumnsByName) {
  TempFiles files;
  for (char d : {'\t', ',', '|', ';'}) {
    const std::string D(1, d);
    const std::string content =
        absl::StrCat("extra", D, "label", D, "item_id", D, "user_id\n", "x", D, "1", D, "7", D,
                     "5\n", "y", D, "0", D, "8", D, "6\n");
    absl::StatusOr<ImpressionLog> log = Read(files.Write("d.txt", content));
    ASSERT_TRUE(log.ok()) << "delimiter " << int(d) << ": " << log.status();
    EXPECT_THAT(log->user_ids, ElementsAre(5, 6));
    EXPECT_THAT(log->item_ids, ElementsAre(7, 8));
    EXPECT_THAT(log->labels, ElementsAre(1, 0));
  }
}

TEST(LogReaderTest, ExplicitDelimiterWins) {
  TempFiles files;
  // The header has more commas than semicolons; with ';' forced, "a,b" is one column name.
  const std::string path = files.Write("s.txt", "user_id;item_id;label;a,b,c\n1;2;1;x\n");
  LogReaderOptions options;
  options.delimiter = ';';
  absl::StatusOr<ImpressionLog> log = Read(path, options);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_THAT(log->item_ids, ElementsAre(2));
  EXPECT_THAT(ErrorOf(files.Write("n.txt", "user_id item_id label\n1 2 1\n")),
              HasSubstr("cannot detect the delimiter"));
}

TEST(LogReaderTest, MissingColumnListsTheHeader) {
  TempFiles files;
  const std::string path = files.Write("m.csv", "user_id,video_id,label\n1,2,0\n");
  EXPECT_EQ(
      ErrorOf(path),
      path + ":1: no item column 'item_id' in the header; columns are: user_id, video_id, label");
  LogReaderOptions options;
  options.item_column = "video_id";
  options.pilot_column = "pilot_score";
  EXPECT_THAT(ErrorOf(path, options), HasSubstr("no pilot score column 'pilot_score'"));
}

TEST(LogReaderTest, NonNumericLabelNamesFileLineAndColumn) {
  TempFiles files;
  const std::string path = files.Write("n.csv", "user_id,item_id,watch_ratio\n1,2,0.5\n1,3,abc\n");
  LogReaderOptions options;
  options.label = *LabelRule::Parse("watch_ratio > 3");
  EXPECT_EQ(ErrorOf(path, options), path + ":3: column 'watch_ratio': 'abc' is not a number");
  const std::string nan = files.Write("nan.csv", "user_id,item_id,watch_ratio\n1,2,nan\n");
  EXPECT_THAT(ErrorOf(nan, options), HasSubstr(":2: column 'watch_ratio': 'nan' is not finite"));
  const std::string empty = files.Write("e.csv", "user_id,item_id,watch_ratio\n1,2,\n");
  EXPECT_THAT(ErrorOf(empty, options),
              HasSubstr(":2: column 'watch_ratio': is empty, expected a number"));
}

TEST(LogReaderTest, LabelMustBeZeroOrOne) {
  TempFiles files;
  const std::string path = files.Write("l.csv", "user_id,item_id,label\n1,2,1\n1,3,2\n");
  EXPECT_EQ(ErrorOf(path), path + ":3: column 'label': label is '2', expected 0 or 1");
  EXPECT_THAT(ErrorOf(files.Write("y.csv", "user_id,item_id,label\n1,2,yes\n")),
              HasSubstr(":2: column 'label': label is 'yes', expected 0 or 1"));
}

TEST(LogReaderTest, RaggedRowNamesLineAndCounts) {
  TempFiles files;
  const std::string path = files.Write("r.csv", "user_id,item_id,label\n1,2,0\n3,4,1\n5,6\n");
  EXPECT_EQ(ErrorOf(path), path + ":4: expected 3 fields (as in the header), found 2");
  EXPECT_THAT(ErrorOf(files.Write("r2.csv", "user_id,item_id,label\n1,2,0,9\n")),
              HasSubstr(":2: expected 3 fields (as in the header), found 4"));
}

TEST(LogReaderTest, EmptyFileIsAnError) {
  TempFiles files;
  const std::string path = files.Write("empty.csv", "");
  EXPECT_EQ(ErrorOf(path), path + ": empty file (no header and no rows)");
  EXPECT_THAT(ErrorOf(files.Write("blank.csv", "\n\n\r\n")), HasSubstr("empty file"));
  EXPECT_THAT(ErrorOf(files.WriteGzip("empty.csv.gz", "")), HasSubstr("empty file"));
}

TEST(LogReaderTest, BinaryInputGivesAReadableError) {
  TempFiles files;
  std::string junk;
  for (int i = 0; i < 5000; ++i) junk.push_back(static_cast<char>((i * 7919 + i / 3) % 256));
  const std::string message = ErrorOf(files.Write("junk.bin", junk));
  EXPECT_THAT(message, HasSubstr("junk.bin:1: "));
  EXPECT_LT(message.size(), 4000u);
  for (char c : message) {
    EXPECT_TRUE(c >= 0x20 && c < 0x7f)
        << "raw byte " << int(static_cast<unsigned char>(c)) << " in: " << message;
  }
}

TEST(LogReaderTest, HeaderOnlyGivesNoRows) {
  TempFiles files;
  absl::StatusOr<ImpressionLog> log = Read(files.Write("h.csv", "user_id,item_id,label\n"));
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ(log->size(), 0u);
}

TEST(LogReaderTest, MissingFileIsNotFound) {
  absl::StatusOr<ImpressionLog> log = Read("/nonexistent/dir/log.csv");
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(log.status().message(), HasSubstr("/nonexistent/dir/log.csv"));
  TempFiles files;
  EXPECT_THAT(ErrorOf(files.dir()), HasSubstr("is a directory"));
}

TEST(LogReaderTest, IdOverflowNamesTheColumn) {
  TempFiles files;
  const std::string path =
      files.Write("o.csv", "user_id,item_id,label\n1,2,0\n18446744073709551616,2,0\n");
  EXPECT_EQ(ErrorOf(path),
            path +
                ":3: column 'user_id': id '18446744073709551616' does not fit in uint64 (max "
                "18446744073709551615)");
  const std::string max =
      files.Write("max.csv", "user_id,item_id,label\n18446744073709551615,2,0\n");
  absl::StatusOr<ImpressionLog> log = Read(max);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ(log->user_ids[0], UINT64_MAX);
}

TEST(LogReaderTest, StringIdsAreHashedAndTheirNamesKept) {
  TempFiles files;
  const std::string path =
      files.Write("s.csv", "user_id,item_id,label\nU1,N9,1\nU1,N8,0\n7,N9,0\n");
  absl::StatusOr<ImpressionLog> log = Read(path);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_THAT(log->user_ids, ElementsAre(HashStringId("U1"), HashStringId("U1"), 7u));
  EXPECT_THAT(log->item_ids,
              ElementsAre(HashStringId("N9"), HashStringId("N8"), HashStringId("N9")));
  EXPECT_EQ(log->user_names.size(), 1u);
  EXPECT_EQ(log->user_names.at(HashStringId("U1")), "U1");
  EXPECT_EQ(log->item_names.at(HashStringId("N8")), "N8");
  LogReaderOptions options;
  options.id_mode = IdMode::kInteger;
  EXPECT_THAT(ErrorOf(path, options),
              HasSubstr(":2: column 'user_id': id 'U1' is not a decimal integer"));
  options.id_mode = IdMode::kString;
  log = Read(path, options);
  ASSERT_TRUE(log.ok());
  EXPECT_EQ(log->user_ids[2], HashStringId("7"));
}

TEST(LogReaderTest, ThresholdRuleOperators) {
  TempFiles files;
  const std::string path =
      files.Write("t.csv", "user_id,item_id,r\n1,1,2\n1,2,3\n1,3,4\n1,4,-1e1\n");
  const std::vector<std::pair<std::string, std::vector<uint8_t>>> cases = {
      {"r > 3", {0, 0, 1, 0}}, {"r >= 3", {0, 1, 1, 0}}, {"r < 3", {1, 0, 0, 1}},
      {"r<=3", {1, 1, 0, 1}},  {"r == 3", {0, 1, 0, 0}}, {"r != 3", {1, 0, 1, 1}}};
  for (const auto& [rule, expected] : cases) {
    LogReaderOptions options;
    options.label = *LabelRule::Parse(rule);
    absl::StatusOr<ImpressionLog> log = Read(path, options);
    ASSERT_TRUE(log.ok()) << rule << ": " << log.status();
    EXPECT_EQ(log->labels, expected) << rule;
  }
}

// The reader's fast decimal path must agree exactly with std::from_chars
// (used by LabelRule::Parse): "x == d" is true for the row holding d.
TEST(LogReaderTest, DecimalsParseExactly) {
  TempFiles files;
  uint64_t state = 99;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 11;
  };
  for (int trial = 0; trial < 300; ++trial) {
    const int digits = 1 + static_cast<int>(next() % 17);
    const int point = static_cast<int>(next() % (digits + 1));
    std::string d = trial % 5 == 0 ? "-" : "";
    for (int i = 0; i < digits; ++i) {
      if (i == point && i > 0) d += '.';
      d += static_cast<char>('0' + next() % 10);
    }
    const std::string path =
        files.Write("d.csv", "user_id,item_id,x\n1,2," + d + "\n1,3,0.5e-300\n");
    LogReaderOptions options;
    absl::StatusOr<LabelRule> rule = LabelRule::Parse("x == " + d);
    ASSERT_TRUE(rule.ok()) << d;
    options.label = *rule;
    absl::StatusOr<ImpressionLog> log = Read(path, options);
    ASSERT_TRUE(log.ok()) << log.status();
    EXPECT_THAT(log->labels, ElementsAre(1, 0)) << "decimal " << d;
  }
}

TEST(LabelRuleTest, ParsesAndRoundTrips) {
  LabelRule r = *LabelRule::Parse("  watch_ratio > 3 ");
  EXPECT_EQ(r.column, "watch_ratio");
  EXPECT_EQ(r.op, LabelRule::Op::kGt);
  EXPECT_EQ(r.threshold, 3.0);
  EXPECT_EQ(r.ToString(), "watch_ratio > 3");
  r = *LabelRule::Parse("rating>=4.5");
  EXPECT_EQ(r.op, LabelRule::Op::kGe);
  EXPECT_EQ(r.threshold, 4.5);
  EXPECT_EQ(LabelRule::Parse(r.ToString())->threshold, 4.5);
  r = *LabelRule::Parse("clicked");
  EXPECT_EQ(r.op, LabelRule::Op::kBinary);
  EXPECT_EQ(r.column, "clicked");
}

TEST(LabelRuleTest, BadRulesNameTheRule) {
  EXPECT_EQ(LabelRule::Parse("").status().message(), "label rule is empty");
  EXPECT_EQ(LabelRule::Parse("watch_ratio > abc").status().message(),
            "label rule 'watch_ratio > abc': threshold 'abc' is not a finite number");
  EXPECT_THAT(LabelRule::Parse("watch_ratio >").status().message(),
              HasSubstr("threshold '' is not"));
  EXPECT_THAT(LabelRule::Parse("> 3").status().message(),
              HasSubstr("missing or invalid column name"));
  EXPECT_THAT(LabelRule::Parse("watch ratio").status().message(),
              HasSubstr("expected a column name"));
  EXPECT_THAT(LabelRule::Parse("x > inf").status().message(), HasSubstr("not a finite number"));
}

TEST(LogReaderTest, MaxBadRowsSkipsAndCounts) {
  TempFiles files;
  const std::string path =
      files.Write("b.csv", "user_id,item_id,label\n1,2,0\nx,\n3,4,1\n5,6,maybe\n7,8,0\n");
  LogReaderOptions options;
  options.max_bad_rows = 2;
  absl::StatusOr<ImpressionLog> log = Read(path, options);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_THAT(log->user_ids, ElementsAre(1, 3, 7));
  EXPECT_EQ(log->bad_rows_skipped, 2u);
  EXPECT_EQ(log->rows_read, 5u);
  ASSERT_EQ(log->bad_row_messages.size(), 2u);
  EXPECT_THAT(log->bad_row_messages[0], HasSubstr(":3: expected 3 fields"));
  EXPECT_THAT(log->bad_row_messages[1], HasSubstr(":5: column 'label': label is 'maybe'"));
  options.max_bad_rows = 1;
  EXPECT_THAT(
      ErrorOf(path, options),
      HasSubstr(
          ":5: column 'label': label is 'maybe', expected 0 or 1 (after skipping 1 bad rows"));
}

TEST(LogReaderTest, PilotScoreColumn) {
  TempFiles files;
  LogReaderOptions options;
  options.pilot_column = "pilot_score";
  absl::StatusOr<ImpressionLog> log = Read(
      files.Write("p.csv", "user_id,item_id,label,pilot_score\n1,2,0,0.25\n1,3,1,1e-3\n"), options);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_THAT(log->pilot_scores, ElementsAre(0.25f, 0.001f));
  EXPECT_THAT(
      ErrorOf(files.Write("q.csv", "user_id,item_id,label,pilot_score\n1,2,0,1.5\n"), options),
      HasSubstr(":2: column 'pilot_score': pilot score 1.5 is outside [0, 1]"));
}

TEST(LogReaderTest, QuotedFieldsCrlfBomAndBlankLines) {
  TempFiles files;
  const std::string content =
      "\xEF\xBB\xBF"
      "user_id,item_id,label,comment\r\n"
      "\"U,1\",\"7\",1,\"said \"\"hi\"\", then left\"\r\n"
      "\r\n"
      "\"say \"\"x\"\"\",8, 0 ,plain\r\n"
      "9,10,1,last line without newline";
  absl::StatusOr<ImpressionLog> log = Read(files.Write("q.csv", content));
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_THAT(log->user_ids, ElementsAre(HashStringId("U,1"), HashStringId("say \"x\""), 9u));
  EXPECT_THAT(log->item_ids, ElementsAre(7, 8, 10));
  EXPECT_THAT(log->labels, ElementsAre(1, 0, 1));
  EXPECT_EQ(log->user_names.at(HashStringId("say \"x\"")), "say \"x\"");
  EXPECT_THAT(ErrorOf(files.Write("u.csv", "user_id,item_id,label\n\"1,2,0\n")),
              HasSubstr(":2: unterminated quoted field"));
  EXPECT_THAT(ErrorOf(files.Write("v.csv", "user_id,item_id,label\n\"1\"x,2,0\n")),
              HasSubstr(":2: unexpected text after a closing quote"));
}

TEST(LogReaderTest, GzipRoundTripMatchesPlain) {
  TempFiles files;
  std::string content = "user_id,item_id,label,pilot_score\n";
  for (int i = 0; i < 50000; ++i)
    absl::StrAppend(&content, i % 997, ",", i % 1009, ",", i % 7 == 0, ",0.5\n");
  LogReaderOptions options;
  options.pilot_column = "pilot_score";
  absl::StatusOr<ImpressionLog> plain = Read(files.Write("g.csv", content), options);
  absl::StatusOr<ImpressionLog> gz = Read(files.WriteGzip("g.csv.gz", content), options);
  // No .gz suffix: gzip is detected from the magic bytes.
  absl::StatusOr<ImpressionLog> unnamed = Read(files.WriteGzip("g.data", content), options);
  ASSERT_TRUE(plain.ok() && gz.ok() && unnamed.ok()) << gz.status() << unnamed.status();
  EXPECT_EQ(plain->size(), 50000u);
  EXPECT_EQ(plain->user_ids, gz->user_ids);
  EXPECT_EQ(plain->item_ids, gz->item_ids);
  EXPECT_EQ(plain->labels, gz->labels);
  EXPECT_EQ(plain->pilot_scores, unnamed->pilot_scores);
  EXPECT_EQ(gz->bytes_read, content.size());
  // Concatenated members (cat a.gz b.gz) read as one stream.
  const std::string two =
      testing_io::Gzip("user_id,item_id,label\n1,2,0\n") + testing_io::Gzip("3,4,1\n");
  absl::StatusOr<ImpressionLog> cat = Read(files.Write("two.gz", two));
  ASSERT_TRUE(cat.ok()) << cat.status();
  EXPECT_THAT(cat->user_ids, ElementsAre(1, 3));
}

TEST(LogReaderTest, TruncatedAndCorruptGzipAreDataLoss) {
  TempFiles files;
  std::string content = "user_id,item_id,label\n";
  for (int i = 0; i < 20000; ++i) absl::StrAppend(&content, i, ",", i * 7 % 1000, ",0\n");
  const std::string gz = testing_io::Gzip(content);
  const std::string cut = files.Write("cut.gz", gz.substr(0, gz.size() / 2));
  absl::StatusOr<ImpressionLog> log = Read(cut);
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(log.status().message(), HasSubstr(cut + ": truncated gzip stream"));
  // Losing only the 8-byte trailer (CRC + size) is truncation too.
  EXPECT_THAT(ErrorOf(files.Write("trailer.gz", gz.substr(0, gz.size() - 4))),
              HasSubstr("truncated gzip"));
  std::string bad = gz;
  for (size_t i = gz.size() / 3; i < gz.size() / 3 + 64; ++i)
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
  log = Read(files.Write("bad.gz", bad));
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(log.status().message(), HasSubstr("bad.gz: corrupt gzip data"));
}

// Background inflation (the default) and inline inflation agree, report
// damage the same way, and stopping early at a bad row does not hang.
TEST(LogReaderTest, BackgroundAndInlineGzipAgree) {
  TempFiles files;
  std::string content = "user_id,item_id,label\n";
  for (int i = 0; i < 300000; ++i)
    absl::StrAppend(&content, i % 5000, ",", i * 13 % 7001, ",", i % 31 == 0, "\n");
  const std::string gz = testing_io::Gzip(content);
  const std::string path = files.Write("big.csv.gz", gz);
  LogReaderOptions inline_options;
  inline_options.decompress_in_background = false;
  absl::StatusOr<ImpressionLog> a = Read(path);
  absl::StatusOr<ImpressionLog> b = Read(path, inline_options);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  EXPECT_EQ(a->size(), 300000u);
  EXPECT_EQ(a->user_ids, b->user_ids);
  EXPECT_EQ(a->item_ids, b->item_ids);
  EXPECT_EQ(a->labels, b->labels);
  EXPECT_EQ(a->bytes_read, content.size());
  const std::string cut = files.Write("cut.csv.gz", gz.substr(0, gz.size() * 2 / 3));
  EXPECT_EQ(ErrorOf(cut), ErrorOf(cut, inline_options));
  EXPECT_THAT(ErrorOf(cut), HasSubstr("truncated gzip stream"));
  // A bad row near the start: the reader returns while the prefetcher is ahead.
  const std::string early =
      files.WriteGzip("early.csv.gz", "user_id,item_id,label\n1,2,7\n" + content.substr(22));
  EXPECT_THAT(ErrorOf(early), HasSubstr("early.csv.gz:2: column 'label': label is '7'"));
}

TEST(LogReaderTest, SmallBufferGivesTheSameRowsAndLongLinesGrowIt) {
  TempFiles files;
  std::string content = "user_id,item_id,label,pad\n";
  for (int i = 0; i < 3000; ++i) {
    absl::StrAppend(&content, i, ",", i * 31 % 101, ",", i % 3 == 0, ",",
                    std::string(i % 17 == 0 ? 6000 : 3, 'x'), "\n");
  }
  const std::string path = files.Write("long.csv", content);
  LogReaderOptions small;
  small.read_buffer_bytes = 4096;
  absl::StatusOr<ImpressionLog> a = Read(path, small);
  absl::StatusOr<ImpressionLog> b = Read(path);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status();
  EXPECT_EQ(a->size(), 3000u);
  EXPECT_EQ(a->user_ids, b->user_ids);
  EXPECT_EQ(a->item_ids, b->item_ids);
  EXPECT_EQ(a->labels, b->labels);
  small.max_line_bytes = 4096;
  EXPECT_THAT(ErrorOf(path, small), HasSubstr(":2: line longer than 4096 bytes"));
}

TEST(LogReaderTest, AppendsAndLeavesTheLogUnchangedOnError) {
  TempFiles files;
  ImpressionLog log;
  ASSERT_TRUE(
      ReadImpressionLog(files.Write("a.csv", "user_id,item_id,label\n1,2,0\n"), {}, &log).ok());
  ASSERT_TRUE(
      ReadImpressionLog(files.Write("b.csv", "user_id,item_id,label\n3,4,1\n"), {}, &log).ok());
  EXPECT_THAT(log.user_ids, ElementsAre(1, 3));
  EXPECT_EQ(log.rows_read, 2u);
  const absl::Status s =
      ReadImpressionLog(files.Write("c.csv", "user_id,item_id,label\n5,6,1\n7,8,9\n"), {}, &log);
  EXPECT_THAT(s.message(), HasSubstr("c.csv:3"));
  EXPECT_THAT(log.user_ids, ElementsAre(1, 3));
  EXPECT_EQ(log.labels.size(), 2u);
  EXPECT_EQ(log.rows_read, 2u);
  LogReaderOptions pilot;
  pilot.pilot_column = "p";
  EXPECT_THAT(
      ReadImpressionLog(files.Write("d.csv", "user_id,item_id,label,p\n1,1,1,0.5\n"), pilot, &log)
          .message(),
      HasSubstr("cannot append"));
}

TEST(LogReaderTest, ProgressReportsAllBytes) {
  TempFiles files;
  std::string content = "user_id,item_id,label\n";
  for (int i = 0; i < 1000; ++i) absl::StrAppend(&content, i, ",", i, ",0\n");
  uint64_t last_bytes = 0, last_rows = 0;
  int calls = 0;
  LogReaderOptions options;
  options.progress = [&](uint64_t bytes, uint64_t rows) {
    ++calls;
    last_bytes = bytes;
    last_rows = rows;
  };
  ASSERT_TRUE(Read(files.Write("p.csv", content), options).ok());
  EXPECT_GE(calls, 1);
  EXPECT_EQ(last_bytes, content.size());
  EXPECT_EQ(last_rows, 1000u);
}

TEST(LogReaderTest, HeaderlessWithColumnNames) {
  TempFiles files;
  LogReaderOptions options;
  options.column_names = {"user_id", "item_id", "rating", "ts"};
  options.label = *LabelRule::Parse("rating >= 4");
  absl::StatusOr<ImpressionLog> log =
      Read(files.Write("u.data", "196\t242\t3\t881250949\n186\t302\t4\t891717742\n"), options);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_THAT(log->user_ids, ElementsAre(196, 186));
  EXPECT_THAT(log->labels, ElementsAre(0, 1));
  options.id_mode = IdMode::kInteger;
  EXPECT_THAT(
      ErrorOf(files.Write("hdr.data", "user_id\titem_id\trating\tts\n1\t2\t5\t0\n"), options),
      HasSubstr(":1: column 'user_id': id 'user_id' is not a decimal integer (id mode "
                "'int') (is line 1 a header?"));
  options.id_mode = IdMode::kAuto;
  EXPECT_THAT(
      ErrorOf(files.Write("hdr2.data", "user_id\titem_id\trating\tts\n1\t2\t5\t0\n"), options),
      HasSubstr("'rating' is not a number (is line 1 a header? column_names is for files"));
  options.column_names = {"user_id", "item_id", "score"};
  EXPECT_THAT(ErrorOf(files.Write("v.data", "1\t2\t3\n"), options),
              HasSubstr("no label column 'rating' in the given column names; columns are: user_id, "
                        "item_id, score"));
}

TEST(LogReaderTest, MindImpressionsExpandToInstances) {
  TempFiles files;
  LogReaderOptions options;
  ASSERT_TRUE(ApplyDatasetPreset("mind", &options).ok());
  const std::string content =
      "1\tU13740\t11/11/2019 9:05:58 AM\tN55189 N42782\tN55689-1 N35729-0\n"
      "2\tU91836\t11/12/2019 6:11:30 PM\t\tN20678-0  N39317-0 N58114-1\n";
  absl::StatusOr<ImpressionLog> log = Read(files.Write("behaviors.tsv", content), options);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ(log->rows_read, 2u);
  EXPECT_THAT(log->user_ids,
              ElementsAre(HashStringId("U13740"), HashStringId("U13740"), HashStringId("U91836"),
                          HashStringId("U91836"), HashStringId("U91836")));
  EXPECT_THAT(log->item_ids,
              ElementsAre(HashStringId("N55689"), HashStringId("N35729"), HashStringId("N20678"),
                          HashStringId("N39317"), HashStringId("N58114")));
  EXPECT_THAT(log->labels, ElementsAre(1, 0, 0, 0, 1));
  EXPECT_EQ(log->item_names.at(HashStringId("N58114")), "N58114");
  const std::string test_split = files.Write("test.tsv", "1\tU1\tt\t\tN1 N2\n");
  EXPECT_THAT(
      ErrorOf(test_split, options),
      HasSubstr(":1: column 'impressions': impression 'N1' is not '<item>-0' or '<item>-1'"));
}

TEST(LogReaderOptionsTest, ValidateNamesTheConstraint) {
  LogReaderOptions o;
  o.item_column = "user_id";
  EXPECT_THAT(o.Validate().message(), HasSubstr("both 'user_id'"));
  o = {};
  o.max_bad_rows = -1;
  EXPECT_THAT(o.Validate().message(), HasSubstr("max_bad_rows must be >= 0"));
  o = {};
  o.column_names = {"a", "b", "a"};
  EXPECT_THAT(o.Validate().message(), HasSubstr("lists 'a' twice"));
  o = {};
  o.delimiter = '"';
  EXPECT_FALSE(o.Validate().ok());
  ImpressionLog log;
  EXPECT_THAT(ReadImpressionLog("x.csv", o, &log).message(), HasSubstr("log reader options:"));
  EXPECT_THAT(ParseLogFormat("parquet").status().message(),
              HasSubstr("unknown log format 'parquet'"));
  EXPECT_EQ(*ParseLogFormat("mind"), LogFormat::kMind);
}

}  // namespace
}  // namespace graphsieve
