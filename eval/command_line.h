// graphsieve-eval's command line: absl's flag parser with every problem a
// usage error the caller reports and exits on, instead of absl exiting 1 from
// inside the parse (for an unknown flag, an ill-typed value and --help alike).
//
//   ParseEvalCommandLine  core/cli's ParseFlags (every flag's name and value
//                         checked first: unknown flag, missing or ill-typed
//                         value; then absl parses); --help, --helpfull,
//                         --version print their text and say so, so that the
//                         program exits 0.
//   FlagGiven             whether a flag was on the command line (or in a
//                         --flagfile), for flags a subcommand does not use.
//
// Thread-compatible: call from main()'s thread before other threads start.
#ifndef GRAPHSIEVE_EVAL_COMMAND_LINE_H_
#define GRAPHSIEVE_EVAL_COMMAND_LINE_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace graphsieve::eval {

enum class CommandLine {
  kRun,       // flags parsed: run the command
  kUsageOut,  // --help, --version and the like were printed: exit 0
};

// Parses argv into the flags (names with '-' or '_', core/cli/flags.h);
// `positional` gets the arguments that are not flags, program name first.
// Errors (INVALID_ARGUMENT, naming the argument as typed): an unknown flag, a
// flag without its value, a value the flag's type does not accept.
absl::Status ParseEvalCommandLine(int argc, char** argv, CommandLine* outcome,
                                  std::vector<std::string>* positional);

// Whether flag `name` (as defined, with '_') was given on the command line.
// REQUIRES: ParseEvalCommandLine has run.
bool FlagGiven(std::string_view name);

}  // namespace graphsieve::eval

#endif  // GRAPHSIEVE_EVAL_COMMAND_LINE_H_
