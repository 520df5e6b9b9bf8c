// Parsing of one log row's fields (ids, numbers, the label, the pilot score)
// with errors naming "<file>:<line>: column '<name>'" (internal to
// graphsieve_io, shared by the delimited and the MIND row parsers).
//
// The common forms (integer ids, plain decimals) take an inline
// allocation-free path; everything else goes to the out-of-line slow path.
//
// Thread-compatible: one FieldParser per file being read. It does not own
// the options or the LineReader (for the current line number); both must
// outlive it.
#ifndef GRAPHSIEVE_CORE_IO_FIELD_PARSER_H_
#define GRAPHSIEVE_CORE_IO_FIELD_PARSER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/io/fast_parse.h"
#include "core/io/line_splitter.h"
#include "core/io/log_reader.h"

namespace graphsieve::io_internal {

// absl 20220623 (Debian 12) has its own absl::string_view; StrCat needs it.
inline absl::string_view Av(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// Text from the file as shown in an error: at most 40 bytes, non-printable
// bytes C-escaped (a binary file must not garble the message).
std::string Shown(std::string_view text);

// The header's names for an error message: at most 30, each Shown().
std::string ShownColumns(const std::vector<std::string>& names);

// The delimiter of a delimited log, from its first line: the candidate that
// splits a headerless first row into `expected_columns` fields (0: a header,
// unknown), else the one the line holds most of (tab, comma, '|', ';' on a
// tie); '\0' when it holds none. The log reader, graphsieve-eval's time
// column and the graphsieve CLI all detect it here, so they agree.
inline char DetectDelimiter(std::string_view line, size_t expected_columns) {
  char best = '\0';
  size_t best_count = 0;
  for (char c : {'\t', ',', '|', ';'}) {
    size_t count = 0;
    for (char x : line) count += x == c;
    if (expected_columns > 0 && count + 1 == expected_columns) return c;
    if (count > best_count) {
      best = c;
      best_count = count;
    }
  }
  return best;
}

inline std::string_view TrimField(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// Whether `v <op> threshold` holds (false for kBinary).
inline bool Compare(LabelRule::Op op, double v, double threshold) {
  switch (op) {
    case LabelRule::Op::kGt:
      return v > threshold;
    case LabelRule::Op::kGe:
      return v >= threshold;
    case LabelRule::Op::kLt:
      return v < threshold;
    case LabelRule::Op::kLe:
      return v <= threshold;
    case LabelRule::Op::kEq:
      return v == threshold;
    case LabelRule::Op::kNe:
      return v != threshold;
    case LabelRule::Op::kBinary:
      break;
  }
  return false;
}

class FieldParser {
 public:
  FieldParser(const std::string& path, const LogReaderOptions& options, const LineReader& lines)
      : path_(path), options_(options), lines_(lines) {}

  // INVALID_ARGUMENT "<file>:<line>: column '<column>': <problem>" (no
  // column part when `column` is empty).
  absl::Status RowError(absl::string_view column, absl::string_view problem) const;

  // Parses an id field. Plain integers take the inline fast path; text goes
  // through ParseId (hash) and, when kept, into `names`.
  absl::Status ParseIdField(std::string_view text, const std::string& column,
                            absl::flat_hash_map<uint64_t, std::string>* names, uint64_t* id) const {
    text = TrimField(text);
    if (options_.id_mode != IdMode::kString && FastParseUint(text, id)) return absl::OkStatus();
    return ParseIdFieldSlow(text, column, names, id);
  }

  // A finite number.
  absl::Status ParseNumber(std::string_view text, const std::string& column, double* value) const {
    text = TrimField(text);
    if (FastParseDouble(text, value)) return absl::OkStatus();
    return ParseNumberSlow(text, column, value);
  }

  // 0/1 by options.label (a 0/1 column or a threshold rule).
  absl::Status ParseLabel(std::string_view text, uint8_t* label) const;

  // A pilot score in [0, 1] from options.pilot_column.
  absl::Status ParsePilot(std::string_view text, float* score) const;

 private:
  absl::Status ParseIdFieldSlow(std::string_view text, const std::string& column,
                                absl::flat_hash_map<uint64_t, std::string>* names,
                                uint64_t* id) const;
  absl::Status ParseNumberSlow(std::string_view text, const std::string& column,
                               double* value) const;

  const std::string& path_;
  const LogReaderOptions& options_;
  const LineReader& lines_;
};

inline absl::Status FieldParser::ParseLabel(std::string_view text, uint8_t* label) const {
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
  *label = Compare(rule.op, v, rule.threshold) ? 1 : 0;
  return absl::OkStatus();
}

inline absl::Status FieldParser::ParsePilot(std::string_view text, float* score) const {
  double v = 0;
  if (absl::Status s = ParseNumber(text, options_.pilot_column, &v); !s.ok()) return s;
  if (v < 0.0 || v > 1.0) {
    return RowError(options_.pilot_column, absl::StrCat("pilot score ", v, " is outside [0, 1]"));
  }
  *score = static_cast<float>(v);
  return absl::OkStatus();
}

}  // namespace graphsieve::io_internal

#endif  // GRAPHSIEVE_CORE_IO_FIELD_PARSER_H_
