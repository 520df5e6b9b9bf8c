#include "core/cli/flags.h"

#include <algorithm>
#include <iostream>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/flags/commandlineflag.h"
#include "absl/flags/internal/parse.h"
#include "absl/flags/internal/usage.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace graphsieve {

void ConfigureFlagUsage(std::string_view usage_message, std::string main_file,
                        std::string version_line) {
  absl::SetProgramUsageMessage(absl::string_view(usage_message.data(), usage_message.size()));
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [main_file = std::move(main_file)](absl::string_view file) {
    // The shared log-column flags (core/cli/log_flags.cc) belong to every program that links them.
    return absl::EndsWith(file, main_file) || absl::EndsWith(file, "core/cli/log_flags.cc");
  };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  usage.version_string = [version_line = std::move(version_line)] { return version_line + "\n"; };
  absl::SetFlagsUsageConfig(usage);
}

std::vector<std::string> NormaliseFlagNames(int argc, char** argv) {
  std::vector<std::string> out;
  out.reserve(argc);
  bool after_dashdash = false;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") after_dashdash = true;
    if (i > 0 && !after_dashdash && arg.size() > 2 && arg[0] == '-') {
      const size_t end = std::min(arg.find('='), arg.size());
      for (size_t j = (arg[1] == '-' ? 2 : 1); j < end; ++j) {
        if (arg[j] == '-') arg[j] = '_';
      }
    }
    // "--output -" (standard output) as "--output=-": Abseil would take the
    // value too, but warns that "-" looks like a forgotten value.
    if (i > 0 && !after_dashdash && i + 1 < argc && absl::string_view(argv[i + 1]) == "-" &&
        arg.size() > 2 && arg[0] == '-' && arg.find('=') == std::string::npos) {
      const absl::string_view name = absl::string_view(arg).substr(arg[1] == '-' ? 2 : 1);
      const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
      if (flag != nullptr && !flag->IsOfType<bool>()) {
        out.push_back(arg + "=-");
        ++i;
        continue;
      }
    }
    out.push_back(std::move(arg));
  }
  return out;
}

std::vector<char*> ArgvPointers(std::vector<std::string>& args) {
  std::vector<char*> out;
  out.reserve(args.size());
  for (std::string& a : args) out.push_back(a.data());
  return out;
}

namespace {

// Abseil's usage flags (not registered flags: absl/flags/internal/usage.cc).
bool IsUsageFlag(absl::string_view name) {
  for (absl::string_view u : {"help", "helpfull", "helpshort", "helppackage", "helpon", "helpmatch",
                              "version", "only_check_args"}) {
    if (name == u) return true;
  }
  return false;
}

// Abseil's flags that read more flags (files, the environment) or excuse
// unknown ones: left to Abseil.
bool IsGeneratorFlag(absl::string_view name) {
  return name == "flagfile" || name == "fromenv" || name == "tryfromenv" || name == "undefok";
}

// Checks argv against the linked flags as Abseil's parser reads it ("-x" or
// "--x", "=value" or the next argument, --nox for a boolean, "--" ends the
// flags), setting each flag that parses; the first error, naming the flag.
absl::Status CheckArguments(const std::vector<char*>& args) {
  absl::flat_hash_set<std::string> undefok;
  for (size_t i = 1; i < args.size(); ++i) {
    absl::string_view a = args[i];
    if (absl::ConsumePrefix(&a, "--undefok=") || absl::ConsumePrefix(&a, "-undefok=")) {
      for (absl::string_view n : absl::StrSplit(a, ',', absl::SkipEmpty())) undefok.emplace(n);
    }
  }
  absl::Status first;
  auto fail = [&first](std::string message) {
    if (first.ok()) first = absl::InvalidArgumentError(std::move(message));
  };
  for (size_t i = 1; i < args.size(); ++i) {
    absl::string_view arg = args[i];
    if (!absl::ConsumePrefix(&arg, "-") || arg.empty()) continue;  // positional
    absl::ConsumePrefix(&arg, "-");
    if (arg.empty()) break;  // "--": the rest is positional
    const size_t eq = arg.find('=');
    const absl::string_view name = arg.substr(0, eq);
    const bool has_value = eq != absl::string_view::npos;
    absl::string_view value = has_value ? arg.substr(eq + 1) : absl::string_view();
    if (IsUsageFlag(name)) continue;
    if (IsGeneratorFlag(name)) {
      if (!has_value) ++i;  // its value is the next argument
      continue;
    }
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    bool negative = false;
    if (flag == nullptr && absl::StartsWith(name, "no")) {
      flag = absl::FindCommandLineFlag(name.substr(2));
      negative = flag != nullptr;
    }
    if (flag == nullptr) {
      if (!undefok.contains(name)) {
        fail(absl::StrCat("--", name, ": unknown flag (--help lists this program's flags)"));
      }
      continue;
    }
    const bool boolean = flag->IsOfType<bool>();
    if (negative) {
      if (!boolean) {
        fail(absl::StrCat("--", name, ": unknown flag (--", flag->Name(),
                          " is not a true/false flag, so it has no --no form)"));
      } else if (has_value) {
        fail(absl::StrCat("--", name, "=", value, ": the --no form takes no value"));
      } else if (std::string error; !flag->ParseFrom("false", &error)) {
        fail(absl::StrCat("--", name, ": ", error));
      }
      continue;
    }
    if (!has_value) {
      if (boolean) {
        value = "true";
      } else if (i + 1 < args.size() && !absl::StartsWith(args[i + 1], "--")) {
        value = args[++i];  // "--alpha 0.3" (a negative number may follow: "--kappa -1")
      } else {
        fail(absl::StrCat("--", name, " needs a value (--", name, "=VALUE)"));
        continue;
      }
    } else if (value.empty() && !flag->IsOfType<std::string>()) {
      fail(absl::StrCat("--", name, "= needs a value (--", name, "=VALUE)"));
      continue;
    }
    if (std::string error; !flag->ParseFrom(value, &error)) {
      fail(absl::StrCat("--", name, "=", value, ": ", error));
    }
  }
  return first;
}

}  // namespace

ParsedFlags ParseFlags(std::vector<char*>& args) {
  ParsedFlags out;
  out.status = CheckArguments(args);
  if (!out.status.ok()) return out;
  // Every argument checks out: Abseil's parser now finds nothing to exit for
  // but the usage flags, which it is told to leave to us.
  out.positional = absl::flags_internal::ParseCommandLineImpl(
      static_cast<int>(args.size()), args.data(),
      absl::flags_internal::ArgvListAction::kRemoveParsedArgs,
      absl::flags_internal::UsageFlagsAction::kIgnoreUsage,
      absl::flags_internal::OnUndefinedFlag::kAbortIfUndefined);
  // -1: no usage flag; 0 or 1: one was given and its text printed.
  out.exit_now =
      absl::flags_internal::HandleUsageFlags(std::cout, absl::ProgramUsageMessage()) != -1;
  std::cout.flush();
  return out;
}

}  // namespace graphsieve
