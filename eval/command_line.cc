#include "eval/command_line.h"

#include "absl/flags/internal/parse.h"
#include "core/cli/flags.h"

namespace graphsieve::eval {

absl::Status ParseEvalCommandLine(int argc, char** argv, CommandLine* outcome,
                                  std::vector<std::string>* positional) {
  *outcome = CommandLine::kRun;
  std::vector<std::string> args = NormaliseFlagNames(argc, argv);
  std::vector<char*> pointers = ArgvPointers(args);
  ParsedFlags parsed = ParseFlags(pointers);  // core/cli: the programs' one flag parser
  if (!parsed.status.ok()) return parsed.status;
  positional->assign(parsed.positional.begin(), parsed.positional.end());
  if (parsed.exit_now) *outcome = CommandLine::kUsageOut;
  return absl::OkStatus();
}

bool FlagGiven(std::string_view name) {
  return absl::flags_internal::WasPresentOnCommandLine(absl::string_view(name.data(), name.size()));
}

}  // namespace graphsieve::eval
