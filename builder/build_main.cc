// graphsieve-build's main (build_main.h): impression log(s) → validated,
// atomically published snapshot. See --help and docs/SNAPSHOT.md.
//
// Exit codes: 0 published (or dry run passed; --help, --version), 1 runtime
// error (input, snapshot root, I/O, solver), 2 bad flags (unknown, ill-typed
// or invalid), 3 a validation gate failed (nothing published).
#include "builder/build_main.h"

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/flag.h"
#include "absl/flags/internal/parse.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/offline/build_job.h"
#include "core/offline/delta_build.h"
#if GRAPHSIEVE_HAVE_MPI
#include "core/distributed/mpi_communicator.h"
#endif
#include "builder/progress.h"
#include "core/cli/flags.h"
#include "core/cli/log_flags.h"
#include "core/io/output_file.h"
#include "graphsieve/version.h"

// Input.
ABSL_FLAG(std::string, input, "",
          "Impression log file(s), comma-separated; read in order and concatenated. CSV/TSV with "
          "a header (delimiter detected unless --delimiter), gzip detected from the bytes.");
// The log-column flags (--dataset, --user-col, --item-col, --label-col, --label-rule,
// --pilot-col, --delimiter, --id-mode) are defined in core/cli/log_flags.cc.
ABSL_FLAG(int64_t, max_bad_rows, 0,
          "Malformed rows that may be skipped (and counted) before the build fails, over the "
          "whole log: every --input file, and every rank under mpirun.");
// Method.
ABSL_FLAG(std::string, method, "maec",
          "Rates from: maec (graph, default) | uniform | opt (pilot) | max | mean | product "
          "(ensembles).");
ABSL_FLAG(double, alpha, 0.2,
          absl::StrCat("Target mean sampling rate over negative instances, in [",
                       graphsieve::kMinAlpha, ", 1]."));
// Defaults: MA-EC with propagation (γ 0.5), counterfactual positives and the
// mixture rule with κ = 0.1 — chosen on evidence, docs/EVALUATION.md "Verdict"
// (best worst case over MovieLens and a preference-driven log, in today's and
// the deployed mode). The mixture rule reaches every alpha on every log; the
// floor rule (--rate-rule=floor) can make alpha unreachable on sparse logs.
ABSL_FLAG(double, floor, 0.01, "Floor rule: the lowest rate, in [0, --alpha).");
ABSL_FLAG(double, product_floor, 0.01, "Floor of the product ensemble.");
ABSL_FLAG(
    std::string, rate_rule, "mixture",
    "How scores become rates: floor (min(max(rho*s, floor), 1); alpha can be unreachable) | "
    "mixture (min(1, rho*(s/mean + kappa)); reaches every alpha). docs/METHOD.md \"Rate rules\".");
ABSL_FLAG(double, kappa, 1, "Mixture rule: uniform share of the MA-EC score, > 0.");
ABSL_FLAG(double, pilot_kappa, -1,
          "Mixture rule: uniform share of the pilot score; < 0 = --kappa.");
// The built-in pilot (docs/METHOD.md "The built-in pilot"): fitted when a
// pilot-based --method has no --pilot_col.
ABSL_FLAG(int32_t, pilot_folds, 5,
          "Built-in pilot: cross-fitting folds of the pairs, in [2, 64] (each pair is scored by "
          "the model fitted without its fold).");
ABSL_FLAG(int32_t, pilot_dim, 16, "Built-in pilot: embedding dimension, in [1, 256].");
ABSL_FLAG(int32_t, pilot_epochs, 8, "Built-in pilot: passes over the pairs, in [1, 1000].");
ABSL_FLAG(double, pilot_learning_rate, 0.05, "Built-in pilot: Adagrad step size, in (0, 10].");
ABSL_FLAG(double, pilot_l2, 1.0, "Built-in pilot: L2 weight per epoch, in [0, 1e6].");
ABSL_FLAG(double, pilot_negative_rate, 0,
          "Built-in pilot: share of the all-negative pairs it trains on (at weight 1/rate; pairs "
          "with a positive always), in [0, 1]; 0 = auto: all of up to 1e6 such pairs, 1e6 of "
          "more, at least a tenth.");
