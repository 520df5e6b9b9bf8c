#include "client/cli/flags.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

// Connection (rates, status, filter; canary's two servers share them).
ABSL_FLAG(std::string, server, "", "gRPC target of graphsieve-server, HOST:PORT (required).");
ABSL_FLAG(double, deadline_seconds, 10.0,
          "Deadline of each RPC attempt, seconds; at most 86400 (one day).");
ABSL_FLAG(int64_t, max_batch_pairs, 50000,
          "Largest batch per GetSamplingRate; bigger inputs are split and reassembled in order. "
          "Must not exceed the server's --max_batch_pairs.");
ABSL_FLAG(int32_t, max_attempts, 5,
          "Attempts per batch; UNAVAILABLE (server down, restarting, no snapshot yet) and a "
          "draining server's CANCELLED (not for pin) are retried "
          "with jittered exponential backoff (0.1 s doubling, at most 2 s).");
ABSL_FLAG(std::string, tls_root_cert, "",
          "PEM file of the root certificate(s) to trust; empty = plaintext.");
ABSL_FLAG(std::string, tls_server_name, "",
          "Name expected in the server's certificate when it differs from HOST.");
// Pin. Abseil's usage library owns FLAGS_version (a bool), so `pin --version V`
// is stored in FLAGS_pin_version (AbslFlagName below).
ABSL_FLAG(std::string, pin_version, "",
          "pin: the kept snapshot version to serve (the refresher stops following CURRENT).");
ABSL_FLAG(bool, unpin, false, "pin: unpin instead; the server follows CURRENT again.");
ABSL_FLAG(bool, reject_active, false,
          "pin: also mark the version active before the call as rolled back, so the refresher "
          "never re-adopts it (until the server restarts). With --unpin: switch to CURRENT now.");
// Input / output.
ABSL_FLAG(std::string, input, "-",
          "rates, canary: pairs CSV/TSV with a header naming --user-col and --item-col ('-' = "
          "stdin, gzip detected; canary: a --label-col column is used when present). filter: the "
          "impression log ('-' = stdin, the default; gzip detected).");
ABSL_FLAG(std::string, output, "-", "Where CSV rows go ('-' = stdout).");
ABSL_FLAG(bool, json, false, "Print JSON instead of the human table.");
ABSL_FLAG(bool, with_version, false,
          "rates: add a snapshot_version column to every row (the version is always printed to "
          "stderr).");
// Log columns (rates, filter, canary --input / --sample_from): --dataset, --user-col,
// --item-col, --label-col, --label-rule, --delimiter, --id-mode and their aliases
// are defined once in core/cli/log_flags.cc, shared with graphsieve-build and
// graphsieve-eval.
ABSL_FLAG(std::string, instance_key_column, "",
          "filter: column holding a stable per-impression key (integer or text, hashed). Empty = "
          "XXH3-64 of '<line number>\\t<line text>', stable for the same file.");
ABSL_FLAG(std::string, decide, "server",
          "filter: who makes the keep decisions: server (labels and keys sent) or local (the "
          "client applies the snapshot's keep seed). Both give identical results.");
ABSL_FLAG(int64_t, batch_rows, 10000, "filter: log rows per request batch.");
// Canary.
ABSL_FLAG(std::string, baseline, "", "canary: baseline server HOST:PORT (production).");
ABSL_FLAG(std::string, candidate, "", "canary: candidate server HOST:PORT.");
ABSL_FLAG(std::string, baseline_snapshot, "",
          "canary offline: baseline snapshot, ROOT (its CURRENT version) or ROOT/VERSION.");
ABSL_FLAG(std::string, candidate_snapshot, "",
          "canary offline: candidate snapshot, ROOT or ROOT/VERSION.");
ABSL_FLAG(std::string, pairs, "", "rates, canary: alias of --input (older spelling of canary).");
ABSL_FLAG(std::string, sample_from, "",
          "canary: an impression log to sample instances from (read like graphsieve-build).");
ABSL_FLAG(int64_t, sample, 10000,
          "canary: instances drawn uniformly without replacement from --sample_from (all when "
          "the log is smaller).");
ABSL_FLAG(uint64_t, seed, 1, "canary: seed of the --sample_from draw.");
ABSL_FLAG(std::string, default_policy, "node-mean",
          "canary offline: rate of pairs with an unknown user or item, as graphsieve-server's "
          "--default_policy: node-mean, alpha, model, positive-rate (node-mean on a snapshot "
          "without the per-node fit), or a number in (0, 1].");
ABSL_FLAG(double, delta_threshold, 0.05,
          "canary: |candidate - baseline| rate above this counts toward --max_fraction_over.");
ABSL_FLAG(double, max_mean_delta, 0.01, "canary: limit on mean |delta rate| (negative = off).");
ABSL_FLAG(double, max_p99_delta, 0.05, "canary: limit on p99 |delta rate| (negative = off).");
ABSL_FLAG(double, max_ks, 0.05,
          "canary: limit on the Kolmogorov-Smirnov distance of the two rate distributions "
          "(negative = off).");
ABSL_FLAG(double, max_fraction_over, 0.01,
          "canary: limit on the fraction of pairs with |delta rate| > --delta_threshold "
          "(negative = off).");

