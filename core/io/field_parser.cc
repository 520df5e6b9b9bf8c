#include "core/io/field_parser.h"

#include <charconv>
#include <cmath>

#include "absl/base/attributes.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace graphsieve::io_internal {

std::string Shown(std::string_view text) {
  if (text.size() <= 40) return absl::CHexEscape(Av(text));
  return absl::StrCat(absl::CHexEscape(Av(text.substr(0, 37))), "...");
}

std::string ShownColumns(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < 30; ++i) {
    absl::StrAppend(&out, i > 0 ? ", " : "", Shown(names[i]));
  }
  if (names.size() > 30) absl::StrAppend(&out, ", ... (", names.size(), " columns)");
  return out;
}

absl::Status FieldParser::RowError(absl::string_view column, absl::string_view problem) const {
  if (column.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path_, ":", lines_.line_number(), ": ", problem));
  }
  return absl::InvalidArgumentError(
      absl::StrCat(path_, ":", lines_.line_number(), ": column '", column, "': ", problem));
}

ABSL_ATTRIBUTE_NOINLINE absl::Status FieldParser::ParseIdFieldSlow(
    std::string_view text, const std::string& column,
    absl::flat_hash_map<uint64_t, std::string>* names, uint64_t* id) const {
  absl::StatusOr<uint64_t> parsed = ParseId(text, options_.id_mode);
  if (!parsed.ok()) return RowError(column, parsed.status().message());
  *id = *parsed;
  const bool hashed = options_.id_mode == IdMode::kString || !AllDigits(text);
  if (hashed && options_.keep_id_names) {
    auto [it, inserted] = names->try_emplace(*id, text);
    if (!inserted && it->second != text) {
      return RowError(column, absl::StrCat("ids '", Shown(it->second), "' and '", Shown(text),
                                           "' have the same 64-bit hash; use integer ids"));
    }
  }
  return absl::OkStatus();
}

ABSL_ATTRIBUTE_NOINLINE absl::Status FieldParser::ParseNumberSlow(std::string_view text,
                                                                  const std::string& column,
                                                                  double* value) const {
  if (text.empty()) return RowError(column, "is empty, expected a number");
  const char* begin = text.data();
  if (*begin == '+') ++begin;  // from_chars rejects a leading '+'
  const auto [end, ec] = std::from_chars(begin, text.data() + text.size(), *value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return RowError(column, absl::StrCat("'", Shown(text), "' is not a number"));
  }
  if (!std::isfinite(*value))
    return RowError(column, absl::StrCat("'", Shown(text), "' is not finite"));
  return absl::OkStatus();
}

}  // namespace graphsieve::io_internal