ABSL_FLAG(double, product_kappa, 0.25,
          "Mixture rule: uniform share of the product ensemble's refit.");
ABSL_FLAG(double, score_power, 1.0,
          "Rates from t = s^beta of the MA-EC score, beta in (0, 4]; 1 = the score itself "
          "(docs/METHOD.md \"Rate rules\", measured in docs/EVALUATION.md \"Second round\").");
ABSL_FLAG(double, exposure_power, 0.0,
          "Exposure discount eta in [0, 2]: rates from t / n_i^eta, n_i = the item's impressions "
          "in the log, so that an item's negatives are not kept more often because the log shows "
          "it more; 0 = off (docs/METHOD.md \"Exposure discount\", docs/eval/QUALITY.md).");
ABSL_FLAG(double, gamma, 0.5, "Propagation weight, in [0, 1).");
ABSL_FLAG(bool, uncertainty_propagation, true,
          "Smooth the uncertainty |Y − Z| over neighbouring pairs (paper §4.2).");
ABSL_FLAG(bool, score_propagation, true, "Propagate the corrected score (paper §4.2).");
ABSL_FLAG(bool, symmetric, false,
          "Use the symmetric D^-1/2 A D^-1/2 operator instead of the edge rule.");
ABSL_FLAG(bool, correct_pilot, false,
          "Apply uncertainty/score propagation to the pilot score before combining.");
ABSL_FLAG(double, propagation_tolerance, 1e-6, "Stop propagation when max |change| is below this.");
ABSL_FLAG(int32_t, propagation_max_iterations, 100, "Propagation iteration cap.");
ABSL_FLAG(std::string, resistance, "auto",
          "Effective resistance: auto | exact (dense) | sketch (random projection) | one-sided "
          "(exact, solves on the smaller side).");
ABSL_FLAG(int32_t, sketch_dim, 64,
          "Sketch dimension k, in [1, 4096] (random projections; also the per-node rows kept for "
          "unseen pairs).");
ABSL_FLAG(bool, unseen_control_variate, true,
          "Store control-variate node rows for unseen pairs (sketch_dim + 2 floats, docs/METHOD.md "
          "\"Unseen pairs\"); false = the plain sketch rows (for measurement).");
ABSL_FLAG(double, solver_tolerance, 1e-6, "Relative residual every CG solve must reach.");
ABSL_FLAG(int32_t, solver_max_iterations, 1000,
          "CG iteration cap; a solve that hits it fails the build.");
ABSL_FLAG(uint64_t, seed, 42,
          "Seed of all randomness (same input + seed → same rates); also the keep-decision seed "
          "recorded in the manifest.");
ABSL_FLAG(int32_t, threads, 2, "Worker threads.");
// Output.
ABSL_FLAG(std::string, snapshot_root, "",
          "Directory of published snapshots (CURRENT, <version>/, pins/). Created if missing.");
ABSL_FLAG(
    int32_t, keep, 5,
    "Retention: keep the newest N versions (the CURRENT one and pinned ones are never deleted).");
ABSL_FLAG(std::string, table_format, "block",
          "Pairs table layout: block (block-based, bloom + hash index; fast to write and to scan "
          "into graphsieve-server's in-memory index) | cuckoo (RocksDB's fastest point reads, for "
          "graphsieve-server --lookup=rocksdb; about 20 s slower to build at 12M pairs).");
ABSL_FLAG(int32_t, partitions, 0,
          "Write the version in N parts split by a hash of the user (core/io/partition.h), "
          "<version>/part-<I>/ each served by graphsieve-server --partition I; 1 = one "
          "unpartitioned version. 0 (default): 1 for a full build; with --delta_of the base's "
          "part count (any other value must equal it).");
