#include "client/delimited_stream.h"

#include <cstdlib>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/io/field_parser.h"

namespace graphsieve {
namespace {

inline absl::string_view Av(std::string_view s) { return absl::string_view(s.data(), s.size()); }

std::string Shown(std::string_view text) {
  if (text.size() <= 80) return std::string(text);
  return absl::StrCat(Av(text.substr(0, 77)), "...");
}

// The --delimiter value that selects `c`.
std::string DelimiterFlagValue(char c) {
  switch (c) {
    case '\t':
      return "tab";
    case ',':
      return "comma";
    case '|':
      return "pipe";
    case ';':
      return "semicolon";
    default:
      return std::string(1, c);
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<DelimitedStream>> DelimitedStream::Open(
    const std::string& path, const LogReaderOptions& options) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  if (options.format != LogFormat::kDelimited) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": only delimited (CSV/TSV) logs can be streamed here, not MIND"));
  }
  absl::StatusOr<std::unique_ptr<ByteSource>> source = ByteSource::Open(path);
  if (!source.ok()) return source.status();
  std::unique_ptr<DelimitedStream> s(new DelimitedStream());
  s->path_ = path == "-" ? "<stdin>" : path;
  s->source_ = *std::move(source);
  s->reader_ = std::make_unique<LineReader>(s->source_.get(), options);
  std::string_view first;
  do {
    absl::StatusOr<bool> more = s->reader_->Next(&first);
    if (!more.ok()) return more.status();
    if (!*more) return absl::InvalidArgumentError(absl::StrCat(s->path_, ": the file is empty"));
  } while (first.empty());
  if (first.size() >= 3 && first.substr(0, 3) == "\xEF\xBB\xBF") first.remove_prefix(3);
  s->delimiter_ = options.delimiter != '\0'
                      ? options.delimiter
                      : io_internal::DetectDelimiter(first, /*expected_columns=*/0);
  s->has_header_ = options.column_names.empty();
  if (s->delimiter_ == '\0') {
    if (s->has_header_ && first.find_first_of(" ") == std::string_view::npos) {
      s->delimiter_ = ',';  // a one-column file
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(s->path_, ":1: cannot detect the delimiter from '", Av(Shown(first)),
                       "' (no tab, comma, '|' or ';'); set --delimiter"));
    }
  }
  s->splitter_ = std::make_unique<LineSplitter>(s->delimiter_);
  if (s->has_header_) {
    std::vector<std::string_view> names;
    const size_t n = s->splitter_->Split(first, &names);
    if (n == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(s->path_, ":1: header: ", s->splitter_->error()));
    }
    // Names and fields are trimmed of spaces as graphsieve-build trims them.
    for (size_t i = 0; i < n; ++i) s->columns_.emplace_back(io_internal::TrimField(names[i]));
    s->header_ = std::string(first);
  } else {
    s->columns_ = options.column_names;
    s->pending_ = std::string(first);
    s->has_pending_ = true;
  }
  return s;
}

int DelimitedStream::FindColumn(std::string_view name) const {
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (columns_[i] == name) return static_cast<int>(i);
  }
  return -1;
}

absl::StatusOr<size_t> DelimitedStream::Column(std::string_view name, std::string_view flag) const {
  const int i = FindColumn(name);
  if (i >= 0) return static_cast<size_t>(i);
  std::vector<std::string> quoted;
  for (const std::string& c : columns_) quoted.push_back(absl::StrCat("'", Shown(c), "'"));
  std::string hint;
  if (has_header_) {
    for (char c : {'\t', ',', '|', ';'}) {
      if (c == delimiter_) continue;
      LineSplitter splitter(c);
      std::vector<std::string_view> names;
      const size_t n = splitter.Split(header_, &names);
      for (size_t k = 0; k < n && hint.empty(); ++k) {
        if (io_internal::TrimField(names[k]) == name) {
          hint = absl::StrCat(" (with --delimiter ", DelimiterFlagValue(c), " it would be found)");
        }
      }
      if (!hint.empty()) break;
    }
  }
  const std::string which =
      has_header_ ? absl::StrCat("the header split on ", DelimiterFlagValue(delimiter_), " has ",
                                 columns_.size(), columns_.size() == 1 ? " column" : " columns")
                  : std::string("the columns are");
  return absl::InvalidArgumentError(absl::StrCat(path_, ": no column '", Av(name), "' (", Av(flag),
                                                 "); ", which, ": ", absl::StrJoin(quoted, ", "),
                                                 hint));
}

std::string DelimitedStream::Where() const {
  return absl::StrCat(path_, ":", has_pending_ ? 1 : reader_->line_number(), ": ");
}

absl::StatusOr<bool> DelimitedStream::Next() {
  std::string_view line;
  if (has_pending_) {
    line = pending_;
    has_pending_ = false;
  } else {
    do {
      absl::StatusOr<bool> more = reader_->Next(&line);
      if (!more.ok()) return more.status();
      if (!*more) return false;
    } while (line.empty());
  }
  line_ = line;
  const size_t n = splitter_->Split(line, &fields_);
  if (n == 0) return absl::InvalidArgumentError(absl::StrCat(Where(), splitter_->error()));
  if (n < columns_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(Where(), "expected ", columns_.size(), " fields, found ", n));
  }
  fields_.resize(n);
  for (std::string_view& field : fields_) field = io_internal::TrimField(field);
  return true;
}

absl::StatusOr<bool> EvaluateLabel(const LabelRule& rule, std::string_view text) {
  if (rule.op == LabelRule::Op::kBinary) {
    if (text == "1" || text == "true") return true;
    if (text == "0" || text == "false") return false;
    return absl::InvalidArgumentError(
        absl::StrCat("label column '", rule.column, "' is '", Av(Shown(text)), "', expected 0/1"));
  }
  double v = 0;
  if (!absl::SimpleAtod(Av(text), &v)) {
    return absl::InvalidArgumentError(absl::StrCat("label column '", rule.column, "' is '",
                                                   Av(Shown(text)), "', expected a number"));
  }
  switch (rule.op) {
    case LabelRule::Op::kGt:
      return v > rule.threshold;
    case LabelRule::Op::kGe:
      return v >= rule.threshold;
    case LabelRule::Op::kLt:
      return v < rule.threshold;
    case LabelRule::Op::kLe:
      return v <= rule.threshold;
    case LabelRule::Op::kEq:
      return v == rule.threshold;
    case LabelRule::Op::kNe:
      return v != rule.threshold;
    case LabelRule::Op::kBinary:
      break;
  }
  return false;
}

}  // namespace graphsieve
