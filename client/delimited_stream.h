// A streaming reader of delimited text with a header (CSV/TSV, optionally
// gzip, "-" = stdin) that keeps each raw line, for the CLI's `rates` (pairs
// files), `filter` (impression logs whose kept rows are written back out) and
// `canary --pairs`. Built on graphsieve_io's ByteSource/LineReader/LineSplitter,
// so quoting, CRLF and gzip behave as in graphsieve-build's reader.
//
// Not thread-safe: one stream per thread.
#ifndef GRAPHSIEVE_CLIENT_DELIMITED_STREAM_H_
#define GRAPHSIEVE_CLIENT_DELIMITED_STREAM_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/io/byte_source.h"
#include "core/io/line_splitter.h"
#include "core/io/log_reader.h"

namespace graphsieve {

class DelimitedStream {
 public:
  // Opens `path`. Reads the header (or takes options.column_names for
  // headerless files) and detects the delimiter unless options.delimiter is
  // set. Errors name the path: NOT_FOUND, an empty file, an undetectable delimiter.
  static absl::StatusOr<std::unique_ptr<DelimitedStream>> Open(const std::string& path,
                                                               const LogReaderOptions& options);

  // Index of the column called `name`, or INVALID_ARGUMENT naming `flag`, the
  // file and the columns it has (each quoted, as the delimiter split them),
  // suggesting --delimiter when another delimiter would find `name`.
  absl::StatusOr<size_t> Column(std::string_view name, std::string_view flag) const;
  // Index of `name`, or -1 when absent.
  int FindColumn(std::string_view name) const;

  // Next data row: true with fields()/line() set, false at the end. Blank lines
  // are skipped. A row with fewer fields than the header is INVALID_ARGUMENT
  // "<file>:<line>: ...". Fields (and header names) are trimmed of spaces as
  // graphsieve-build trims them, so " 0" is the id 0; line() is the row as read.
  absl::StatusOr<bool> Next();

  const std::vector<std::string_view>& fields() const { return fields_; }
  std::string_view line() const { return line_; }
  uint64_t line_number() const { return reader_->line_number(); }
  const std::vector<std::string>& columns() const { return columns_; }
  char delimiter() const { return delimiter_; }
  bool has_header() const { return has_header_; }
  const std::string& path() const { return path_; }

  // "<path>:<line>: " for error messages about the current row.
  std::string Where() const;

 private:
  DelimitedStream() = default;

  std::string path_;
  std::unique_ptr<ByteSource> source_;
  std::unique_ptr<LineReader> reader_;
  std::unique_ptr<LineSplitter> splitter_;
  std::vector<std::string> columns_;
  std::string header_;  // the header line as read (for Column's suggestion)
  std::vector<std::string_view> fields_;
  std::string_view line_;
  std::string pending_;  // first data line of a headerless file, replayed by Next()
  bool has_pending_ = false;
  bool has_header_ = true;
  char delimiter_ = ',';
};

// Applies a label rule to the text of its column: kBinary accepts 0/1 (and
// true/false); comparisons parse a number. Errors say what the text was.
absl::StatusOr<bool> EvaluateLabel(const LabelRule& rule, std::string_view text);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CLIENT_DELIMITED_STREAM_H_