ABSL_FLAG(std::string, export, "",
          "Also write FILE.csv: user_id,item_id,label,instances,geff,hardness,score,rate (one row "
          "per pair, ids as in the input). Full builds only (refused with --delta_of).");
ABSL_FLAG(bool, dry_run, false,
          "Read, compute, check the gates (and --export) but publish nothing; with --delta_of: "
          "check the base, compute the delta, publish nothing.");
ABSL_FLAG(double, lock_timeout_seconds, 0,
          "Wait this long for another publisher on the same root (default: fail at once).");
ABSL_FLAG(bool, quiet, false, "No progress and no human summary (errors still go to stderr).");
ABSL_FLAG(bool, json, false,
          "Print one JSON summary object on stdout (for schedulers), also on failure.");

// Delta versions (docs/DESIGN.md "Delta versions").
ABSL_FLAG(std::string, delta_of, "",
          "Build a delta version over this published full version (a version id, or CURRENT; a "
          "delta resolves to its base) from --input = every log since that version. The method "
          "flags must match the base's. Empty = a full build.");
ABSL_FLAG(bool, rule_from_base, false,
          "With --delta_of: every result-affecting flag the delta must share with its base "
          "(method, alpha, rate rule, kappa, exposure_power, seed, columns, ...) that is not "
          "given on the command line or in a --flagfile takes the base's value from its "
          "manifest, and without --tune_* flags the delta's manifest carries the base's tune "
          "provenance; a flag given explicitly must still match. So deltas keep running over a "
          "base built with an earlier rule until the next full build.");
// Provenance (graphsieve-eval tune writes these into its flag file, rule.flags).
ABSL_FLAG(std::string, tune_rule, "",
          "The rule graphsieve-eval tune chose (its flag file sets it): recorded in the "
          "manifest's \"tune\" object and shown by graphsieve status; changes no rate.");
ABSL_FLAG(std::string, tune_date, "", "When the tune ran (RFC 3339 UTC; from its flag file).");
ABSL_FLAG(std::string, tune_report_digest, "",
          "Digest of the tune's JSON report, xxh3:<16 hex> (from its flag file).");
ABSL_FLAG(int32_t, delta_sweeps, 3,
          "Delta builds: Jacobi sweeps of the harmonic extension over the touched nodes' rows.");

