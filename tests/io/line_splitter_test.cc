// LineSplitter's 8-bytes-at-a-time scan against a byte-by-byte reference on
// random lines (bytes next to the delimiter's value included, which a
// borrow-propagating SWAR test would mis-mark), and LineReader across
// buffer boundaries.
#include "core/io/line_splitter.h"

#include <charconv>
#include <string>
#include <vector>

#include "core/io/fast_parse.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/io/test_files.h"

namespace graphsieve {
namespace {

std::vector<std::string> ReferenceSplit(const std::string& line, char delimiter) {
  std::vector<std::string> out(1);
  for (char c : line) {
    if (c == delimiter) {
      out.emplace_back();
    } else {
      out.back().push_back(c);
    }
  }
  return out;
}

TEST(LineSplitterTest, MatchesByteByByteReferenceOnRandomLines) {
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(state >> 33);
  };
  for (char delimiter : {',', '\t', '|', ';'}) {
    // Neighbours of the delimiter's byte value and of zero, digits, letters.
    const std::string alphabet = std::string{static_cast<char>(delimiter - 1),
                                             static_cast<char>(delimiter + 1),
                                             static_cast<char>(delimiter ^ 1),
                                             static_cast<char>(delimiter ^ 0x80),
                                             '\x01',
                                             '\x7f',
                                             '\x80',
                                             '\xff',
                                             '0',
                                             '9',
                                             'a',
                                             '-',
                                             '.',
                                             ' '} +
                                 std::string(6, delimiter);
    LineSplitter splitter(delimiter);
    std::vector<std::string_view> fields;
    for (int trial = 0; trial < 3000; ++trial) {
      std::string line;
      const size_t len = next() % 70;
      for (size_t i = 0; i < len; ++i) line.push_back(alphabet[next() % alphabet.size()]);
      const size_t n = splitter.Split(line, &fields);
      ASSERT_EQ(splitter.error(), nullptr);
      const std::vector<std::string> expected = ReferenceSplit(line, delimiter);
      ASSERT_EQ(n, expected.size()) << "line '" << line << "'";
      for (size_t i = 0; i < n; ++i)
        ASSERT_EQ(fields[i], expected[i]) << "field " << i << " of '" << line << "'";
    }
  }
}

TEST(LineSplitterTest, QuotedFieldsAnywhere) {
  LineSplitter splitter(',');
  std::vector<std::string_view> fields;
  ASSERT_EQ(splitter.Split("12345678,\"a,b\",\"\",\"x\"\"y\",last", &fields), 5u);
  EXPECT_EQ(fields[0], "12345678");
  EXPECT_EQ(fields[1], "a,b");
  EXPECT_EQ(fields[2], "");
  EXPECT_EQ(fields[3], "x\"y");
  EXPECT_EQ(fields[4], "last");
  ASSERT_EQ(splitter.Split("a,b\"c,d", &fields), 3u);  // a quote inside an unquoted field is text
  EXPECT_EQ(fields[1], "b\"c");
  EXPECT_EQ(splitter.Split("a,\"open", &fields), 0u);
  EXPECT_NE(splitter.error(), nullptr);
}

TEST(LineReaderTest, LinesSurviveBufferBoundaries) {
  testing_io::TempFiles files;
  std::string content;
  std::vector<std::string> expected;
  for (int i = 0; i < 2000; ++i) {
    std::string line(static_cast<size_t>(i * 37 % 300), static_cast<char>('a' + i % 26));
    expected.push_back(line);
    content += line + (i % 3 == 0 ? "\r\n" : "\n");
  }
  content += "tail";
  expected.push_back("tail");
  absl::StatusOr<std::unique_ptr<ByteSource>> source =
      ByteSource::Open(files.Write("lines.txt", content));
  ASSERT_TRUE(source.ok());
  LogReaderOptions options;
  options.read_buffer_bytes = 4096;
  LineReader reader(source->get(), options);
  std::string_view line;
  size_t i = 0;
  while (true) {
    absl::StatusOr<bool> got = reader.Next(&line);
    ASSERT_TRUE(got.ok()) << got.status();
    if (!*got) break;
    ASSERT_LT(i, expected.size());
    EXPECT_EQ(line, expected[i]) << "line " << i + 1;
    EXPECT_EQ(reader.line_number(), i + 1);
    ++i;
  }
  EXPECT_EQ(i, expected.size());
  EXPECT_EQ(reader.bytes(), content.size());
}

// The fast decimal path gives the same double as std::from_chars whenever it
// accepts, and accepts the plain forms the generator and KuaiRec write.
TEST(FastParseTest, DoubleAgreesWithFromChars) {
  uint64_t state = 7;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 11;
  };
  int accepted = 0;
  for (int trial = 0; trial < 100000; ++trial) {
    const int digits = 1 + static_cast<int>(next() % 20);
    const int point = static_cast<int>(next() % (digits + 2));
    std::string text = next() % 4 == 0 ? "-" : "";
    for (int i = 0; i < digits; ++i) {
      if (i == point) text += '.';
      text += static_cast<char>('0' + next() % 10);
    }
    double fast = 0, reference = 0;
    if (!io_internal::FastParseDouble(text, &fast)) continue;
    ++accepted;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), reference);
    ASSERT_TRUE(ec == std::errc() && end == text.data() + text.size()) << text;
    ASSERT_EQ(fast, reference) << text;
  }
  EXPECT_GT(accepted, 50000);
  double v = 0;
  EXPECT_TRUE(io_internal::FastParseDouble("0.031245", &v));
  EXPECT_EQ(v, 0.031245);
  EXPECT_TRUE(io_internal::FastParseDouble("1.2733965", &v));
  EXPECT_FALSE(io_internal::FastParseDouble("1e-3", &v));  // exponents go to from_chars
  EXPECT_FALSE(io_internal::FastParseDouble("", &v));
  EXPECT_FALSE(io_internal::FastParseDouble("-", &v));
  EXPECT_FALSE(io_internal::FastParseDouble("1.2.3", &v));
  EXPECT_FALSE(io_internal::FastParseDouble("12345678901234567890", &v));  // > 19 digits
}

TEST(FastParseTest, UintAcceptsOnlyShortDigitStrings) {
  uint64_t v = 0;
  EXPECT_TRUE(io_internal::FastParseUint("9999999999999999999", &v));
  EXPECT_EQ(v, 9999999999999999999ull);
  EXPECT_FALSE(io_internal::FastParseUint("18446744073709551615", &v));  // 20 digits: the slow path
  EXPECT_FALSE(io_internal::FastParseUint("12a", &v));
  EXPECT_FALSE(io_internal::FastParseUint("", &v));
  EXPECT_FALSE(io_internal::FastParseUint("-1", &v));
}

}  // namespace
}  // namespace graphsieve
