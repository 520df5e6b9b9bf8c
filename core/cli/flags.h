// Shared command-line set-up of graphsieve's programs (Abseil flags).
//
// Every program accepts flag names spelled with '-' or '_' (--snapshot-root ==
// --snapshot_root), lists only its own flags under --help, and answers
// --version; ParseFlags reports a bad flag instead of exiting. Thread-compatible: call from main()
// before any other thread.
#ifndef GRAPHSIEVE_CORE_CLI_FLAGS_H_
#define GRAPHSIEVE_CORE_CLI_FLAGS_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace graphsieve {

// Sets the --help text and restricts --help/--helpshort to the flags defined
// in the file whose path ends with `main_file` (e.g. "builder/build_main.cc") and
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

// What ParseFlags found on the command line.
struct ParsedFlags {
  // argv[0], then the positional arguments (as absl::ParseCommandLine returns).
  std::vector<char*> positional;
  // INVALID_ARGUMENT naming the flag: unknown, without its value, or with a
  // value of the wrong type. The program should exit with its usage-error
  // code (2); the flags that did parse are set (so --json can be read).
  absl::Status status;
  // --help, --helpfull, --helpshort, --helpon, --helpmatch, --helppackage,
  // --version or --only_check_args was given and handled (its text printed on
  // stdout): the program should exit 0.
  bool exit_now = false;
};

// Parses the flags as absl::ParseCommandLine does, but never ends the process
// itself (Abseil's parser exits 1 for an unknown flag, a bad value and
// --help alike): every argument is checked against the flags this program
// links first, then Abseil parses them. graphsieve-build, -gen, -eval and
// -server use it (the graphsieve CLI parses its subcommands' flags itself).
// --flagfile, --fromenv and --tryfromenv are expanded here, before any check,
// so an error in a flag file (unreadable, a line that is not a flag, a bad
// flag or value in it) or a missing FLAGS_x variable is a status like any
// other (exit 2), naming the file and line or the variable. REQUIRES: `args` from
// ArgvPointers(NormaliseFlagNames(...)); called once, from main(), after ConfigureFlagUsage.
ParsedFlags ParseFlags(std::vector<char*>& args);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_CLI_FLAGS_H_
