// Ids and hashing: known XXH3 values (checked against the xxhsum CLI),
// integer/string modes, overflow errors, and the KeepNegative rate.
#include "core/io/ids.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphsieve {
namespace {

using ::testing::HasSubstr;

// Values printed by `printf '%s' TEXT | xxhsum -H3` (Debian package xxhash 0.8.1).
TEST(HashStringIdTest, MatchesXxhsumCli) {
  EXPECT_EQ(HashStringId(""), 0x2d06800538d394c2ull);
  EXPECT_EQ(HashStringId("U123"), 0x3455695300f0214dull);
  EXPECT_EQ(HashStringId("N4567"), 0x69cfb29dccce51caull);
  EXPECT_EQ(HashStringId("user_42"), 0x16dbb953abdd8e25ull);
}

TEST(ParseIdTest, AutoModeKeepsIntegersAndHashesText) {
  EXPECT_EQ(*ParseId("0", IdMode::kAuto), 0u);
  EXPECT_EQ(*ParseId("123", IdMode::kAuto), 123u);
  EXPECT_EQ(*ParseId("18446744073709551615", IdMode::kAuto), UINT64_MAX);
  EXPECT_EQ(*ParseId("U123", IdMode::kAuto), HashStringId("U123"));
  EXPECT_EQ(*ParseId("-5", IdMode::kAuto), HashStringId("-5"));  // not a uint64: hashed
}

TEST(ParseIdTest, StringModeHashesDigitsToo) {
  EXPECT_EQ(*ParseId("123", IdMode::kString), HashStringId("123"));
  EXPECT_NE(*ParseId("123", IdMode::kString), 123u);
}

TEST(ParseIdTest, OverflowIsAnErrorInEveryNumericMode) {
  for (IdMode mode : {IdMode::kAuto, IdMode::kInteger}) {
    absl::StatusOr<uint64_t> id = ParseId("18446744073709551616", mode);
    ASSERT_FALSE(id.ok());
    EXPECT_EQ(id.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(id.status().message(), HasSubstr("18446744073709551616"));
    EXPECT_THAT(id.status().message(), HasSubstr("does not fit in uint64"));
  }
}

TEST(ParseIdTest, IntegerModeRejectsText) {
  absl::StatusOr<uint64_t> id = ParseId("U123", IdMode::kInteger);
  ASSERT_FALSE(id.ok());
  EXPECT_THAT(id.status().message(), HasSubstr("'U123' is not a decimal integer"));
  EXPECT_FALSE(ParseId("", IdMode::kAuto).ok());
  EXPECT_THAT(ParseId("", IdMode::kString).status().message(), HasSubstr("empty id"));
}

TEST(ParseIdModeTest, NamesRoundTrip) {
  for (IdMode mode : {IdMode::kAuto, IdMode::kInteger, IdMode::kString}) {
    EXPECT_EQ(*ParseIdMode(IdModeName(mode)), mode);
  }
  EXPECT_THAT(ParseIdMode("hex").status().message(), HasSubstr("unknown id mode 'hex'"));
}

// XXH3 of the key's 8 little-endian bytes with seed 0, as xxhsum prints it:
// printf '\x2a\0\0\0\0\0\0\0' | xxhsum -H3 -> d5a6f8c838df27c8.
TEST(KeepNegativeTest, UniformNumberIsTopBitsOfXxh3OfLittleEndianKey) {
  EXPECT_DOUBLE_EQ(UnitIntervalFromKey(42, 0),
                   static_cast<double>(0xd5a6f8c838df27c8ull >> 11) * 0x1.0p-53);
  EXPECT_DOUBLE_EQ(UnitIntervalFromKey(0x0102030405060708ull, 0),
                   static_cast<double>(0x908faf195058ca9eull >> 11) * 0x1.0p-53);
  const double x = UnitIntervalFromKey(42, 0);
  EXPECT_TRUE(KeepNegative(42, 0, std::nextafter(x, 1.0)));
  EXPECT_FALSE(KeepNegative(42, 0, x));
  EXPECT_NE(UnitIntervalFromKey(42, 1), x);  // the seed matters
}

TEST(KeepNegativeTest, BoundaryRates) {
  for (uint64_t key = 0; key < 1000; ++key) {
    EXPECT_FALSE(KeepNegative(key, 7, 0.0));
    EXPECT_TRUE(KeepNegative(key, 7, 1.0));
  }
}

// The fraction kept must match the rate within 5 binomial standard deviations.
TEST(KeepNegativeTest, KeptFractionMatchesRate) {
  constexpr int kTrials = 200000;
  for (double rate : {0.01, 0.2, 0.5, 0.93}) {
    for (uint64_t seed : {0ull, 1ull, 0xdeadbeefull}) {
      int kept = 0;
      for (int i = 0; i < kTrials; ++i)
        kept += KeepNegative(static_cast<uint64_t>(i) * 7919u, seed, rate);
      const double sd = std::sqrt(kTrials * rate * (1 - rate));
      EXPECT_NEAR(kept, kTrials * rate, 5 * sd) << "rate " << rate << " seed " << seed;
    }
  }
}

// Decisions at two rates are nested: anything kept at 0.1 is kept at 0.3.
TEST(KeepNegativeTest, DecisionsAreMonotoneInRate) {
  for (uint64_t key = 0; key < 20000; ++key) {
    if (KeepNegative(key, 3, 0.1)) {
      EXPECT_TRUE(KeepNegative(key, 3, 0.3));
    }
  }
}

}  // namespace
}  // namespace graphsieve
