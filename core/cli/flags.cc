#include "core/cli/flags.h"

#include <algorithm>
#include <utility>

#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"

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

}  // namespace graphsieve
