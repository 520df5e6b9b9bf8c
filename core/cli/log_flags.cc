#include "core/cli/log_flags.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

ABSL_FLAG(std::string, dataset, "",
          "Column preset of a known log: graphsieve | movielens | kuairec | mind (sets the "
          "columns, delimiter and label rule; explicit column flags still override).");
ABSL_FLAG(std::string, user_col, "user_id", "Name of the user id column (alias: --user-column).");
ABSL_FLAG(std::string, item_col, "item_id", "Name of the item id column (alias: --item-column).");
ABSL_FLAG(std::string, label_col, "label",
          "Name of the 0/1 label column (ignored with --label-rule).");
ABSL_FLAG(std::string, label_rule, "",
          "Label as a threshold rule on a numeric column, e.g. \"watch_ratio > 3\" "
          "(ops > >= < <= == !=). Empty: the 0/1 column --label-col.");
ABSL_FLAG(std::string, pilot_col, "",
          "Column with a pilot model's score in [0, 1] (alias: --pilot-column); empty = none.");
ABSL_FLAG(std::string, delimiter, "auto",
          "Field delimiter: auto (detect from the header) | comma | tab | pipe | semicolon | one "
          "character.");
ABSL_FLAG(std::string, id_mode, "auto",
          "How id text becomes uint64: auto (decimal integers as is, other text hashed with "
          "XXH3-64) | int | string (always hashed). A snapshot must be built (graphsieve-build) "
          "and queried (graphsieve) with the same mode; its manifest records id_mode.");
ABSL_FLAG(std::string, user_column, "user_id", "Alias of --user-col (older spelling).");
ABSL_FLAG(std::string, item_column, "item_id", "Alias of --item-col (older spelling).");
ABSL_FLAG(std::string, label, "label",
          "Alias (older spelling): a 0/1 column name (as --label-col) or a rule such as "
          "'watch_ratio > 3' (as --label-rule).");
ABSL_FLAG(std::string, pilot_column, "", "Alias of --pilot-col (older spelling).");

