// LabelRule parsing, LogReaderOptions validation and the dataset presets.
#include <charconv>
#include <cmath>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "core/io/log_reader.h"

namespace graphsieve {
namespace {

// absl 20220623 (Debian 12) has its own absl::string_view; StrCat needs it.
inline absl::string_view Av(std::string_view s) { return absl::string_view(s.data(), s.size()); }

std::string_view Strip(std::string_view s) {
  const absl::string_view r = absl::StripAsciiWhitespace(Av(s));
  return std::string_view(r.data(), r.size());
}

bool ValidColumnName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (c == ' ' || c == '\t' || c == '<' || c == '>' || c == '=' || c == '!') return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<LabelRule> LabelRule::Parse(std::string_view text) {
  const std::string_view rule = Strip(text);
  if (rule.empty()) return absl::InvalidArgumentError("label rule is empty");
  // Two-character operators first so ">=" is not read as ">".
  static constexpr struct {
    const char* token;
    Op op;
  } kOps[] = {{">=", Op::kGe}, {"<=", Op::kLe}, {"==", Op::kEq},
              {"!=", Op::kNe}, {">", Op::kGt},  {"<", Op::kLt}};
  LabelRule out;
  size_t pos = std::string_view::npos;
  size_t len = 0;
  for (const auto& op : kOps) {
    const size_t p = rule.find(op.token);
    if (p != std::string_view::npos && (pos == std::string_view::npos || p < pos)) {
      pos = p;
      len = std::char_traits<char>::length(op.token);
      out.op = op.op;
    }
  }
  if (pos == std::string_view::npos) {
    if (!ValidColumnName(rule)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "label rule '", Av(text),
          "': expected a column name or '<column> <op> <number>' with op one of > >= < <= == !="));
    }
    out.column = std::string(rule);
    out.op = Op::kBinary;
    return out;
  }
  const std::string_view column = Strip(rule.substr(0, pos));
  const std::string_view number = Strip(rule.substr(pos + len));
  if (!ValidColumnName(column)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "label rule '", Av(text), "': missing or invalid column name before the operator"));
  }
  double threshold = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), threshold);
  if (number.empty() || ec != std::errc() || end != number.data() + number.size() ||
      !std::isfinite(threshold)) {
    return absl::InvalidArgumentError(absl::StrCat("label rule '", Av(text), "': threshold '",
                                                   Av(number), "' is not a finite number"));
  }
  out.column = std::string(column);
  out.threshold = threshold;
  return out;
}

std::string LabelRule::ToString() const {
  const char* op = "";
  switch (this->op) {
    case Op::kBinary:
      return column;
    case Op::kGt:
      op = ">";
      break;
    case Op::kGe:
      op = ">=";
      break;
    case Op::kLt:
      op = "<";
      break;
    case Op::kLe:
      op = "<=";
      break;
    case Op::kEq:
      op = "==";
      break;
    case Op::kNe:
      op = "!=";
      break;
  }
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof(buf), threshold);  // shortest round-trip form
  return absl::StrCat(column, " ", op, " ", absl::string_view(buf, res.ptr - buf));
}

absl::StatusOr<LogFormat> ParseLogFormat(std::string_view name) {
  if (name == "csv" || name == "tsv" || name == "delimited") return LogFormat::kDelimited;
  if (name == "mind") return LogFormat::kMind;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown log format '", Av(name), "', expected csv, tsv or mind"));
}

absl::Status LogReaderOptions::Validate() const {
  if (user_column.empty()) return absl::InvalidArgumentError("user column name is empty");
  if (item_column.empty()) return absl::InvalidArgumentError("item column name is empty");
  if (user_column == item_column) {
    return absl::InvalidArgumentError(
        absl::StrCat("user and item column are both '", user_column, "'"));
  }
  if (format == LogFormat::kDelimited && label.column.empty()) {
    return absl::InvalidArgumentError("label column name is empty");
  }
  if (format == LogFormat::kMind && mind_impressions_column.empty()) {
    return absl::InvalidArgumentError("MIND impressions column name is empty");
  }
  if (delimiter == '"' || delimiter == '\n' || delimiter == '\r' || delimiter == ' ') {
    return absl::InvalidArgumentError("delimiter may not be a quote, space or line break");
  }
  if (max_bad_rows < 0) return absl::InvalidArgumentError("max_bad_rows must be >= 0");
  if (read_buffer_bytes < 4096)
    return absl::InvalidArgumentError("read_buffer_bytes must be >= 4096");
  if (max_line_bytes < read_buffer_bytes) {
    return absl::InvalidArgumentError("max_line_bytes must be >= read_buffer_bytes");
  }
  absl::flat_hash_set<std::string_view> seen;
  for (const std::string& name : column_names) {
    if (name.empty()) return absl::InvalidArgumentError("column_names contains an empty name");
    if (!seen.insert(name).second) {
      return absl::InvalidArgumentError(absl::StrCat("column_names lists '", name, "' twice"));
    }
  }
  return absl::OkStatus();
}

absl::Status ApplyDatasetPreset(std::string_view dataset, LogReaderOptions* options) {
  if (dataset == "graphsieve") {
    options->format = LogFormat::kDelimited;
    options->column_names.clear();
    options->user_column = "user_id";
    options->item_column = "item_id";
    options->label = LabelRule{};
    return absl::OkStatus();
  }
  if (dataset == "movielens") {
    options->format = LogFormat::kDelimited;
    options->delimiter = '\t';
    options->column_names = {"user_id", "item_id", "rating", "timestamp"};
    options->user_column = "user_id";
    options->item_column = "item_id";
    options->label = LabelRule{"rating", LabelRule::Op::kGe, 4.0};
    return absl::OkStatus();
  }
  if (dataset == "kuairec") {
    options->format = LogFormat::kDelimited;
    options->column_names.clear();
    options->user_column = "user_id";
    options->item_column = "video_id";
    options->label = LabelRule{"watch_ratio", LabelRule::Op::kGt, 3.0};
    return absl::OkStatus();
  }
  if (dataset == "mind") {
    options->format = LogFormat::kMind;
    options->delimiter = '\t';
    options->column_names = {"impression_id", "user_id", "time", "history", "impressions"};
    options->user_column = "user_id";
    options->item_column = "item_id";  // the items come from the impressions column
    options->mind_impressions_column = "impressions";
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown dataset '", Av(dataset), "', expected graphsieve, movielens, kuairec or mind"));
}

}  // namespace graphsieve
