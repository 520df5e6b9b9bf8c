// The impression-log column flags, defined once for every program that reads
// a log (graphsieve-build, graphsieve-eval, the `graphsieve` CLI), and their
// translation into LogReaderOptions (core/io/log_reader.h).
//
//   --dataset      graphsieve | movielens | kuairec | mind: a column preset;
//                  explicit column flags override it
//   --user-col     user id column              (alias: --user-column)
//   --item-col     item id column              (alias: --item-column)
//   --label-col    0/1 label column
//   --label-rule   threshold rule, "watch_ratio > 3" (overrides --label-col)
//   --label        alias: a 0/1 column name or a rule (sets --label-col or
//                  --label-rule accordingly)
//   --pilot-col    pilot score column          (alias: --pilot-column)
//   --delimiter    auto | comma | tab | pipe | semicolon | one character
//   --id-mode      auto | int | string
//
// The aliases are the spellings the CLI and graphsieve-eval used before; they
// keep working. Rule: a flag counts as given when its value differs from its
// default; a primary and its alias both given with different values is an
// error naming both. Flag names are written with '-' or '_' (core/cli/flags.h).
//
// Thread-compatible: read the flags after parsing, from main()'s thread.
#ifndef GRAPHSIEVE_CORE_CLI_LOG_FLAGS_H_
#define GRAPHSIEVE_CORE_CLI_LOG_FLAGS_H_

#include <string>
#include <string_view>

#include "absl/flags/declare.h"
#include "absl/status/statusor.h"
#include "core/io/log_reader.h"

ABSL_DECLARE_FLAG(std::string, dataset);
ABSL_DECLARE_FLAG(std::string, user_col);
ABSL_DECLARE_FLAG(std::string, item_col);
ABSL_DECLARE_FLAG(std::string, label_col);
ABSL_DECLARE_FLAG(std::string, label_rule);
ABSL_DECLARE_FLAG(std::string, pilot_col);
ABSL_DECLARE_FLAG(std::string, delimiter);
ABSL_DECLARE_FLAG(std::string, id_mode);
// Aliases (older spellings).
ABSL_DECLARE_FLAG(std::string, user_column);
ABSL_DECLARE_FLAG(std::string, item_column);
ABSL_DECLARE_FLAG(std::string, label);
ABSL_DECLARE_FLAG(std::string, pilot_column);

namespace graphsieve {

// The source file defining the flags above (for ConfigureFlagUsage's --help filter).
inline constexpr char kLogFlagsFile[] = "core/cli/log_flags.cc";

// `primary`'s value, or `alias`'s when only the alias was given (a value
// differing from `unset` counts as given). Both given and different:
// INVALID_ARGUMENT "--<primary>=... and its alias --<alias>=... disagree".
// Names are written as on the command line, without "--".
absl::StatusOr<std::string> MergeAliasFlag(std::string_view primary_name,
                                           const std::string& primary, std::string_view alias_name,
                                           const std::string& alias, const std::string& unset);

// "auto" (or empty) → '\0' (detect), comma, tab, pipe, semicolon, "\t", or one character.
absl::StatusOr<char> ParseDelimiterFlag(const std::string& text);

// LogReaderOptions from the flags above, starting from `base` (its other
// fields — max_bad_rows, keep_id_names, ... — are kept). --dataset applies a
// preset first; a flag left at its default does not override the preset.
// --pilot-col is applied only when `read_pilot` (the CLI has no pilot column).
// Each of the user, item, label (the rule's column) and pilot columns must be
// a column of its own: two naming one column are refused, naming both flags.
// Errors name the flag; the result is Validate()d.
absl::StatusOr<LogReaderOptions> LogReaderOptionsFromFlags(const LogReaderOptions& base,
                                                           bool read_pilot);

// A log reader's error (core/io/log_reader.h) in terms of these flags. The
// reader says "(is line 1 a header? column_names is for files without one)"
// when a file with a header is read under a headerless preset; with
// --dataset given that hint names the preset and what to pass instead. Any
// other status is returned unchanged.
absl::Status ExplainLogReadError(const absl::Status& status);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_CLI_LOG_FLAGS_H_
