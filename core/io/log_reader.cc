#include "core/io/log_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/io/byte_source.h"
#include "core/io/fast_parse.h"
#include "core/io/line_splitter.h"
#include "core/io/prefetch_source.h"

namespace graphsieve {
namespace {

using io_internal::AllDigits;
using io_internal::FastParseDouble;
using io_internal::FastParseUint;

// absl 20220623 (Debian 12) has its own absl::string_view; StrCat needs it.
inline absl::string_view Av(std::string_view s) { return absl::string_view(s.data(), s.size()); }

constexpr uint64_t kProgressEveryBytes = uint64_t{16} << 20;
constexpr size_t kMaxBadRowMessages = 10;

// Text from the file as shown in an error: at most 40 bytes, non-printable
// bytes C-escaped (a binary file must not garble the message).
std::string Shown(std::string_view text) {
  if (text.size() <= 40) return absl::CHexEscape(Av(text));
  return absl::StrCat(absl::CHexEscape(Av(text.substr(0, 37))), "...");
}

// The header's names for an error message: at most 30, each Shown().
std::string ShownColumns(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < 30; ++i) {
    absl::StrAppend(&out, i > 0 ? ", " : "", Shown(names[i]));
  }
  if (names.size() > 30) absl::StrAppend(&out, ", ... (", names.size(), " columns)");
  return out;
}

// Parses one log file into an ImpressionLog. One instance per call of Run().
class LogParser {
 public:
  LogParser(std::string path, const LogReaderOptions& options, ByteSource* source,
            ImpressionLog* log)
      : path_(std::move(path)),
        options_(options),
        source_(source),
        lines_(source, options),
        log_(log) {}

  absl::Status Run() {
    std::string_view first;
    absl::StatusOr<bool> got = lines_.Next(&first);
    if (!got.ok()) return Annotate(got.status());
    while (*got && first.empty()) {  // leading blank lines
      got = lines_.Next(&first);
      if (!got.ok()) return Annotate(got.status());
    }
    if (!*got)
      return absl::InvalidArgumentError(
          absl::StrCat(path_, ": empty file (no header and no rows)"));
    if (absl::Status s = SetUpColumns(first); !s.ok()) return s;
    if (!options_.column_names.empty()) {  // headerless: the first line is data
      if (absl::Status s = HandleRow(first); !s.ok()) return s;
    }
    std::string_view line;
    while (true) {
      got = lines_.Next(&line);
      if (!got.ok()) return Annotate(got.status());
      if (!*got) break;
      if (line.empty()) continue;
      if (absl::Status s = HandleRow(line); !s.ok()) return s;
    }
    ReportProgress(/*force=*/true);
    return absl::OkStatus();
  }

  uint64_t rows() const { return rows_; }
  uint64_t bad_rows() const { return bad_rows_; }
  uint64_t bytes() const { return lines_.bytes(); }

 private:
  // Source errors (DATA_LOSS etc.) already name the file; a long line gets file:line.
  absl::Status Annotate(const absl::Status& s) const {
    if (s.code() != absl::StatusCode::kInvalidArgument) return s;
    return absl::Status(s.code(),
                        absl::StrCat(path_, ":", lines_.line_number(), ": ", s.message()));
  }

