// The MIND behaviors.tsv row format (internal to graphsieve_io):
//   <impression_id>\t<user>\t<time>\t<history>\t<N1-0 N2-1 ...>
// One row holds one user's impressions; each "<item>-<0|1>" token of the
// impressions column becomes one instance (docs/DATA.md).
//
// Thread-compatible: one MindRowParser per file being read; it keeps scratch
// space between rows and does not own the FieldParser or the log.
#ifndef GRAPHSIEVE_CORE_IO_MIND_PARSER_H_
#define GRAPHSIEVE_CORE_IO_MIND_PARSER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "core/io/field_parser.h"
#include "core/io/log_reader.h"

namespace graphsieve::io_internal {

class MindRowParser {
 public:
  // Column indexes into a split row; pilot < 0 = no pilot score.
  struct Columns {
    int user = -1;
    int impressions = -1;
    int pilot = -1;
  };

  MindRowParser(const FieldParser& fields, const LogReaderOptions& options, Columns columns)
      : fields_(fields), options_(options), columns_(columns) {}

  // Parses one split row and appends its instances to `log`; on error
  // (naming file, line and column) appends nothing.
  absl::Status ParseRow(const std::vector<std::string_view>& row, ImpressionLog* log);

 private:
  // The "<item>-<0|1>" tokens of the impressions column into items_/labels_.
  absl::Status ParseImpressions(std::string_view text, ImpressionLog* log);

  const FieldParser& fields_;
  const LogReaderOptions& options_;
  const Columns columns_;
  std::vector<uint64_t> items_;
  std::vector<uint8_t> labels_;
};

}  // namespace graphsieve::io_internal

#endif  // GRAPHSIEVE_CORE_IO_MIND_PARSER_H_