namespace graphsieve {
namespace {

std::string Dashed(std::string_view name) {
  return absl::StrReplaceAll(absl::string_view(name.data(), name.size()), {{"_", "-"}});
}

// The Abseil flag behind a CLI flag name (the same but for pin's --version).
std::string AbslFlagName(const std::string& name) {
  return name == "version" ? "pin_version" : name;
}

// Flags and their older spellings (primary, alias), underscore names.
constexpr std::pair<const char*, const char*> kAliases[] = {{"user_col", "user_column"},
                                                            {"item_col", "item_column"},
                                                            {"label_col", "label"},
                                                            {"input", "pairs"}};

// The flags ParseSubcommandFlags saw (underscore names), for FlagGiven.
std::set<std::string>& GivenFlags() {
  static auto* given = new std::set<std::string>();
  return *given;
}

bool Accepts(const Subcommand& command, const std::string& name) {
  return std::any_of(command.flags.begin(), command.flags.end(),
                     [&](const char* f) { return name == f; });
}

}  // namespace

absl::Status ParseSubcommandFlags(const Subcommand& command, int argc, char** argv, int first,
                                  bool* help) {
  *help = false;
  GivenFlags().clear();
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h" || arg == "-help" || arg == "--helpfull") {
      *help = true;
      continue;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected argument '", arg, "' for 'graphsieve ", command.name,
                       "' (all inputs are flags; see graphsieve ", command.name, " --help)"));
    }
    arg = arg.substr(arg[1] == '-' ? 2 : 1);
    std::string name = arg, value;
    bool has_value = false;
    if (const size_t eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    name = absl::StrReplaceAll(name, {{"-", "_"}});
    bool negated = false;
    if (!Accepts(command, name) && !has_value) {
      for (const char* prefix : {"no_", "no"}) {
        if (name.rfind(prefix, 0) == 0 && Accepts(command, name.substr(strlen(prefix)))) {
          name = name.substr(strlen(prefix));
          negated = true;
          break;
        }
      }
    }
    if (!Accepts(command, name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag --", Dashed(name), " for 'graphsieve ", command.name,
                       "' (see graphsieve ", command.name, " --help)"));
    }
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(AbslFlagName(name));
    if (flag == nullptr)
      return absl::InternalError(absl::StrCat("flag --", name, " is not defined"));
    const bool is_bool = flag->IsOfType<bool>();
    if (negated) {
      if (!is_bool) {
        return absl::InvalidArgumentError(
            absl::StrCat("--no", Dashed(name), ": --", Dashed(name), " is not a boolean flag"));
      }
      value = "false";
    } else if (!has_value) {
      if (is_bool) {
        value = "true";
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        return absl::InvalidArgumentError(absl::StrCat("flag --", Dashed(name), " needs a value"));
      }
    }
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      return absl::InvalidArgumentError(
          absl::StrCat("flag --", Dashed(name), "='", value, "': ", error));
    }
    GivenFlags().insert(name);
  }
  // A flag and its alias both given and different is an error even when one
  // is at its default value (checking only "differs from the default" would
  // let --user-col user_id --user-column foo read foo).
  for (const auto& [primary, alias] : kAliases) {
    if (!FlagGiven(primary) || !FlagGiven(alias)) continue;
    const absl::CommandLineFlag* p = absl::FindCommandLineFlag(primary);
    const absl::CommandLineFlag* q = absl::FindCommandLineFlag(alias);
    if (p == nullptr || q == nullptr) continue;
    const std::string a = p->CurrentValue(), b = q->CurrentValue();
    if (a != b) {
      return absl::InvalidArgumentError(absl::StrCat("--", Dashed(primary), "='", a,
                                                     "' and its alias --", Dashed(alias), "='", b,
                                                     "' disagree; give one"));
    }
  }
  return absl::OkStatus();
}

bool FlagGiven(std::string_view name) { return GivenFlags().count(std::string(name)) > 0; }

std::string SubcommandHelp(const Subcommand& command) {
  std::string out = absl::StrCat(command.usage, "\n\nFlags:\n");
  for (const char* name : command.flags) {
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(AbslFlagName(name));
    if (flag == nullptr) continue;
    std::string def = flag->DefaultValue();
    std::string help = flag->Help();
    if (std::string_view(command.name) == "pin" && std::string_view(name) == "server") {
      // pin has a default target (RunPin), the others none.
      def = "unix:/tmp/graphsieve-operator-50051.sock";
      help = "The server's operator listener (graphsieve-server --operator-address).";
    }
    absl::StrAppend(&out, "  --", Dashed(name),
                    def.empty() ? "" : absl::StrCat("  (default: ", def, ")"), "\n      ", help,
                    "\n");
  }
  const std::string_view name = command.name;
  if (name == "pin") {
    absl::StrAppend(&out,
                    "\nExit status: 0 done, 2 error (bad flags, or the PinVersion call failed: "
                    "its gRPC code and message are printed).\n");
  } else {
    absl::StrAppend(&out, "\nExit status: 0 success",
                    name == "canary" ? ", 1 beyond a threshold" : "",
                    ", 2 error (bad flag or input, server unreachable).\n");
  }
  return out;
}

}  // namespace graphsieve