namespace graphsieve {
namespace {

absl::Status Prefixed(std::string_view flag, const absl::Status& s) {
  return absl::InvalidArgumentError(
      absl::StrCat("--", absl::string_view(flag.data(), flag.size()), ": ", s.message()));
}

// The label rule of --label-col/--label-rule, merged with the --label alias.
// *given: any of the three was given (so it overrides a --dataset preset).
absl::StatusOr<LabelRule> LabelFromFlags(bool* given) {
  const std::string col = absl::GetFlag(FLAGS_label_col);
  const std::string rule_text = absl::GetFlag(FLAGS_label_rule);
  const std::string alias = absl::GetFlag(FLAGS_label);
  LabelRule primary;
  if (!rule_text.empty()) {
    absl::StatusOr<LabelRule> rule = LabelRule::Parse(rule_text);
    if (!rule.ok()) return Prefixed("label-rule", rule.status());
    primary = *rule;
  } else {
    primary.column = col;
  }
  const bool primary_given = !rule_text.empty() || col != "label";
  *given = primary_given || alias != "label";
  if (alias == "label") return primary;
  absl::StatusOr<LabelRule> from_alias = LabelRule::Parse(alias);
  if (!from_alias.ok()) return Prefixed("label", from_alias.status());
  if (primary_given && from_alias->ToString() != primary.ToString()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--label='", alias, "' and --label-col/--label-rule ('", primary.ToString(),
                     "') disagree; give one (--label is the older spelling)"));
  }
  return *from_alias;
}

// One column a column flag names, and the flag (with the preset when the
// name came from --dataset rather than the flag itself).
struct NamedColumn {
  std::string flag;
  std::string column;
};

// Two of the column flags naming one column is a mistake (the label would
// leak into the pilot score, or the ids be read from the label): refused,
// naming both flags and the column.
absl::Status CheckColumnsDistinct(const std::vector<NamedColumn>& columns) {
  for (size_t i = 0; i < columns.size(); ++i) {
    for (size_t j = i + 1; j < columns.size(); ++j) {
      if (columns[i].column.empty() || columns[i].column != columns[j].column) continue;
      return absl::InvalidArgumentError(absl::StrCat(columns[i].flag, " and ", columns[j].flag,
                                                     " both name column '", columns[i].column,
                                                     "'; each must name a column of its own"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> MergeAliasFlag(std::string_view primary_name,
                                           const std::string& primary, std::string_view alias_name,
                                           const std::string& alias, const std::string& unset) {
  if (alias == unset || alias == primary) return primary;
  if (primary == unset) return alias;
  return absl::InvalidArgumentError(
      absl::StrCat("--", absl::string_view(primary_name.data(), primary_name.size()), "='", primary,
                   "' and its alias --", absl::string_view(alias_name.data(), alias_name.size()),
                   "='", alias, "' disagree; give one"));
}

absl::StatusOr<char> ParseDelimiterFlag(const std::string& d) {
  if (d == "auto" || d.empty()) return '\0';
  if (d == "comma" || d == ",") return ',';
  if (d == "tab" || d == "\\t" || d == "\t") return '\t';
  if (d == "pipe" || d == "|") return '|';
  if (d == "semicolon" || d == ";") return ';';
  if (d.size() == 1) return d[0];
  return absl::InvalidArgumentError(
      absl::StrCat("--delimiter: '", d, "' is not auto|comma|tab|pipe|semicolon or one character"));
}

absl::StatusOr<LogReaderOptions> LogReaderOptionsFromFlags(const LogReaderOptions& base,
                                                           bool read_pilot) {
  LogReaderOptions r = base;
  const std::string dataset = absl::GetFlag(FLAGS_dataset);
  if (!dataset.empty()) {
    if (absl::Status s = ApplyDatasetPreset(dataset, &r); !s.ok()) return Prefixed("dataset", s);
  }
  // A flag left at its default does not override the preset.
  auto user = MergeAliasFlag("user-col", absl::GetFlag(FLAGS_user_col), "user-column",
                             absl::GetFlag(FLAGS_user_column), "user_id");
  if (!user.ok()) return user.status();
  if (dataset.empty() || *user != "user_id") r.user_column = *user;
  auto item = MergeAliasFlag("item-col", absl::GetFlag(FLAGS_item_col), "item-column",
                             absl::GetFlag(FLAGS_item_column), "item_id");
  if (!item.ok()) return item.status();
  if (dataset.empty() || *item != "item_id") r.item_column = *item;
  bool label_given = false;
  absl::StatusOr<LabelRule> label = LabelFromFlags(&label_given);
  if (!label.ok()) return label.status();
  if (dataset.empty() || label_given) r.label = *label;
  if (read_pilot) {
    auto pilot = MergeAliasFlag("pilot-col", absl::GetFlag(FLAGS_pilot_col), "pilot-column",
                                absl::GetFlag(FLAGS_pilot_column), "");
    if (!pilot.ok()) return pilot.status();
    r.pilot_column = *pilot;
  }
  const std::string delimiter = absl::GetFlag(FLAGS_delimiter);
  absl::StatusOr<char> d = ParseDelimiterFlag(delimiter);
  if (!d.ok()) return d.status();
  if (dataset.empty() || *d != '\0') r.delimiter = *d;
  absl::StatusOr<IdMode> mode = ParseIdMode(absl::GetFlag(FLAGS_id_mode));
  if (!mode.ok()) return Prefixed("id-mode", mode.status());
  r.id_mode = *mode;
  // Each column flag names a column of its own (a name from the preset is
  // reported as the preset's).
  const std::string preset = dataset.empty() ? "" : absl::StrCat(" (from --dataset=", dataset, ")");
  std::vector<NamedColumn> columns = {
      {absl::StrCat("--user-col=", r.user_column, *user == r.user_column ? "" : preset),
       r.user_column}};
  if (r.format == LogFormat::kDelimited) {  // MIND's items and labels come from its impressions
    columns.push_back(
        {absl::StrCat("--item-col=", r.item_column, *item == r.item_column ? "" : preset),
         r.item_column});
    const bool rule = r.label.op != LabelRule::Op::kBinary;
    columns.push_back({absl::StrCat(rule ? "--label-rule='" : "--label-col=", r.label.ToString(),
                                    rule ? "'" : "", label_given || dataset.empty() ? "" : preset),
                       r.label.column});
  }
  if (read_pilot) columns.push_back({absl::StrCat("--pilot-col=", r.pilot_column), r.pilot_column});
  if (absl::Status s = CheckColumnsDistinct(columns); !s.ok()) return s;
  if (absl::Status s = r.Validate(); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("log column flags: ", s.message()));
  }
  return r;
}

absl::Status ExplainLogReadError(const absl::Status& status) {
  // The reader's wording (core/io/log_reader.cc), for headerless column names.
  static constexpr char kReaderHint[] = "column_names is for files without one";
  const std::string dataset = absl::GetFlag(FLAGS_dataset);
  if (status.ok() || dataset.empty() || !absl::StrContains(status.message(), kReaderHint)) {
    return status;
  }
  std::string instead;
  if (dataset == "movielens") {
    instead =
        "drop --dataset and name the columns: --user-col=user_id --item-col=item_id "
        "--label-rule='rating >= 4' (with that file's names)";
  } else {
    instead =
        "drop --dataset and name the columns (--user-col, --item-col, --label-col or "
        "--label-rule)";
  }
  return absl::Status(
      status.code(),
      absl::StrReplaceAll(status.message(),
                          {{kReaderHint, absl::StrCat("--dataset=", dataset,
                                                      " is for files without a header; for a "
                                                      "file with one, ",
                                                      instead)}}));
}

}  // namespace graphsieve
