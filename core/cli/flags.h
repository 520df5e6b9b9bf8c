// Shared command-line set-up of graphsieve's programs (Abseil flags).
//
// Every program accepts flag names spelled with '-' or '_' (--snapshot-root ==
// --snapshot_root), lists only its own flags under --help, and answers
// --version. Thread-compatible: call from main() before any other thread.
#ifndef GRAPHSIEVE_CORE_CLI_FLAGS_H_
#define GRAPHSIEVE_CORE_CLI_FLAGS_H_

#include <string>
#include <string_view>
#include <vector>

namespace graphsieve {

// Sets the --help text and restricts --help/--helpshort to the flags defined
// in the file whose path ends with `main_file` (e.g. "builder/main.cc") and
// the shared log-column flags (core/cli/log_flags.h) when linked;
// --version prints `version_line`. Call once, before ParseCommandLine.
void ConfigureFlagUsage(std::string_view usage_message, std::string main_file,
                        std::string version_line);

// Copies argv with '-' in flag *names* replaced by '_' ("--user-col=a-b" →
// "--user_col=a-b"); values, positional arguments and everything after "--"
// are left as they are.
std::vector<std::string> NormaliseFlagNames(int argc, char** argv);

// Pointers into `args` for absl::ParseCommandLine.
// REQUIRES: `args` outlives the result and is not resized meanwhile.
std::vector<char*> ArgvPointers(std::vector<std::string>& args);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_CLI_FLAGS_H_
