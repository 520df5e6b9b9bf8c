#include "core/cli/flags.h"

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <fstream>
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
#include "absl/strings/strip.h"

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

// --undefok excuses unknown flags: Abseil reads it too.
bool IsGeneratorFlag(absl::string_view name) { return name == "undefok"; }

// The flags that read more flags from files or the environment: expanded here
// (ExpandFlagSources), never seen by Abseil, whose errors there end the process.
bool IsSourceFlag(absl::string_view name) {
  return name == "flagfile" || name == "fromenv" || name == "tryfromenv";
}

// Where the arguments ParseFlags checks come from: the command line's own
// (pointers into the caller's argv) and the lines of flag files and
// environment variables (kept in `storage`).
struct ExpandedArgs {
  std::vector<char*> args;
  std::deque<std::string> storage;  // stable addresses for `args`

  void AddOwned(std::string arg) {
    storage.push_back(std::move(arg));
    args.push_back(storage.back().data());
  }
};

constexpr int kMaxFlagfileDepth = 10;

absl::Status ExpandFlagfile(const std::string& path, int depth, ExpandedArgs* out);

// One source flag's value: --flagfile=a,b reads the files in turn;
// --fromenv=x,y / --tryfromenv=x,y read FLAGS_x, FLAGS_y (a missing variable
// is an error for --fromenv only), as Abseil does.
absl::Status ExpandSource(absl::string_view name, absl::string_view value, int depth,
                          ExpandedArgs* out) {
  if (value.empty()) return absl::InvalidArgumentError(absl::StrCat("--", name, " needs a value"));
  for (absl::string_view item : absl::StrSplit(value, ',', absl::SkipEmpty())) {
    if (name == "flagfile") {
      if (absl::Status st = ExpandFlagfile(std::string(item), depth + 1, out); !st.ok()) return st;
      continue;
    }
    const std::string var = absl::StrCat("FLAGS_", item);
    const char* env = std::getenv(var.c_str());
    if (env == nullptr) {
      if (name == "tryfromenv") continue;
      return absl::InvalidArgumentError(
          absl::StrCat("--fromenv=", value, ": environment variable ", var, " is not set"));
    }
    out->AddOwned(absl::StrCat("--", item, "=", env));
  }
  return absl::OkStatus();
}

// A flag file as Abseil reads one: one argument a line, leading and trailing
// blanks dropped, blank lines and lines starting with '#' skipped; every other
// line must be a flag. Names may be spelled with '-' as on the command line.
absl::Status ExpandFlagfile(const std::string& path, int depth, ExpandedArgs* out) {
  if (depth > kMaxFlagfileDepth) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--flagfile=", path, ": flag files nested more than ", kMaxFlagfileDepth, " deep"));
  }
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("--flagfile=", path, ": cannot read"));
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    const absl::string_view text = absl::StripAsciiWhitespace(line);
    if (text.empty() || text[0] == '#') continue;
    if (text[0] != '-' || text == "-" || text == "--") {
      return absl::InvalidArgumentError(
          absl::StrCat("--flagfile=", path, " line ", line_no, ": '", text,
                       "' is not a flag (a flag file holds one --name=value a line)"));
    }
    std::string program, line_arg(text);
    char* one[] = {program.data(), line_arg.data()};
    std::string arg = NormaliseFlagNames(2, one)[1];
    absl::string_view flag = arg;
    absl::ConsumePrefix(&flag, "-");
    absl::ConsumePrefix(&flag, "-");
    const size_t eq = flag.find('=');
    const absl::string_view name = flag.substr(0, eq);
    if (IsSourceFlag(name)) {
      if (eq == absl::string_view::npos) {
        return absl::InvalidArgumentError(
            absl::StrCat("--flagfile=", path, " line ", line_no, ": --", name, " needs =VALUE"));
      }
      if (absl::Status st = ExpandSource(name, flag.substr(eq + 1), depth, out); !st.ok()) {
        return st;
      }
      continue;
    }
    out->AddOwned(std::move(arg));
  }
  if (in.bad())
    return absl::InvalidArgumentError(absl::StrCat("--flagfile=", path, ": read error"));
  return absl::OkStatus();
}

// The command line with every --flagfile, --fromenv and --tryfromenv replaced
// by the flags it names; the first error names the source (file and line).
absl::Status ExpandFlagSources(const std::vector<char*>& args, ExpandedArgs* out) {
  for (size_t i = 0; i < args.size(); ++i) {
    absl::string_view arg = args[i];
    absl::string_view flag = arg;
    const bool is_flag = i > 0 && absl::ConsumePrefix(&flag, "-") && !flag.empty();
    if (is_flag && flag == "-") {  // "--": the rest is positional
      out->args.insert(out->args.end(), args.begin() + i, args.end());
      break;
    }
    if (is_flag) absl::ConsumePrefix(&flag, "-");
    const size_t eq = flag.find('=');
    if (is_flag && IsSourceFlag(flag.substr(0, eq))) {
      const absl::string_view name = flag.substr(0, eq);
      absl::string_view value;
      if (eq != absl::string_view::npos) {
        value = flag.substr(eq + 1);
      } else if (i + 1 < args.size()) {
        value = args[++i];
      }
      if (absl::Status st = ExpandSource(name, value, /*depth=*/0, out); !st.ok()) return st;
      continue;
    }
    out->args.push_back(args[i]);
  }
  return absl::OkStatus();
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
  ExpandedArgs expanded;
  out.status = ExpandFlagSources(args, &expanded);
  if (!out.status.ok()) return out;
  out.status = CheckArguments(expanded.args);
  if (!out.status.ok()) return out;
  // Every argument checks out: Abseil's parser now finds nothing to exit for
  // but the usage flags, which it is told to leave to us. The positional
  // arguments it returns are the caller's (flag files hold only flags).
  out.positional = absl::flags_internal::ParseCommandLineImpl(
      static_cast<int>(expanded.args.size()), expanded.args.data(),
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
