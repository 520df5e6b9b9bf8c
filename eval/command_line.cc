#include "eval/command_line.h"

#include <iostream>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/internal/parse.h"
#include "absl/flags/internal/usage.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/cli/flags.h"

namespace graphsieve::eval {
namespace {

// absl's help and version switches: not flags of the registry (absl 20220623
// recognises them in its parser), so they are left to it.
bool IsUsageSwitch(std::string_view name) {
  for (const char* usage : {"help", "helpfull", "helpshort", "helppackage", "helpon", "helpmatch",
                            "version", "only_check_args"}) {
    if (name == usage) return true;
  }
  return false;
}

// absl's flags whose value is a file or a list of flag names, read by its parser.
bool IsParserFlag(std::string_view name) {
  return name == "flagfile" || name == "fromenv" || name == "tryfromenv" || name == "undefok";
}

// The checks absl's parser makes, as errors instead of exit(1). Setting a
// flag here is harmless: absl's parse sets the same value again.
// `args` are argv with normalised flag names, `argv` as typed (for the messages).
absl::Status CheckFlags(const std::vector<std::string>& args, char** argv) {
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string original = argv[i];
    if (original == "--") break;
    if (original.size() < 2 || original[0] != '-') continue;  // positional
    std::string_view arg = args[i];
    arg.remove_prefix(arg[1] == '-' ? 2 : 1);
    const size_t eq = arg.find('=');
    const bool has_value = eq != std::string_view::npos;
    const std::string name(arg.substr(0, eq));
    if (IsUsageSwitch(name)) continue;
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr) {
      if (!has_value && absl::StartsWith(name, "no")) {  // --noquiet
        const absl::CommandLineFlag* negated = absl::FindCommandLineFlag(name.substr(2));
        if (negated != nullptr && negated->IsOfType<bool>()) continue;
      }
      return absl::InvalidArgumentError(absl::StrCat("unknown flag '", original, "'"));
    }
    if (!has_value && flag->IsOfType<bool>()) continue;
    std::string value;
    if (has_value) {
      value = std::string(arg.substr(eq + 1));
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return absl::InvalidArgumentError(absl::StrCat("flag '", original, "' needs a value"));
    }
    if (IsParserFlag(name)) continue;
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      const std::string typed = original.substr(0, original.find('='));
      return absl::InvalidArgumentError(absl::StrCat(typed, "='", value, "': ", error));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseEvalCommandLine(int argc, char** argv, CommandLine* outcome,
                                  std::vector<std::string>* positional) {
  *outcome = CommandLine::kRun;
  std::vector<std::string> args = NormaliseFlagNames(argc, argv);
  if (absl::Status s = CheckFlags(args, argv); !s.ok()) return s;
  std::vector<char*> pointers = ArgvPointers(args);
  namespace fi = absl::flags_internal;
  const std::vector<char*> rest = fi::ParseCommandLineImpl(
      static_cast<int>(pointers.size()), pointers.data(), fi::ArgvListAction::kRemoveParsedArgs,
      fi::UsageFlagsAction::kIgnoreUsage, fi::OnUndefinedFlag::kAbortIfUndefined);
  positional->assign(rest.begin(), rest.end());
  // 0 (--version), 1 (a help switch) or -1 (none given); the help is not an error.
  if (fi::HandleUsageFlags(std::cout, absl::ProgramUsageMessage()) != -1) {
    *outcome = CommandLine::kUsageOut;
  }
  return absl::OkStatus();
}

bool FlagGiven(std::string_view name) {
  return absl::flags_internal::WasPresentOnCommandLine(absl::string_view(name.data(), name.size()));
}

}  // namespace graphsieve::eval
