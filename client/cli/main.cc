// graphsieve: the command-line client of graphsieve-server.
//
//   graphsieve help                      the subcommands
//   graphsieve <command> --help          a subcommand's flags
//   graphsieve rates  --server H:P [--input FILE|-]
//   graphsieve status --server H:P [--json]
//   graphsieve filter --server H:P --input LOG [--output FILE]
//   graphsieve canary --baseline H:P --candidate H:P (--input FILE | --sample-from LOG)
//   graphsieve canary --baseline-snapshot DIR --candidate-snapshot DIR
//   graphsieve pin    [--server OPERATOR_ADDRESS] (--version V [--reject-active] | --unpin ...)
//
// Exit status: 0 success, 1 canary beyond a threshold, 2 error.
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/cli/commands.h"
#include "client/cli/flags.h"
#include "graphsieve/version.h"

namespace graphsieve {
namespace {

#define GS_CONNECTION \
  "deadline_seconds", "max_batch_pairs", "max_attempts", "tls_root_cert", "tls_server_name"
// The shared log-column flags (core/cli/log_flags.h), then their older spellings.
#define GS_ID_COLUMNS "user_col", "item_col", "delimiter", "id_mode", "user_column", "item_column"
#define GS_LOG_COLUMNS                                                                  \
  "dataset", "user_col", "item_col", "label_col", "label_rule", "delimiter", "id_mode", \
      "user_column", "item_column", "label"

const std::vector<Subcommand>& Commands() {
  static const auto* commands = new std::vector<Subcommand>{
      {"rates",
       "rates of (user, item) pairs -> CSV user_id,item_id,rate,source",
       "graphsieve rates --server HOST:PORT [--input FILE|-] [--output FILE|-] [--with-version]\n\n"
       "Reads pairs (CSV/TSV with a header naming the user and item columns; other columns are\n"
       "ignored) and writes CSV user_id,item_id,rate,source in input order. The ids are echoed as\n"
       "given; text ids are hashed with XXH3-64 like graphsieve-build. The snapshot version that\n"
       "answered is printed to stderr (and in a snapshot_version column with --with-version).",
       {"server", GS_CONNECTION, "input", "pairs", "output", "with_version", GS_ID_COLUMNS},
       &RunRates},
      {"status",
       "what a server serves: active snapshot, manifest summary, refresh history",
       "graphsieve status --server HOST:PORT [--json]\n\n"
       "Prints the server's GetStatus answer as a table, or as JSON (proto field names).",
       {"server", GS_CONNECTION, "json"},
       &RunStatus},
      {"filter",
       "stream an impression log through the server; write the kept rows + rate",
       "graphsieve filter --server HOST:PORT [--input LOG|-] [--output FILE|-] [column flags]\n\n"
       "Reads the log from --input (default '-': stdin). Sends it in batches with labels and\n"
       "instance keys; writes every kept row (all positives, the negatives the keep rule\n"
       "keeps) with an added last column `rate`, the\n"
       "sampling rate pi (train with log-odds offset log(pi) on kept negatives). Prints to stderr\n"
       "the kept fraction of negatives, the served mean rate over the negatives (its expectation)\n"
       "and a 4-sigma binomial bound on their difference (--json: the same as JSON).",
       {"server", GS_CONNECTION, "input", "output", GS_LOG_COLUMNS, "instance_key_column", "decide",
        "batch_rows", "json"},
       &RunFilter},
      {"canary",
       "compare a candidate's rates with a baseline's (servers or snapshot dirs)",
       "graphsieve canary --baseline HOST:PORT --candidate HOST:PORT\n"
       "                  (--input FILE | --sample-from LOG [--sample N] [--seed S]) [limits] "
       "[--json]\n"
       "graphsieve canary --baseline-snapshot ROOT[/VERSION] --candidate-snapshot ROOT[/VERSION]\n"
       "                  [--input FILE | --sample-from LOG] [limits] [--json]\n\n"
       "Both sides rate the same pairs. Reports both versions, mean/p50/p99/max |delta rate|, the\n"
       "fraction with |delta| > --delta-threshold, the expected kept fraction of negatives under\n"
       "each (the mean rate over the negative instances of --sample-from or a labelled --input\n"
       "file; over all pairs when labels are unknown), the Kolmogorov-Smirnov distance of the two\n"
       "rate distributions and the source mix (EXACT/INFERRED/DEFAULT). Offline without pairs it\n"
       "compares every pair stored in either snapshot, scored as graphsieve-server would.",
       {"baseline", "candidate", "baseline_snapshot", "candidate_snapshot", GS_CONNECTION, "input",
        "pairs", "sample_from", "sample", "seed", GS_LOG_COLUMNS, "default_policy",
        "delta_threshold", "max_mean_delta", "max_p99_delta", "max_ks", "max_fraction_over",
        "json"},
       &RunCanary},
      {"pin",
       "pin a kept snapshot version on a server (operator rollback), or unpin",
       "graphsieve pin [--server OPERATOR_ADDRESS] --version VERSION [--reject-active]\n"
       "graphsieve pin [--server OPERATOR_ADDRESS] --unpin [--reject-active]\n\n"
       "Calls PinVersion on the server's operator listener (graphsieve-server\n"
       "--operator-address; the data port refuses it with PERMISSION_DENIED). Default\n"
       "--server: unix:/tmp/graphsieve-operator-50051.sock, the listener of a server on port\n"
       "50051 on this machine (in Kubernetes: kubectl exec POD -- graphsieve pin ...).\n"
       "--version: the server loads VERSION (one it keeps on disk, see\n"
       "`graphsieve status`), serves it and stops following CURRENT; if it does not load, the\n"
       "old version keeps serving. --unpin: follow CURRENT again (from the next poll).\n"
       "--reject-active also marks the version active before the call as rolled back, so the\n"
       "refresher never re-adopts it; with --unpin the server switches to CURRENT at once.\n"
       "Prints the active and the pinned version after the call.",
       {"server", GS_CONNECTION, "version", "unpin", "reject_active"},
       &RunPin},
  };
  return *commands;
}

void PrintOverview(std::ostream& out) {
  out << "graphsieve: client of graphsieve-server (per-(user,item) sampling rates, MA-EC).\n\n"
         "Usage: graphsieve <command> [flags]\n       graphsieve <command> --help\n\nCommands:\n";
  for (const Subcommand& c : Commands())
    out << "  " << c.name << std::string(8 - strlen(c.name), ' ') << c.summary << '\n';
  out << "  help    this text, or `graphsieve help <command>`\n"
         "  version the release (also `graphsieve --version`)\n\n"
         "Exit status: 0 success, 1 canary beyond a threshold, 2 error.\n";
}

const Subcommand* Find(const std::string& name) {
  for (const Subcommand& c : Commands()) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

}  // namespace
}  // namespace graphsieve

int main(int argc, char** argv) {
  using graphsieve::kExitError;
  if (argc < 2) {
    graphsieve::PrintOverview(std::cerr);
    return kExitError;
  }
  const std::string name = argv[1];
  if (name == "--version" || name == "version") {
    std::cout << "graphsieve " << graphsieve::kGraphsieveVersion << '\n';
    return 0;
  }
  if (name == "help" || name == "--help" || name == "-h") {
    if (argc >= 3) {
      const graphsieve::Subcommand* c = graphsieve::Find(argv[2]);
      if (c == nullptr) {
        std::cerr << "graphsieve: unknown command '" << argv[2] << "'\n";
        return kExitError;
      }
      std::cout << graphsieve::SubcommandHelp(*c);
      return 0;
    }
    graphsieve::PrintOverview(std::cout);
    return 0;
  }
  const graphsieve::Subcommand* command = graphsieve::Find(name);
  if (command == nullptr) {
    std::cerr << "graphsieve: unknown command '" << name << "'\n\n";
    graphsieve::PrintOverview(std::cerr);
    return kExitError;
  }
  bool help = false;
  if (absl::Status s = graphsieve::ParseSubcommandFlags(*command, argc, argv, 2, &help); !s.ok()) {
    std::cerr << "graphsieve " << name << ": " << s.message() << '\n';
    return kExitError;
  }
  if (help) {
    std::cout << graphsieve::SubcommandHelp(*command);
    return 0;
  }
  return command->run();
}