  absl::Status RowError(absl::string_view column, absl::string_view problem) const {
    if (column.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path_, ":", lines_.line_number(), ": ", problem));
    }
    return absl::InvalidArgumentError(
        absl::StrCat(path_, ":", lines_.line_number(), ": column '", column, "': ", problem));
  }

  absl::Status SetUpColumns(std::string_view first_line) {
    if (first_line.size() >= 3 && std::memcmp(first_line.data(), "\xEF\xBB\xBF", 3) == 0) {
      first_line.remove_prefix(3);  // UTF-8 byte order mark
    }
    const bool headerless = !options_.column_names.empty();
    delimiter_ = options_.delimiter;
    if (delimiter_ == '\0') {
      delimiter_ = DetectDelimiter(first_line, headerless ? options_.column_names.size() : 0);
      if (delimiter_ == '\0') {
        return absl::InvalidArgumentError(
            absl::StrCat(path_, ":1: cannot detect the delimiter from the ",
                         headerless ? "first row" : "header", " '", Shown(first_line),
                         "' (no tab, comma, '|' or ';'); set the delimiter explicitly"));
      }
    }
    splitter_ = LineSplitter(delimiter_);
    if (headerless) {
      names_ = options_.column_names;
    } else {
      const size_t n = splitter_.Split(first_line, &fields_);
      if (splitter_.error() != nullptr) return RowError("", splitter_.error());
      for (size_t i = 0; i < n; ++i) names_.emplace_back(TrimField(fields_[i]));
    }
    absl::flat_hash_map<std::string_view, int> index;
    for (size_t i = 0; i < names_.size(); ++i) index.try_emplace(names_[i], static_cast<int>(i));
    auto find = [&](const std::string& name, const char* role, int* out) -> absl::Status {
      auto it = index.find(name);
      if (it == index.end()) {
        return absl::InvalidArgumentError(absl::StrCat(
            path_, ":1: no ", role, " column '", name, "' in the ",
            headerless ? "given column names" : "header", "; columns are: ", ShownColumns(names_)));
      }
      *out = it->second;
      return absl::OkStatus();
    };
    if (absl::Status s = find(options_.user_column, "user", &user_col_); !s.ok()) return s;
    if (options_.format == LogFormat::kMind) {
      if (absl::Status s = find(options_.mind_impressions_column, "impressions", &impressions_col_);
          !s.ok()) {
        return s;
      }
    } else {
      if (absl::Status s = find(options_.item_column, "item", &item_col_); !s.ok()) return s;
      if (absl::Status s = find(options_.label.column, "label", &label_col_); !s.ok()) return s;
    }
    if (!options_.pilot_column.empty()) {
      if (absl::Status s = find(options_.pilot_column, "pilot score", &pilot_col_); !s.ok())
        return s;
    }
    fields_.resize(names_.size());
    return absl::OkStatus();
  }

  static char DetectDelimiter(std::string_view line, size_t expected_columns) {
    static constexpr char kCandidates[] = {'\t', ',', '|', ';'};
    char best = '\0';
    size_t best_count = 0;
    for (char c : kCandidates) {
      const size_t count = static_cast<size_t>(std::count(line.begin(), line.end(), c));
      if (expected_columns > 0 && count + 1 == expected_columns) return c;
      if (count > best_count) {
        best = c;
        best_count = count;
      }
    }
    return best;
  }

  static std::string_view TrimField(std::string_view s) {
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
    return s;
  }

  // Parses an id field. Plain integers take the inline fast path; text goes
  // through ParseId (hash) and, when kept, into the names map.
  absl::Status ParseIdField(std::string_view text, const std::string& column,
                            absl::flat_hash_map<uint64_t, std::string>* names, uint64_t* id) {
    text = TrimField(text);
    if (options_.id_mode != IdMode::kString && FastParseUint(text, id)) return absl::OkStatus();
    return ParseIdFieldSlow(text, column, names, id);
  }

  ABSL_ATTRIBUTE_NOINLINE absl::Status ParseIdFieldSlow(
      std::string_view text, const std::string& column,
      absl::flat_hash_map<uint64_t, std::string>* names, uint64_t* id) {
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

  absl::Status ParseNumber(std::string_view text, const std::string& column, double* value) const {
    text = TrimField(text);
    if (FastParseDouble(text, value)) return absl::OkStatus();
    return ParseNumberSlow(text, column, value);
  }

  ABSL_ATTRIBUTE_NOINLINE absl::Status ParseNumberSlow(std::string_view text,
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

  absl::Status ParseLabel(std::string_view text, uint8_t* label) const {
    const LabelRule& rule = options_.label;
    if (rule.op == LabelRule::Op::kBinary) {
      text = TrimField(text);
      if (text.size() == 1 && (text[0] == '0' || text[0] == '1')) {
        *label = static_cast<uint8_t>(text[0] - '0');
        return absl::OkStatus();
      }
      return RowError(rule.column, absl::StrCat("label is '", Shown(text), "', expected 0 or 1"));
    }
    double v = 0;
    if (absl::Status s = ParseNumber(text, rule.column, &v); !s.ok()) return s;
    bool positive = false;
    switch (rule.op) {
      case LabelRule::Op::kGt:
        positive = v > rule.threshold;
        break;
      case LabelRule::Op::kGe:
        positive = v >= rule.threshold;
        break;
      case LabelRule::Op::kLt:
        positive = v < rule.threshold;
        break;
      case LabelRule::Op::kLe:
        positive = v <= rule.threshold;
        break;
      case LabelRule::Op::kEq:
        positive = v == rule.threshold;
        break;
      case LabelRule::Op::kNe:
        positive = v != rule.threshold;
        break;
      case LabelRule::Op::kBinary:
        break;
    }
    *label = positive ? 1 : 0;
    return absl::OkStatus();
  }

  absl::Status ParsePilot(std::string_view text, float* score) const {
    double v = 0;
    if (absl::Status s = ParseNumber(text, options_.pilot_column, &v); !s.ok()) return s;
    if (v < 0.0 || v > 1.0) {
      return RowError(options_.pilot_column, absl::StrCat("pilot score ", v, " is outside [0, 1]"));
    }
    *score = static_cast<float>(v);
    return absl::OkStatus();
  }

  // Parses one data row and appends its instance(s); a bad row is skipped
  // (and counted) while the max_bad_rows budget lasts.
  absl::Status HandleRow(std::string_view line) {
    ++rows_;
    absl::Status s =
        options_.format == LogFormat::kMind ? ParseMindRow(line) : ParseDelimitedRow(line);
    if (!s.ok()) {
      // A header read as data (column names given for a file that has one) is
      // a whole-file mistake: say so instead of blaming the row.
      if (rows_ == 1 && !options_.column_names.empty() &&
          absl::StrContains(Av(line), options_.user_column)) {
        return absl::Status(s.code(),
                            absl::StrCat(s.message(), " (is line ", lines_.line_number(),
                                         " a header? column_names is for files without one)"));
      }
      if (static_cast<int64_t>(bad_rows_) >= options_.max_bad_rows) {
        if (options_.max_bad_rows == 0) return s;
        return absl::Status(s.code(), absl::StrCat(s.message(), " (after skipping ", bad_rows_,
                                                   " bad rows, the limit set by max_bad_rows)"));
      }
      ++bad_rows_;
      if (log_->bad_row_messages.size() < kMaxBadRowMessages)
        log_->bad_row_messages.emplace_back(s.message());
    }
    if ((rows_ & 0xFFFF) == 0) {
      ReportProgress(/*force=*/false);
      // Plain files: the size is exact, estimate early. Gzip: wait until the
      // compressed bytes read so far are many read chunks, for a stable ratio.
      if (rows_ == (source_->compressed() ? (uint64_t{1} << 20) : uint64_t{65536}))
        ReserveFromEstimate();
    }
    return absl::OkStatus();
  }

  absl::Status SplitChecked(std::string_view line, size_t* n) {
    *n = splitter_.Split(line, &fields_);
    if (splitter_.error() != nullptr) return RowError("", splitter_.error());
    if (*n != names_.size()) {
      return RowError("", absl::StrCat("expected ", names_.size(), " fields (",
                                       options_.column_names.empty() ? "as in the header"
                                                                     : "as in the column names",
                                       "), found ", *n));
    }
    return absl::OkStatus();
  }

  absl::Status ParseDelimitedRow(std::string_view line) {
    size_t n = 0;
    if (absl::Status s = SplitChecked(line, &n); !s.ok()) return s;
    uint64_t user = 0, item = 0;
    uint8_t label = 0;
    float pilot = 0;
    if (absl::Status s =
            ParseIdField(fields_[user_col_], options_.user_column, &log_->user_names, &user);
        !s.ok()) {
      return s;
    }
    if (absl::Status s =
            ParseIdField(fields_[item_col_], options_.item_column, &log_->item_names, &item);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = ParseLabel(fields_[label_col_], &label); !s.ok()) return s;
    if (pilot_col_ >= 0) {
      if (absl::Status s = ParsePilot(fields_[pilot_col_], &pilot); !s.ok()) return s;
      log_->pilot_scores.push_back(pilot);
    }
    log_->user_ids.push_back(user);
    log_->item_ids.push_back(item);
    log_->labels.push_back(label);
    return absl::OkStatus();
  }

  // MIND: "<impression_id>\t<user>\t<time>\t<history>\t<N1-0 N2-1 ...>".
  absl::Status ParseMindRow(std::string_view line) {
    size_t n = 0;
    if (absl::Status s = SplitChecked(line, &n); !s.ok()) return s;
    uint64_t user = 0;
    if (absl::Status s =
            ParseIdField(fields_[user_col_], options_.user_column, &log_->user_names, &user);
        !s.ok()) {
      return s;
    }
    float pilot = 0;
    if (pilot_col_ >= 0) {
      if (absl::Status s = ParsePilot(fields_[pilot_col_], &pilot); !s.ok()) return s;
    }
    mind_items_.clear();
    mind_labels_.clear();
    std::string_view rest = fields_[impressions_col_];
    const std::string& column = options_.mind_impressions_column;
    while (!rest.empty()) {
      const size_t space = rest.find(' ');
      const std::string_view token = rest.substr(0, space);
      rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
      if (token.empty()) continue;
      const size_t dash = token.rfind('-');
      if (dash == std::string_view::npos || dash + 2 != token.size() ||
          (token[dash + 1] != '0' && token[dash + 1] != '1')) {
        return RowError(
            column,
            absl::StrCat("impression '", Shown(token),
                         "' is not '<item>-0' or '<item>-1' (the MIND test split has no labels)"));
      }
      uint64_t item = 0;
      if (absl::Status s = ParseIdField(token.substr(0, dash), column, &log_->item_names, &item);
          !s.ok())
        return s;
      mind_items_.push_back(item);
      mind_labels_.push_back(static_cast<uint8_t>(token[dash + 1] - '0'));
    }
    if (mind_items_.empty()) return RowError(column, "no impressions in the row");
    log_->user_ids.insert(log_->user_ids.end(), mind_items_.size(), user);
    log_->item_ids.insert(log_->item_ids.end(), mind_items_.begin(), mind_items_.end());
    log_->labels.insert(log_->labels.end(), mind_labels_.begin(), mind_labels_.end());
    if (pilot_col_ >= 0)
      log_->pilot_scores.insert(log_->pilot_scores.end(), mind_items_.size(), pilot);
    return absl::OkStatus();
  }

  // After the first rows, reserves for the rest of the file from the mean row
  // length (plain: file size; gzip: compressed size times the ratio so far),
  // so the columns are not copied while they grow.
  void ReserveFromEstimate() {
    if (source_->file_size() == 0 || lines_.bytes() == 0 || source_->file_bytes_read() == 0) return;
    double total_bytes = static_cast<double>(source_->file_size());
    if (source_->compressed()) {
      total_bytes *=
          static_cast<double>(lines_.bytes()) / static_cast<double>(source_->file_bytes_read());
    }
    const double bytes_per_instance =
        static_cast<double>(lines_.consumed_bytes()) /
        static_cast<double>(std::max<size_t>(1, log_->size() - start_size_));
    const size_t expect =
        start_size_ + static_cast<size_t>(total_bytes / bytes_per_instance * 1.03) + 1024;
    if (expect <= log_->user_ids.capacity()) return;
    log_->user_ids.reserve(expect);
    log_->item_ids.reserve(expect);
    log_->labels.reserve(expect);
    if (pilot_col_ >= 0) log_->pilot_scores.reserve(expect);
  }

  void ReportProgress(bool force) {
    if (!options_.progress) return;
    const uint64_t bytes = lines_.bytes();
    if (!force && bytes < last_progress_bytes_ + kProgressEveryBytes) return;
    last_progress_bytes_ = bytes;
    options_.progress(bytes, rows_);
  }

  const std::string path_;
  const LogReaderOptions& options_;
  ByteSource* const source_;
  LineReader lines_;
  ImpressionLog* const log_;
  const size_t start_size_ = log_->size();

  char delimiter_ = '\0';
  LineSplitter splitter_{','};
  std::vector<std::string> names_;
  std::vector<std::string_view> fields_;
  int user_col_ = -1, item_col_ = -1, label_col_ = -1, pilot_col_ = -1, impressions_col_ = -1;
  std::vector<uint64_t> mind_items_;
  std::vector<uint8_t> mind_labels_;
  uint64_t rows_ = 0;
  uint64_t bad_rows_ = 0;
  uint64_t last_progress_bytes_ = 0;
};

// Restores `log` to its first `n` instances (and the counters) after an error.
void Truncate(ImpressionLog* log, size_t n, bool had_pilot, const ImpressionLog& counters) {
  log->user_ids.resize(n);
  log->item_ids.resize(n);
  log->labels.resize(n);
  if (had_pilot) log->pilot_scores.resize(n);
  log->bytes_read = counters.bytes_read;
  log->rows_read = counters.rows_read;
  log->bad_rows_skipped = counters.bad_rows_skipped;
  log->bad_row_messages = counters.bad_row_messages;
}

}  // namespace

