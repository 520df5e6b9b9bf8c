// The `graphsieve` CLI's flags and its per-subcommand flag parser.
//
// Every flag is an Abseil flag (so `absl::GetFlag` reads it), but each
// subcommand accepts only the flags it lists: `graphsieve rates --sample 5`
// is an error naming the flag, not silently ignored. Flags are written with
// dashes or underscores (--sample-from == --sample_from); booleans also take
// --name=true|false and --no-name / --noname. One name differs: `pin --version`
// is FLAGS_pin_version, as Abseil's usage library owns FLAGS_version.
//
// Not thread-safe: parse once in main().
#ifndef GRAPHSIEVE_CLIENT_CLI_FLAGS_H_
#define GRAPHSIEVE_CLIENT_CLI_FLAGS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/status/status.h"

ABSL_DECLARE_FLAG(std::string, server);
ABSL_DECLARE_FLAG(double, deadline_seconds);
ABSL_DECLARE_FLAG(int64_t, max_batch_pairs);
ABSL_DECLARE_FLAG(int32_t, max_attempts);
ABSL_DECLARE_FLAG(std::string, tls_root_cert);
ABSL_DECLARE_FLAG(std::string, tls_server_name);
ABSL_DECLARE_FLAG(std::string, pin_version);  // the CLI spells it --version
ABSL_DECLARE_FLAG(bool, unpin);
ABSL_DECLARE_FLAG(bool, reject_active);
ABSL_DECLARE_FLAG(std::string, input);
ABSL_DECLARE_FLAG(std::string, output);
ABSL_DECLARE_FLAG(bool, json);
ABSL_DECLARE_FLAG(bool, with_version);
ABSL_DECLARE_FLAG(std::string, dataset);
ABSL_DECLARE_FLAG(std::string, user_column);
ABSL_DECLARE_FLAG(std::string, item_column);
ABSL_DECLARE_FLAG(std::string, label);
ABSL_DECLARE_FLAG(std::string, delimiter);
ABSL_DECLARE_FLAG(std::string, id_mode);
ABSL_DECLARE_FLAG(std::string, instance_key_column);
ABSL_DECLARE_FLAG(std::string, decide);
ABSL_DECLARE_FLAG(int64_t, batch_rows);
ABSL_DECLARE_FLAG(std::string, baseline);
ABSL_DECLARE_FLAG(std::string, candidate);
ABSL_DECLARE_FLAG(std::string, baseline_snapshot);
ABSL_DECLARE_FLAG(std::string, candidate_snapshot);
ABSL_DECLARE_FLAG(std::string, pairs);
ABSL_DECLARE_FLAG(std::string, sample_from);
ABSL_DECLARE_FLAG(int64_t, sample);
ABSL_DECLARE_FLAG(uint64_t, seed);
ABSL_DECLARE_FLAG(std::string, default_policy);
ABSL_DECLARE_FLAG(double, delta_threshold);
ABSL_DECLARE_FLAG(double, max_mean_delta);
ABSL_DECLARE_FLAG(double, max_p99_delta);
ABSL_DECLARE_FLAG(double, max_ks);
ABSL_DECLARE_FLAG(double, max_fraction_over);

namespace graphsieve {

struct Subcommand {
  const char* name;
  const char* summary;             // one line for `graphsieve help`
  const char* usage;               // synopsis + description for `graphsieve <cmd> --help`
  std::vector<const char*> flags;  // accepted flags (underscore names)
  int (*run)();                    // 0 ok, 1 canary beyond thresholds, 2 error
};

// Parses argv[first..argc) as flags of `command`. Sets *help when --help/-h
// was given. Positional arguments are an error. Messages name the flag. A
// flag and its older spelling (--user-col/--user-column, --item-col/
// --item-column, --label-col/--label, --input/--pairs) both given with
// different values is an error, even when one of them is at its default.
absl::Status ParseSubcommandFlags(const Subcommand& command, int argc, char** argv, int first,
                                  bool* help);

// Whether the last ParseSubcommandFlags saw the flag (underscore name, e.g.
// "user_column") on the command line, whatever its value (a flag given at its
// default value counts as given).
bool FlagGiven(std::string_view name);

// `graphsieve <cmd> --help`: usage, then every accepted flag with its default.
std::string SubcommandHelp(const Subcommand& command);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CLIENT_CLI_FLAGS_H_
