// The `graphsieve` subcommands and what they share (client and log options
// built from flags, error printing). Each Run*() returns the process exit
// status: 0 success, 1 canary beyond its thresholds or a failed PinVersion
// call, 2 error.
//
// Not thread-safe: called once from main().
#ifndef GRAPHSIEVE_CLIENT_CLI_COMMANDS_H_
#define GRAPHSIEVE_CLIENT_CLI_COMMANDS_H_

#include <memory>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/sampling_rate_client.h"
#include "core/io/log_reader.h"

namespace graphsieve {

inline constexpr int kExitOk = 0;
inline constexpr int kExitBeyondThresholds = 1;
inline constexpr int kExitError = 2;

int RunRates();
int RunStatus();
int RunFilter();
int RunCanary();
int RunPin();

// A client for `target` with the connection flags (--deadline_seconds, ...).
absl::StatusOr<std::unique_ptr<SamplingRateClient>> ClientFromFlags(const std::string& target,
                                                                    const char* target_flag);

// LogReaderOptions from the shared log-column flags (core/cli/log_flags.h:
// --dataset, --user-col, --item-col, --label-col/--label-rule, --delimiter,
// --id-mode and their aliases). Explicit flags override the preset's columns.
absl::StatusOr<LogReaderOptions> LogOptionsFromFlags();

// The pairs file of rates/canary: --input, or its alias --pairs (both given
// and different is an error). --input left at "-" means stdin when
// `default_is_stdin` (rates), no file otherwise (canary: "" is returned).
absl::StatusOr<std::string> PairsInputFromFlags(bool default_is_stdin);

// Prints "graphsieve <command>: <status message> [CODE]" to stderr, returns exit_code.
int Fail(const char* command, const absl::Status& status, int exit_code = kExitError);

// Opens --output ("-" = stdout). The returned stream stays valid while *holder lives.
absl::StatusOr<std::ostream*> OpenOutput(const std::string& path,
                                         std::unique_ptr<std::ostream>* holder);

// The human table of `graphsieve status`.
std::string FormatStatusTable(const std::string& target, const v1::GetStatusResponse& status);

// "EXACT", "INFERRED", "DEFAULT", "UNSPECIFIED".
const char* SourceName(int source);

// Shortest text that reads back as the same float (rates in CSV outputs).
std::string FloatText(float v);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CLIENT_CLI_COMMANDS_H_
