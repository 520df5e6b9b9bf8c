// Line and field splitting for the log reader (internal to graphsieve_io, in
// a header so tests and benchmarks can exercise it directly).
//
// LineReader hands out lines from a fixed read buffer over a ByteSource; the
// returned views stay valid until the next call. LineSplitter splits one line
// into fields, understanding CSV quotes within the line.
//
// Neither class is thread-safe.
#ifndef GRAPHSIEVE_CORE_IO_LINE_SPLITTER_H_
#define GRAPHSIEVE_CORE_IO_LINE_SPLITTER_H_

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/io/byte_source.h"
#include "core/io/log_reader.h"

namespace graphsieve {

class LineReader {
 public:
  // REQUIRES: options.Validate() is OK; `source` outlives the reader.
  LineReader(ByteSource* source, const LogReaderOptions& options);

  // Sets `*line` to the next line without its '\n' (and a trailing '\r') and
  // returns true, or returns false at the end of the data. A line longer than
  // options.max_line_bytes is INVALID_ARGUMENT; source errors pass through.
  absl::StatusOr<bool> Next(std::string_view* line);

  uint64_t line_number() const { return line_number_; }  // of the last line returned (1-based)
  uint64_t bytes() const { return bytes_; }              // uncompressed bytes read so far
  // Bytes of the lines handed out so far (bytes() minus the unread rest of the buffer).
  uint64_t consumed_bytes() const { return bytes_ - (end_ - begin_); }

 private:
  absl::Status Refill();

  ByteSource* const source_;
  const size_t max_line_bytes_;
  std::vector<char> buffer_;
  size_t begin_ = 0;  // first unconsumed byte
  size_t end_ = 0;    // one past the last valid byte
  bool eof_ = false;
  uint64_t line_number_ = 0;
  uint64_t bytes_ = 0;
};

class LineSplitter {
 public:
  explicit LineSplitter(char delimiter) : delimiter_(delimiter) {}

  // Splits `line` into `*fields` (grown as needed, never shrunk) and returns
  // the number of fields. Views point into `line` or into this splitter's
  // scratch (unescaped quoted fields): valid until the next Split().
  // On a quoting error returns 0 and error() describes it.
  size_t Split(std::string_view line, std::vector<std::string_view>* fields);

  // nullptr after a successful Split().
  const char* error() const { return error_; }

 private:
  size_t SplitQuoted(std::string_view line, size_t start, size_t index,
                     std::vector<std::string_view>* fields);

  char delimiter_;
  const char* error_ = nullptr;
  std::deque<std::string> scratch_;  // deque: growing keeps earlier fields' views valid
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_IO_LINE_SPLITTER_H_