absl::Status ReadImpressionLog(const std::string& path, const LogReaderOptions& options,
                               ImpressionLog* log) {
  if (absl::Status s = options.Validate(); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("log reader options: ", s.message()));
  }
  if (!log->user_ids.empty() &&
      (log->pilot_scores.size() == log->size()) != !options.pilot_column.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": cannot append: the log read so far ",
        options.pilot_column.empty() ? "has" : "has no", " pilot scores but this file is read ",
        options.pilot_column.empty() ? "without" : "with", " a pilot column"));
  }
  absl::StatusOr<std::unique_ptr<ByteSource>> source = ByteSource::Open(path);
  if (!source.ok()) return source.status();
  // Pipes are not prefetched: a writer that never closes must not block the
  // prefetch thread's join when the parse stops early.
  if ((*source)->compressed() && options.decompress_in_background && (*source)->file_size() > 0) {
    *source = std::make_unique<PrefetchSource>(std::move(*source), size_t{1} << 20, 4);
  }
  const size_t before = log->size();
  ImpressionLog counters;
  counters.bytes_read = log->bytes_read;
  counters.rows_read = log->rows_read;
  counters.bad_rows_skipped = log->bad_rows_skipped;
  counters.bad_row_messages = log->bad_row_messages;
  const bool had_pilot = !options.pilot_column.empty();
  LogParser parser(path, options, source->get(), log);
  absl::Status status = parser.Run();
  if (!status.ok()) {
    Truncate(log, before, had_pilot, counters);
    return status;
  }
  log->bytes_read += parser.bytes();
  log->rows_read += parser.rows();
  log->bad_rows_skipped += parser.bad_rows();
  return absl::OkStatus();
}

}  // namespace graphsieve