namespace graphsieve {
namespace {

constexpr int kExitError = 1, kExitUsage = 2, kExitGate = 3;

absl::Status Prefixed(absl::string_view flag, const absl::Status& s) {
  return absl::InvalidArgumentError(absl::StrCat("--", flag, ": ", s.message()));
}

// The options as the flags spell them, not yet validated: Main validates them
// as BuildOptions (a full build) or as DeltaBuildOptions (--delta_of).
absl::StatusOr<BuildOptions> OptionsFromFlags() {
  BuildOptions o;
  for (absl::string_view f : absl::StrSplit(absl::GetFlag(FLAGS_input), ',')) {
    if (!f.empty()) o.inputs.emplace_back(f);
  }
  absl::StatusOr<LogReaderOptions> reader =
      LogReaderOptionsFromFlags(LogReaderOptions(), /*read_pilot=*/true);
  if (!reader.ok()) return reader.status();
  LogReaderOptions& r = o.reader;
  r = *std::move(reader);
  r.max_bad_rows = absl::GetFlag(FLAGS_max_bad_rows);
  r.keep_id_names = !absl::GetFlag(FLAGS_export).empty();

  PipelineOptions& p = o.pipeline;
  auto method = ParseMethod(absl::GetFlag(FLAGS_method));
  if (!method.ok()) return Prefixed("method", method.status());
  p.method = *method;
  auto resistance = ParseResistanceMethod(absl::GetFlag(FLAGS_resistance));
  if (!resistance.ok()) return Prefixed("resistance", resistance.status());
  p.resistance = *resistance;
  p.alpha = absl::GetFlag(FLAGS_alpha);
  p.floor = absl::GetFlag(FLAGS_floor);
  p.product_floor = absl::GetFlag(FLAGS_product_floor);
  auto rate_rule = ParseRateRule(absl::GetFlag(FLAGS_rate_rule));
  if (!rate_rule.ok()) return Prefixed("rate_rule", rate_rule.status());
  p.rate_rule = *rate_rule;
  p.kappa = absl::GetFlag(FLAGS_kappa);
  if (std::isnan(absl::GetFlag(FLAGS_pilot_kappa))) {  // < 0 means --kappa; NaN means a typo
    return absl::InvalidArgumentError("--pilot_kappa must be a number (< 0: --kappa), got nan");
  }
  if (absl::GetFlag(FLAGS_pilot_kappa) >= 0) p.pilot_kappa = absl::GetFlag(FLAGS_pilot_kappa);
  p.product_kappa = absl::GetFlag(FLAGS_product_kappa);
  p.gamma = absl::GetFlag(FLAGS_gamma);
  p.score_power = absl::GetFlag(FLAGS_score_power);
  p.exposure_power = absl::GetFlag(FLAGS_exposure_power);
  p.uncertainty_propagation = absl::GetFlag(FLAGS_uncertainty_propagation);
  p.score_propagation = absl::GetFlag(FLAGS_score_propagation);
  p.symmetric_normalisation = absl::GetFlag(FLAGS_symmetric);
  p.correct_pilot = absl::GetFlag(FLAGS_correct_pilot);
  p.propagation_tolerance = absl::GetFlag(FLAGS_propagation_tolerance);
  p.propagation_max_iterations = absl::GetFlag(FLAGS_propagation_max_iterations);
  p.sketch_dim = absl::GetFlag(FLAGS_sketch_dim);
  p.unseen_control_variate = absl::GetFlag(FLAGS_unseen_control_variate);
  p.solver_tolerance = absl::GetFlag(FLAGS_solver_tolerance);
  p.solver_max_iterations = absl::GetFlag(FLAGS_solver_max_iterations);
  p.seed = absl::GetFlag(FLAGS_seed);
  p.threads = absl::GetFlag(FLAGS_threads);
  o.pilot.folds = absl::GetFlag(FLAGS_pilot_folds);
  o.pilot.dim = absl::GetFlag(FLAGS_pilot_dim);
  o.pilot.epochs = absl::GetFlag(FLAGS_pilot_epochs);
  o.pilot.learning_rate = absl::GetFlag(FLAGS_pilot_learning_rate);
  o.pilot.l2 = absl::GetFlag(FLAGS_pilot_l2);
  o.pilot.negative_rate = absl::GetFlag(FLAGS_pilot_negative_rate);

  o.snapshot_root = absl::GetFlag(FLAGS_snapshot_root);
  o.keep_versions = absl::GetFlag(FLAGS_keep);
  auto format = snapshot::ParseTableFormat(absl::GetFlag(FLAGS_table_format));
  if (!format.ok()) return Prefixed("table_format", format.status());
  o.pairs_format = *format;
  o.partitions = absl::GetFlag(FLAGS_partitions) == 0 ? 1 : absl::GetFlag(FLAGS_partitions);
  o.export_csv = absl::GetFlag(FLAGS_export);
  if (!o.export_csv.empty()) {
    // Before the log is read: a directory or a missing one, or one of the
    // inputs, is refused now rather than after the whole computation.
    absl::StatusOr<OutputFile> out = OutputFile::Resolve(o.export_csv, "--export");
    if (!out.ok()) return out.status();
    for (const std::string& input : o.inputs) {
      if (absl::Status s = RefuseOutputOverInput(o.export_csv, "--export", input, "--input");
          !s.ok()) {
        return s;
      }
    }
  }
  o.dry_run = absl::GetFlag(FLAGS_dry_run);
  o.lock_timeout_seconds = absl::GetFlag(FLAGS_lock_timeout_seconds);
  o.tune_rule = absl::GetFlag(FLAGS_tune_rule);
  o.tune_date = absl::GetFlag(FLAGS_tune_date);
  o.tune_report_digest = absl::GetFlag(FLAGS_tune_report_digest);
  return o;
}

// Rows skipped under --max_bad_rows, and why the first few were (the
// reader's messages name file and line).
void PrintBadRows(uint64_t skipped, int64_t limit, const std::vector<std::string>& examples) {
  if (skipped == 0) return;
  constexpr size_t kShown = 5;
  std::fprintf(stderr, "  skipped %llu malformed row%s (--max_bad_rows=%lld)%s\n",
               (unsigned long long)skipped, skipped == 1 ? "" : "s", (long long)limit,
               examples.empty() ? "" : (skipped == 1 ? ":" : "; the first:"));
  for (size_t i = 0; i < examples.size() && i < kShown; ++i) {
    std::fprintf(stderr, "    %s\n", examples[i].c_str());
  }
  if (skipped > std::min<uint64_t>(examples.size(), kShown)) {
    std::fprintf(stderr, "    ... (%llu more)\n",
                 (unsigned long long)(skipped - std::min<uint64_t>(examples.size(), kShown)));
  }
}

void PrintSummary(const BuildOptions& o, const BuildReport& r, double total_seconds) {
  if (r.published) {
    std::fprintf(stderr, "graphsieve-build: published %s (now CURRENT) in %s\n", r.version.c_str(),
                 o.snapshot_root.c_str());
  } else {
    std::fprintf(stderr, "graphsieve-build: dry run passed every gate; nothing published\n");
  }
  std::fprintf(stderr,
               "  instances %llu (%llu negative), pairs %llu (%llu positive), users %llu, items "
               "%llu, components %llu\n",
               (unsigned long long)r.instances, (unsigned long long)r.negative_instances,
               (unsigned long long)r.pairs, (unsigned long long)r.positive_pairs,
               (unsigned long long)r.users, (unsigned long long)r.items,
               (unsigned long long)r.components);
  PrintBadRows(r.bad_rows_skipped, o.reader.max_bad_rows, r.bad_row_examples);
  std::fprintf(stderr,
               "  method %s, mean rate over negatives %.9f (alpha %g), resistance route %s\n",
               MethodName(o.pipeline.method), r.achieved_negative_mean_rate, o.pipeline.alpha,
               r.resistance_route.empty() ? "-" : r.resistance_route.c_str());
  if (r.published) {
    std::fprintf(stderr, "  snapshot %.1f MB on disk, %.2f bytes/pair, pairs table %s\n",
                 r.db_bytes / 1e6, r.db_bytes_per_pair, snapshot::TableFormatName(o.pairs_format));
  }
  std::vector<std::string> stages;
  for (const StageTiming& t : r.timings)
    stages.push_back(absl::StrFormat("%s %.2fs", t.stage, t.seconds));
  std::fprintf(stderr, "  stages: %s; total %.2fs; peak RSS %.2f GiB\n",
               absl::StrJoin(stages, ", ").c_str(), total_seconds,
               PeakRssBytes() / double(1ull << 30));
  if (!r.deleted_versions.empty()) {
    std::fprintf(stderr, "  retention deleted: %s\n",
                 absl::StrJoin(r.deleted_versions, ", ").c_str());
  }
  for (const std::string& w : r.warnings) std::fprintf(stderr, "  warning: %s\n", w.c_str());
}

void PrintJson(const absl::Status& status, const BuildReport* report, double total_seconds) {
  nlohmann::json j = report != nullptr ? report->ToJson() : nlohmann::json::object();
  j["ok"] = status.ok();
  if (!status.ok()) {
    j["error"] = {{"code", absl::StatusCodeToString(status.code())},
                  {"message", std::string(status.message())}};
  }
  j["total_seconds"] = total_seconds;
  j["peak_rss_bytes"] = PeakRssBytes();
  std::printf("%s\n", j.dump().c_str());
  std::fflush(stdout);
}

// A failed gate (the message starts with "gate ", after the "rank R: " a
// distributed build puts first) exits 3; any other error 1.
int ExitCodeOf(const absl::Status& s) {
  absl::string_view m = s.message();
  if (absl::StartsWith(m, "rank ")) {
    const size_t colon = m.find(": ");
    if (colon != absl::string_view::npos) m.remove_prefix(colon + 2);
  }
  return absl::StartsWith(m, "gate ") ? kExitGate : kExitError;
}

// Rank 0 prints one line per rank: the distributed build's resources.
void PrintRanks(const BuildReport& r) {
  for (const nlohmann::json& k : r.ranks) {
    std::fprintf(stderr, "  rank %d: %llu pairs, wall %.2fs, cpu %.2fs, peak RSS %.2f GiB\n",
                 k["rank"].get<int>(), (unsigned long long)k["pairs"].get<uint64_t>(),
                 k["wall_seconds"].get<double>(), k["cpu_seconds"].get<double>(),
                 k["peak_rss_bytes"].get<uint64_t>() / double(1ull << 30));
  }
}

// --threads above the CPUs this process may run on (its affinity mask) share
// them: mpirun binds each rank to one core by default (Open MPI), which halved
// the np = 1 build's speed (docs/SCALING.md). Said on stderr by every rank it
// concerns, even with --quiet; the build goes on.
void WarnIfThreadsExceedCpus(int threads, const Communicator* comm) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return;
  const int cpus = CPU_COUNT(&set);
  if (threads <= cpus) return;
  std::fprintf(stderr,
               "graphsieve-build:%s warning: --threads=%d but this process may run on %d CPU%s "
               "only (its CPU affinity), so the threads share %s. Under mpirun add "
               "'--bind-to none' (or '--map-by slot:PE=%d'); otherwise lower --threads.\n",
               comm == nullptr ? "" : absl::StrCat(" rank ", comm->rank(), ":").c_str(), threads,
               cpus, cpus == 1 ? "" : "s", cpus == 1 ? "it" : "them", threads);
}

// Flags that also set a --rule_from_base flag's value (aliases, log_flags.cc):
// one of them given counts as the flag given.
bool GivenExplicitly(absl::string_view flag) {
  static constexpr std::pair<absl::string_view, absl::string_view> kAlias[] = {
      {"user_col", "user_column"}, {"item_col", "item_column"}, {"pilot_col", "pilot_column"},
      {"label", "label_col"},      {"label", "label_rule"},
  };
  if (absl::flags_internal::WasPresentOnCommandLine(flag)) return true;
  for (const auto& [name, alias] : kAlias) {
    if (name == flag && absl::flags_internal::WasPresentOnCommandLine(alias)) return true;
  }
  return false;
}

// --rule_from_base: each parameter a delta must share with its base whose
// flag was not given takes the base's value (core/offline/delta_build.h), so
// that the delta is built with the base's rule; a flag given is left as it is
// (RunDeltaBuild still checks it against the base).
absl::Status TakeRuleFromBase() {
  absl::StatusOr<nlohmann::json> manifest =
      ReadDeltaBaseManifest(absl::GetFlag(FLAGS_snapshot_root), absl::GetFlag(FLAGS_delta_of));
  if (!manifest.ok()) return manifest.status();
  const nlohmann::json params = manifest->value("parameters", nlohmann::json::object());
  for (const DeltaParameter& p : DeltaMustMatchParameters()) {
    if (p.flag == nullptr || !params.contains(p.key) || GivenExplicitly(p.flag)) continue;
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(p.flag);
    if (flag == nullptr) return absl::InternalError(absl::StrCat("no flag --", p.flag));
    const std::string value = FlagValueText(params.at(p.key));
    if (std::string error; !flag->ParseFrom(value, &error)) {
      return absl::FailedPreconditionError(absl::StrCat("--rule_from_base: the base's parameter ",
                                                        p.key, "=", value, " is not a value of --",
                                                        p.flag, ": ", error));
    }
  }
  return absl::OkStatus();
}

// --delta_of: one process, the delta build (core/offline/delta_build.h).
template <typename Seconds>
int DeltaMain(const BuildOptions& build, bool json, bool quiet, Seconds seconds,
              const ObserverWrap& wrap) {
  DeltaBuildOptions o;
  o.build = build;
  o.base = absl::GetFlag(FLAGS_delta_of);
  o.sweeps = absl::GetFlag(FLAGS_delta_sweeps);
  o.partitions = absl::GetFlag(FLAGS_partitions);  // 0: the base's
  o.tune_from_base = absl::GetFlag(FLAGS_rule_from_base);
  if (absl::Status s = o.Validate(); !s.ok()) {
    std::fprintf(stderr, "graphsieve-build: %s\n", std::string(s.message()).c_str());
    if (json) PrintJson(s, nullptr, 0);
    return kExitUsage;
  }
  StderrProgress progress(quiet, ::isatty(STDERR_FILENO) == 1);
  absl::StatusOr<DeltaReport> r =
      RunDeltaBuild(o, wrap ? wrap(progress.Observer(), 0) : progress.Observer());
  if (!r.ok()) {
    const absl::Status s = ExplainLogReadError(r.status());
    std::fprintf(stderr, "graphsieve-build: %s: %s\n", absl::StatusCodeToString(s.code()).c_str(),
                 std::string(s.message()).c_str());
    std::fprintf(stderr, "graphsieve-build: nothing published\n");
    if (json) PrintJson(s, nullptr, seconds());
    return ExitCodeOf(s);
  }
  if (!quiet) {
    const std::string parts =
        r->partitions > 1 ? absl::StrCat(" in ", r->partitions, " parts") : "";
    const std::string what = r->published
                                 ? absl::StrCat("published delta ", r->version, " over ",
                                                r->base_version, parts, " (now CURRENT)")
                                 : absl::StrCat("dry run: delta over ", r->base_version, parts,
                                                " computed and checked; nothing published");
    std::fprintf(stderr,
                 "graphsieve-build: %s; %llu pairs, %llu new users, %llu new items, covers "
                 "through %s; total %.2fs\n",
                 what.c_str(), (unsigned long long)r->pairs, (unsigned long long)r->new_users,
                 (unsigned long long)r->new_items, r->covers_through.c_str(), seconds());
    PrintBadRows(r->bad_rows_skipped, build.reader.max_bad_rows, r->bad_row_examples);
  }
  if (json) {
    nlohmann::json j = r->ToJson();
    j["ok"] = true;
    j["total_seconds"] = seconds();
    j["peak_rss_bytes"] = PeakRssBytes();
    std::printf("%s\n", j.dump().c_str());
  }
  return 0;
}

int Main(int argc, char** argv, Communicator* comm, const ObserverWrap& wrap) {
  ConfigureFlagUsage(
      "Builds MA-EC sampling rates from impression logs and publishes a snapshot.\n"
      "  graphsieve-build --input=log.csv --snapshot_root=/var/lib/graphsieve [flags]\n"
      "Flags may be spelled with '-' or '_' (--user-col == --user_col). Exit codes: 0 ok, "
      "1 error, 2 bad flags, 3 a validation gate failed (nothing published).",
      "builder/build_main.cc", "graphsieve-build " GRAPHSIEVE_VERSION);
  std::vector<std::string> storage = NormaliseFlagNames(argc, argv);
  std::vector<char*> args = ArgvPointers(storage);
  // An unknown or ill-typed flag is a usage error (exit 2, also as JSON when
  // --json was read); --help and --version exit 0.
  ParsedFlags parsed = ParseFlags(args);
  if (parsed.exit_now) return 0;
  const std::vector<char*>& positional = parsed.positional;
  const auto t0 = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  const bool json = absl::GetFlag(FLAGS_json), quiet = absl::GetFlag(FLAGS_quiet);
  if (!parsed.status.ok()) {
    std::fprintf(stderr, "graphsieve-build: %s\n", std::string(parsed.status.message()).c_str());
    if (json) PrintJson(parsed.status, nullptr, 0);
    return kExitUsage;
  }
  if (positional.size() > 1) {
    absl::Status s = absl::InvalidArgumentError(absl::StrCat(
        "unexpected argument '", positional[1], "' (inputs go in --input=a.csv,b.csv)"));
    std::fprintf(stderr, "graphsieve-build: %s\n", std::string(s.message()).c_str());
    if (json) PrintJson(s, nullptr, 0);
    return kExitUsage;
  }
  if (absl::GetFlag(FLAGS_rule_from_base)) {
    absl::Status s;
    if (absl::GetFlag(FLAGS_delta_of).empty()) {
      s = absl::InvalidArgumentError(
          "--rule_from_base needs --delta_of: only a delta takes its rule from a base (a full "
          "build's rule is its flags)");
    } else {
      s = TakeRuleFromBase();
    }
    if (!s.ok()) {
      std::fprintf(stderr, "graphsieve-build: %s\n", std::string(s.message()).c_str());
      if (json) PrintJson(s, nullptr, seconds());
      return s.code() == absl::StatusCode::kInvalidArgument ? kExitUsage : ExitCodeOf(s);
    }
  }
  absl::StatusOr<BuildOptions> options = OptionsFromFlags();
  // Checked here, before any work, so that bad flags exit 2 (RunBuild checks
  // them again as the library's entry; the stages inside only assert them).
  // With --delta_of, DeltaMain checks them as part of its DeltaBuildOptions.
  if (options.ok() && absl::GetFlag(FLAGS_delta_of).empty()) {
    if (absl::Status s = options->Validate(); !s.ok()) options = s;
  }
  if (!options.ok()) {
    std::fprintf(stderr, "graphsieve-build: %s\n", std::string(options.status().message()).c_str());
    if (json) PrintJson(options.status(), nullptr, 0);
    return kExitUsage;
  }
  if (!absl::GetFlag(FLAGS_delta_of).empty())
    return DeltaMain(*options, json, quiet, seconds, wrap);
  WarnIfThreadsExceedCpus(options->pipeline.threads, comm);
  // Under mpirun only rank 0 talks; every rank returns the same status.
  const bool speaker = comm == nullptr || comm->rank() == 0;
  StderrProgress progress(quiet || !speaker, ::isatty(STDERR_FILENO) == 1);
  const BuildObserver observer =
      wrap ? wrap(progress.Observer(), comm == nullptr ? 0 : comm->rank()) : progress.Observer();
  absl::StatusOr<BuildReport> report =
      comm == nullptr ? RunBuild(*options, observer) : RunBuild(*options, observer, *comm);
  if (!speaker) return report.ok() ? 0 : ExitCodeOf(report.status());
  if (!report.ok()) {
    const absl::Status s = ExplainLogReadError(report.status());
    std::fprintf(stderr, "graphsieve-build: %s: %s\n", absl::StatusCodeToString(s.code()).c_str(),
                 std::string(s.message()).c_str());
    std::fprintf(stderr, "graphsieve-build: nothing published\n");
    if (json) PrintJson(s, nullptr, seconds());
    return ExitCodeOf(s);
  }
  if (!quiet) PrintSummary(*options, *report, seconds());
  if (!quiet) PrintRanks(*report);
  if (json) PrintJson(absl::OkStatus(), &*report, seconds());
  return 0;
}

}  // namespace

int BuildMain(int argc, char** argv, const ObserverWrap& wrap) {
#if GRAPHSIEVE_HAVE_MPI
  // Started by mpirun: one rank of a distributed build (core/offline/build_job.h).
  if (LaunchedByMpirun()) {
    MpiSession session(&argc, &argv);
    std::unique_ptr<Communicator> world = session.World();
    const int code = Main(argc, argv, world.get(), wrap);
    world.reset();
    return code;
  }
#endif
  return Main(argc, argv, nullptr, wrap);
}

}  // namespace graphsieve
