#include "core/io/ids.h"

#include <charconv>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "xxhash.h"

namespace graphsieve {
namespace {

// absl 20220623 (Debian 12) has its own absl::string_view; StrCat needs it.
inline absl::string_view Av(std::string_view s) { return absl::string_view(s.data(), s.size()); }

bool AllDigits(std::string_view text) {
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Shows at most 64 bytes of an offending id in an error message.
std::string Shown(std::string_view text) {
  if (text.size() <= 64) return std::string(text);
  return absl::StrCat(Av(text.substr(0, 61)), "...");
}

}  // namespace

uint64_t HashStringId(std::string_view text) { return XXH3_64bits(text.data(), text.size()); }

absl::StatusOr<uint64_t> ParseId(std::string_view text, IdMode mode) {
  if (text.empty()) return absl::InvalidArgumentError("empty id");
  if (mode == IdMode::kString) return HashStringId(text);
  if (AllDigits(text)) {
    uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc::result_out_of_range) {
      return absl::InvalidArgumentError(
          absl::StrCat("id '", Shown(text), "' does not fit in uint64 (max 18446744073709551615)"));
    }
    if (ec == std::errc() && end == text.data() + text.size()) return value;
  }
  if (mode == IdMode::kInteger) {
    return absl::InvalidArgumentError(
        absl::StrCat("id '", Shown(text), "' is not a decimal integer (id mode 'int')"));
  }
  return HashStringId(text);
}

absl::StatusOr<IdMode> ParseIdMode(std::string_view name) {
  if (name == "auto") return IdMode::kAuto;
  if (name == "int" || name == "integer") return IdMode::kInteger;
  if (name == "string" || name == "str") return IdMode::kString;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown id mode '", Av(name), "', expected auto, int or string"));
}

const char* IdModeName(IdMode mode) {
  switch (mode) {
    case IdMode::kAuto:
      return "auto";
    case IdMode::kInteger:
      return "int";
    case IdMode::kString:
      return "string";
  }
  return "?";
}

double UnitIntervalFromKey(uint64_t instance_key, uint64_t seed) {
  unsigned char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(instance_key >> (8 * i));
  const uint64_t h = XXH3_64bits_withSeed(bytes, sizeof(bytes), seed);
  // Top 53 bits -> a double in [0, 1) with every value exactly representable.
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

bool KeepNegative(uint64_t instance_key, uint64_t seed, double rate) {
  return UnitIntervalFromKey(instance_key, seed) < rate;
}

}  // namespace graphsieve
