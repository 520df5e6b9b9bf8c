// The `graphsieve` subcommands and what they share (client and log options
// built from flags, error printing). Each Run*() returns the process exit
// status: 0 success, 1 canary beyond its thresholds, 2 error (a failed
// PinVersion call included).
//
// Not thread-safe: called once from main().
#ifndef GRAPHSIEVE_CLIENT_CLI_COMMANDS_H_
#define GRAPHSIEVE_CLIENT_CLI_COMMANDS_H_

#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/sampling_rate_client.h"
#include "core/io/log_reader.h"
#include "core/io/output_file.h"

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

// Where filter and rates write --output. "-" (or empty) is stdout. A file is
// written through core/io's OutputFile: to a temporary that Finish() renames
// over it, so a run that fails midway leaves the old file (or none) whole; a
// CommandOutput destroyed unfinished removes its temporary. FIFOs and devices
// (/dev/stdout) are written in place.
//
// Not thread-safe; one per command run.
class CommandOutput {
 public:
  CommandOutput() = default;
  CommandOutput(const CommandOutput&) = delete;
  CommandOutput& operator=(const CommandOutput&) = delete;
  ~CommandOutput();

  // Opens `path` (--output), refusing it when it is the same file as `input`
  // (--input). REQUIRES: called once, before stream().
  absl::Status Open(const std::string& path, const std::string& input);
  std::ostream& stream() { return file_ ? out_ : std::cout; }
  // Flushes and closes; a file's temporary is renamed over it.
  absl::Status Finish();

 private:
  std::optional<OutputFile> file_;
  std::ofstream out_;
  bool finished_ = false;
};

// The human table of `graphsieve status`.
std::string FormatStatusTable(const std::string& target, const v1::GetStatusResponse& status);

// "EXACT", "INFERRED", "DEFAULT", "UNSPECIFIED".
const char* SourceName(int source);

// Shortest text that reads back as the same float (rates in CSV outputs).
std::string FloatText(float v);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CLIENT_CLI_COMMANDS_H_
