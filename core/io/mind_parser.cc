#include "core/io/mind_parser.h"

#include "absl/strings/str_cat.h"

namespace graphsieve::io_internal {

absl::Status MindRowParser::ParseRow(const std::vector<std::string_view>& row, ImpressionLog* log) {
  uint64_t user = 0;
  if (absl::Status s =
          fields_.ParseIdField(row[columns_.user], options_.user_column, &log->user_names, &user);
      !s.ok()) {
    return s;
  }
  float pilot = 0;
  if (columns_.pilot >= 0) {
    if (absl::Status s = fields_.ParsePilot(row[columns_.pilot], &pilot); !s.ok()) return s;
  }
  if (absl::Status s = ParseImpressions(row[columns_.impressions], log); !s.ok()) return s;
  log->user_ids.insert(log->user_ids.end(), items_.size(), user);
  log->item_ids.insert(log->item_ids.end(), items_.begin(), items_.end());
  log->labels.insert(log->labels.end(), labels_.begin(), labels_.end());
  if (columns_.pilot >= 0) log->pilot_scores.insert(log->pilot_scores.end(), items_.size(), pilot);
  return absl::OkStatus();
}

absl::Status MindRowParser::ParseImpressions(std::string_view rest, ImpressionLog* log) {
  items_.clear();
  labels_.clear();
  const std::string& column = options_.mind_impressions_column;
  while (!rest.empty()) {
    const size_t space = rest.find(' ');
    const std::string_view token = rest.substr(0, space);
    rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
    if (token.empty()) continue;
    const size_t dash = token.rfind('-');
    if (dash == std::string_view::npos || dash + 2 != token.size() ||
        (token[dash + 1] != '0' && token[dash + 1] != '1')) {
      return fields_.RowError(
          column,
          absl::StrCat("impression '", Shown(token),
                       "' is not '<item>-0' or '<item>-1' (the MIND test split has no labels)"));
    }
    uint64_t item = 0;
    if (absl::Status s =
            fields_.ParseIdField(token.substr(0, dash), column, &log->item_names, &item);
        !s.ok())
      return s;
    items_.push_back(item);
    labels_.push_back(static_cast<uint8_t>(token[dash + 1] - '0'));
  }
  if (items_.empty()) return fields_.RowError(column, "no impressions in the row");
  return absl::OkStatus();
}

}  // namespace graphsieve::io_internal
