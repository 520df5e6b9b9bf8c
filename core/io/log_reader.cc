#include "core/io/log_reader.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/io/byte_source.h"
#include "core/io/field_parser.h"
#include "core/io/line_splitter.h"
#include "core/io/mind_parser.h"
#include "core/io/prefetch_source.h"

namespace graphsieve {
namespace {

using io_internal::Av;
using io_internal::DetectDelimiter;
using io_internal::FieldParser;
using io_internal::MindRowParser;
using io_internal::Shown;
using io_internal::ShownColumns;
using io_internal::TrimField;

constexpr uint64_t kProgressEveryBytes = uint64_t{16} << 20;
constexpr size_t kMaxBadRowMessages = 10;

// Parses one log file into an ImpressionLog: finds the columns, runs the
// row loop, skips (and counts) bad rows within the budget, reserves and
// reports progress. Delimited rows are parsed here, MIND rows by
// MindRowParser (mind_parser.h); fields by FieldParser (field_parser.h).
// One instance per call of Run().
class LogParser {
 public:
  LogParser(std::string path, const LogReaderOptions& options, ByteSource* source,
            ImpressionLog* log)
      : path_(std::move(path)),
        options_(options),
        source_(source),
        lines_(source, options),
        log_(log),
        fields_(path_, options_, lines_) {}

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

  // The delimiter, the column names and the indexes of the columns read.
  absl::Status SetUpColumns(std::string_view first_line) {
    if (first_line.size() >= 3 && std::memcmp(first_line.data(), "\xEF\xBB\xBF", 3) == 0) {
      first_line.remove_prefix(3);  // UTF-8 byte order mark
    }
    if (absl::Status s = ChooseDelimiter(first_line); !s.ok()) return s;
    if (absl::Status s = ReadColumnNames(first_line); !s.ok()) return s;
    if (absl::Status s = FindColumns(); !s.ok()) return s;
    fields_of_row_.resize(names_.size());
    return absl::OkStatus();
  }

  absl::Status ChooseDelimiter(std::string_view first_line) {
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
    return absl::OkStatus();
  }

  absl::Status ReadColumnNames(std::string_view first_line) {
    if (!options_.column_names.empty()) {
      names_ = options_.column_names;
      return absl::OkStatus();
    }
    const size_t n = splitter_.Split(first_line, &fields_of_row_);
    if (splitter_.error() != nullptr) return fields_.RowError("", splitter_.error());
    for (size_t i = 0; i < n; ++i) names_.emplace_back(TrimField(fields_of_row_[i]));
    return absl::OkStatus();
  }

  absl::Status FindColumns() {
    absl::flat_hash_map<std::string_view, int> index;
    for (size_t i = 0; i < names_.size(); ++i) index.try_emplace(names_[i], static_cast<int>(i));
    auto find = [&](const std::string& name, const char* role, int* out) -> absl::Status {
      auto it = index.find(name);
      if (it == index.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat(path_, ":1: no ", role, " column '", name, "' in the ",
                         options_.column_names.empty() ? "header" : "given column names",
                         "; columns are: ", ShownColumns(names_)));
      }
      *out = it->second;
      return absl::OkStatus();
    };
    if (absl::Status s = find(options_.user_column, "user", &user_col_); !s.ok()) return s;
    int impressions_col = -1;
    if (options_.format == LogFormat::kMind) {
      if (absl::Status s = find(options_.mind_impressions_column, "impressions", &impressions_col);
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
    if (options_.format == LogFormat::kMind) {
      mind_.emplace(fields_, options_,
                    MindRowParser::Columns{user_col_, impressions_col, pilot_col_});
    }
    return absl::OkStatus();
  }

  // Parses one data row and appends its instance(s); a bad row is skipped
  // (and counted) while the max_bad_rows budget lasts.
  absl::Status HandleRow(std::string_view line) {
    ++rows_;
    absl::Status s = ParseRow(line);
    if (!s.ok()) {
      if (absl::Status fatal = SkipBadRow(line, s); !fatal.ok()) return fatal;
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

  absl::Status ParseRow(std::string_view line) {
    size_t n = 0;
    if (absl::Status s = SplitChecked(line, &n); !s.ok()) return s;
    if (mind_.has_value()) return mind_->ParseRow(fields_of_row_, log_);
    return ParseDelimitedRow();
  }

  // OK when the row `line` that failed with `error` may be skipped (counted);
  // otherwise the error that stops the read.
  absl::Status SkipBadRow(std::string_view line, const absl::Status& error) {
    // A header read as data (column names given for a file that has one) is
    // a whole-file mistake: say so instead of blaming the row.
    if (rows_ == 1 && !options_.column_names.empty() &&
        absl::StrContains(Av(line), options_.user_column)) {
      return absl::Status(error.code(),
                          absl::StrCat(error.message(), " (is line ", lines_.line_number(),
                                       " a header? column_names is for files without one)"));
    }
    if (static_cast<int64_t>(bad_rows_) >= options_.max_bad_rows) {
      if (options_.max_bad_rows == 0) return error;
      return absl::Status(error.code(),
                          absl::StrCat(error.message(), " (after skipping ", bad_rows_,
                                       " bad rows, the limit set by max_bad_rows)"));
    }
    ++bad_rows_;
    if (log_->bad_row_messages.size() < kMaxBadRowMessages)
      log_->bad_row_messages.emplace_back(error.message());
    return absl::OkStatus();
  }

  absl::Status SplitChecked(std::string_view line, size_t* n) {
    *n = splitter_.Split(line, &fields_of_row_);
    if (splitter_.error() != nullptr) return fields_.RowError("", splitter_.error());
    if (*n != names_.size()) {
      return fields_.RowError(
          "", absl::StrCat(
                  "expected ", names_.size(), " fields (",
                  options_.column_names.empty() ? "as in the header" : "as in the column names",
                  "), found ", *n));
    }
    return absl::OkStatus();
  }

  // One instance from the split row: user, item, label[, pilot score].
  absl::Status ParseDelimitedRow() {
    uint64_t user = 0, item = 0;
    uint8_t label = 0;
    float pilot = 0;
    if (absl::Status s = fields_.ParseIdField(fields_of_row_[user_col_], options_.user_column,
                                              &log_->user_names, &user);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = fields_.ParseIdField(fields_of_row_[item_col_], options_.item_column,
                                              &log_->item_names, &item);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = fields_.ParseLabel(fields_of_row_[label_col_], &label); !s.ok()) return s;
    if (pilot_col_ >= 0) {
      if (absl::Status s = fields_.ParsePilot(fields_of_row_[pilot_col_], &pilot); !s.ok())
        return s;
      log_->pilot_scores.push_back(pilot);
    }
    log_->user_ids.push_back(user);
    log_->item_ids.push_back(item);
    log_->labels.push_back(label);
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
  const FieldParser fields_;

  char delimiter_ = '\0';
  LineSplitter splitter_{','};
  std::vector<std::string> names_;
  std::vector<std::string_view> fields_of_row_;
  int user_col_ = -1, item_col_ = -1, label_col_ = -1, pilot_col_ = -1;
  std::optional<MindRowParser> mind_;  // set for LogFormat::kMind
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
