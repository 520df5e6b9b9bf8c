// Streaming reader of impression logs (CSV/TSV with a header, optionally gzip).
//
// Formats (docs/DATA.md has the details and the dataset mappings):
//   kDelimited  one instance per row; a header row, or positional names from
//               Options::column_names for headerless files (MovieLens u.data).
//               CSV quoting ("a,b", "say ""hi""") inside one line is understood;
//               a quoted field spanning lines is an error. CRLF is tolerated,
//               blank lines are skipped, a UTF-8 BOM is ignored.
//   kMind       MIND behaviors.tsv: no header, the `impressions` column holds
//               space-separated "<item>-<0|1>" tokens; one row -> many instances.
//
// Columns are chosen by name; the label is a 0/1 column or a threshold rule on
// a numeric column (KuaiRec: "watch_ratio > 3"). Rows are parsed straight out
// of a fixed-size read buffer (no second copy of the text in memory).
// A bad row stops the read with an error naming file, line and column unless
// Options::max_bad_rows allows skipping it (skipped rows are counted).
//
// Thread-compatible: ReadImpressionLog may run concurrently on different
// ImpressionLogs (one call uses at most one helper thread, for gzip). The
// caller owns the ImpressionLog it fills.
#ifndef GRAPHSIEVE_CORE_IO_LOG_READER_H_
#define GRAPHSIEVE_CORE_IO_LOG_READER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/io/ids.h"

namespace graphsieve {

// "label" (a 0/1 column) or "<column> <op> <threshold>", op in > >= < <= == !=.
struct LabelRule {
  std::string column = "label";
  enum class Op { kBinary, kGt, kGe, kLt, kLe, kEq, kNe } op = Op::kBinary;
  double threshold = 0.0;
  // Parses "label", "watch_ratio > 3", "rating>=4". Error names the rule text.
  static absl::StatusOr<LabelRule> Parse(std::string_view text);
  // "label" or "watch_ratio > 3" (parses back to the same rule).
  std::string ToString() const;
};

enum class LogFormat { kDelimited, kMind };

// Parses "csv" | "tsv" | "delimited" (all kDelimited) or "mind".
absl::StatusOr<LogFormat> ParseLogFormat(std::string_view name);

struct LogReaderOptions {
  LogFormat format = LogFormat::kDelimited;
  char delimiter = '\0';  // '\0' = detect from the header (tab, comma, '|', ';')
  // Empty: the first line is a header. Otherwise the file has no header and
  // these are its columns' names, in order (e.g. {"user_id","item_id","rating","ts"}).
  std::vector<std::string> column_names;
  std::string mind_impressions_column = "impressions";  // kMind only
  std::string user_column = "user_id";
  std::string item_column = "item_id";
  LabelRule label;           // default: 0/1 column "label"
  std::string pilot_column;  // empty = no pilot score
  IdMode id_mode = IdMode::kAuto;
  int64_t max_bad_rows = 0;   // rows that may be skipped (and counted) before failing
  bool keep_id_names = true;  // remember the text of hashed ids (for --export)
  std::function<void(uint64_t bytes_read, uint64_t rows)>
      progress;  // called every few MB; may be empty
  // Inflate gzip input on a background thread, a few MiB ahead of the parser
  // (regular files only; the reader stays single-consumer).
  bool decompress_in_background = true;
  size_t read_buffer_bytes = size_t{1} << 20;  // fixed read buffer (grows only for longer lines)
  size_t max_line_bytes = size_t{64} << 20;    // a longer line is an error (likely not a text log)
  absl::Status Validate() const;
};

// Sets the column names, delimiter, format and label rule of a known dataset:
//   "graphsieve" (graphsieve-gen output: user_id,item_id,label[,pilot_score]),
//   "movielens"  (u.data: tab, no header, user_id item_id rating timestamp; rating >= 4),
//   "kuairec"    (big_matrix.csv: user_id, item column video_id, watch_ratio > 3),
//   "mind"       (behaviors.tsv: kMind). Other fields of `options` are untouched.
absl::Status ApplyDatasetPreset(std::string_view dataset, LogReaderOptions* options);

// Column-oriented, one entry per instance, in file order.
struct ImpressionLog {
  std::vector<uint64_t> user_ids;
  std::vector<uint64_t> item_ids;
  std::vector<uint8_t> labels;      // 0/1
  std::vector<float> pilot_scores;  // empty when no pilot column was read
  // Text of ids that were hashed (IdMode kAuto/kString), for exports.
  absl::flat_hash_map<uint64_t, std::string> user_names;
  absl::flat_hash_map<uint64_t, std::string> item_names;
  uint64_t bytes_read = 0;  // uncompressed bytes parsed
  uint64_t rows_read = 0;   // data rows seen (good + skipped)
  uint64_t bad_rows_skipped = 0;
  std::vector<std::string> bad_row_messages;  // the first few skipped rows' errors
  size_t size() const { return user_ids.size(); }
};

// Reads one file and appends its rows to `log` (so several files can be
// concatenated). Gzip is detected from the magic bytes, not the name.
// Errors: NOT_FOUND (file), INVALID_ARGUMENT with "<file>:<line>: column
// '<name>': <problem>", DATA_LOSS for a truncated/corrupt gzip stream.
// On error the columns and counters of `log` are left as they were before
// the call (no partial rows); user_names/item_names may keep names seen
// before the error. REQUIRES: log != nullptr.
absl::Status ReadImpressionLog(const std::string& path, const LogReaderOptions& options,
                               ImpressionLog* log);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_IO_LOG_READER_H_
