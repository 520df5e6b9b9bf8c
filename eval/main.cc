// graphsieve-eval: does sampling with graphsieve's rates keep model quality?
//
// Splits a log 80/10/10 by instance, computes rates on the training part with
// each requested method, keeps positives and samples negatives, trains target
// CTR models with the log-odds correction and reports test AUC, log-loss and
// NDCG@k (mean ± std over seeds) next to `full` (no sampling) and `uniform`.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/cli/flags.h"
#include "core/cli/log_flags.h"
#include "core/io/output_file.h"
#include "eval/command_line.h"
#include "eval/deployed.h"
#include "eval/experiment.h"
#include "eval/movielens.h"
#include "eval/report.h"
#include "eval/run_dir.h"
#include "eval/select_command.h"
#include "eval/tune.h"
#include "eval/tune_command.h"
#include "eval/unbiased.h"
#include "eval/verdict.h"
#include "graphsieve/version.h"

ABSL_FLAG(std::string, log, "",
          "Impression log to evaluate (CSV/TSV with a header, gzip ok), e.g. "
          "the output of graphsieve-gen. Exactly one of --log and --movielens.");
ABSL_FLAG(std::string, movielens, "",
          "MovieLens directory holding u.data (ml-100k): every user x item "
          "pair becomes an impression, positive when rated >= --movielens_min_rating.");
ABSL_FLAG(double, movielens_min_rating, 4.0,
          "Rating at or above which a MovieLens pair is positive; in [1, 5] (ratings are 1 to 5 "
          "stars).");
// The columns of --log: --user-col, --item-col, --label-col / --label-rule, --pilot-col
// (graphsieve-gen --pilot writes 'pilot_score'), --dataset, --delimiter, --id-mode, and
// the older spellings --user-column, --item-column, --label, --pilot-column, are the
// shared log-column flags of core/cli/log_flags.cc.
ABSL_FLAG(
    std::string, pilot, "auto",
    "Pilot score for opt and the ensembles: auto (the column when "
    "given, else lr), column, lr (one-hot logistic regression trained on the training part), "
    "fm or mlp (that target model trained on the training part: a near-oracle pilot), builtin "
    "(--mode=deployed: graphsieve-build's built-in pilot, fitted by each snapshot build on "
    "the earlier period), none.");
ABSL_FLAG(int, pilot_folds, 1,
          "Trained pilots (lr, fm, mlp): 1 = score the training pairs with the "
          "model trained on them (in-sample); K >= 2 = cross-fit over K folds of the pairs, so no "
          "pair's own label enters its pilot score.");
ABSL_FLAG(std::string, methods, "uniform,opt,maec,maec-prop,max",
          "Comma-separated sampling methods; full (no sampling) is always run unless "
          "--include_full=false. Known: "
          "full,uniform,opt,opt-prop,maec,maec-u,maec-prop,max,max-raw,maec-prop-sqrt,opt-sqrt,"
          "mean,product, "
          "and with the mixture rate rule "
          "maec-mix,maec-u-mix,maec-prop-mix,opt-mix,max-mix,max-raw-mix; maec-prop-mix with the "
          "item's exposure discounted: maec-prop-mix-exp0.5, maec-prop-mix-exp1 (graphsieve-build "
          "--exposure_power 0.5 or 1) and, offline only, maec-prop-mix-item (score / the mean "
          "score of the item's negatives).");
ABSL_FLAG(std::string, alphas, "0.2",
          "Comma-separated target kept fractions of negatives, each in (0,1).");
ABSL_FLAG(std::string, floors, "0.01",
          "Comma-separated rate floors (varrho) for the graph/pilot "
          "methods; combinations with floor >= alpha are skipped.");
ABSL_FLAG(std::string, gammas, "0.5",
          "Comma-separated propagation weights gamma in [0,1) for methods "
          "with propagation.");
ABSL_FLAG(std::string, kappas, "0.25",
          "Comma-separated κ (uniform share of the mixture rate rule "
          "π = min(1, ρ(s/s̄ + κ))) for the *-mix methods.");
ABSL_FLAG(std::string, pilot_kappas, "",
          "Comma-separated κ of the pilot member for opt-mix and the "
          "*-mix ensembles (empty = the same as --kappas).");
ABSL_FLAG(std::string, models, "lr,fm",
          "Comma-separated target models: lr (one-hot logistic "
          "regression), fm (logistic factorisation: user+item embeddings and biases), mlp "
          "(DeepFM-style: fm plus a ReLU hidden layer over the concatenated embeddings).");
ABSL_FLAG(int, seeds, 3,
          "Repetitions; seed s drives the split, the pilot, the subsample and the "
          "model initialisation.");
ABSL_FLAG(uint64_t, first_seed, 1, "First seed (seeds first_seed .. first_seed+seeds-1).");
ABSL_FLAG(int, dim, 16, "Embedding dimension of the fm and mlp models.");
ABSL_FLAG(int, hidden, 32, "Hidden ReLU units of the mlp model.");
ABSL_FLAG(double, learning_rate, 0.1, "Adagrad step size of the target models.");
ABSL_FLAG(double, l2, 1.0,
          "Weight of the L2 penalty per epoch (one proximal step per parameter at the end of "
          "each epoch, independent of how many instances updated it).");
ABSL_FLAG(int, max_epochs, 15, "Maximum training epochs (early stopping on validation log-loss).");
ABSL_FLAG(int, patience, 2, "Epochs without validation improvement before stopping.");
ABSL_FLAG(int, ndcg_k, 10, "NDCG cutoff (per user over the test impressions).");
ABSL_FLAG(bool, zero_positive_offset, false,
          "Ablation: give kept positives offset 0 instead of the "
          "log of their pair's counterfactual rate (biased; see docs/EVALUATION.md).");
ABSL_FLAG(bool, include_full, true,
          "Also train on the unsampled training part (the `full` rows). "
          "Turn off only for ablation grids reported next to a run that has them.");
ABSL_FLAG(std::string, resistance, "auto",
          "Effective resistance route of the pipeline: auto, exact, "
          "sketch, onesided.");
ABSL_FLAG(int, sketch_dim, 64, "Sketch dimension k of the pipeline.");
ABSL_FLAG(
    bool, unseen_control_variate, true,
    "Control-variate node rows for unseen pairs (docs/METHOD.md \"Pairs the builder never saw\"); "
    "false = plain sketch rows (for measurement).");
ABSL_FLAG(
    double, score_power, 1.0,
    "beta in (0, 4], as graphsieve-build --score-power: MA-EC rates are made from "
    "t = s^beta of the score (core/maec PipelineOptions::score_power; 1 = the score itself).");
ABSL_FLAG(bool, symmetric, false, "Use the symmetric D^-1/2 A D^-1/2 propagation operator.");
ABSL_FLAG(int, threads, 2, "Threads of the pipeline, in [1, 256].");
ABSL_FLAG(std::string, title, "",
          "Section title of the Markdown report (default: the input's name).");
ABSL_FLAG(std::string, output_md, "", "Write the Markdown report here (default: standard output).");
ABSL_FLAG(std::string, output_json, "", "Write every run and summary as JSON here.");
ABSL_FLAG(
    std::string, mode, "random",
    "random: rates computed on the training part itself (every "
    "training impression is a pair the builder saw). deployed: split the log into an earlier "
    "and a later period (MovieLens by rating time, else a seeded draw), build a real snapshot "
    "of the earlier period and rate the later period's training impressions as "
    "graphsieve-server would (EXACT/INFERRED/DEFAULT); see docs/EVALUATION.md.");
ABSL_FLAG(std::string, period_split, "auto",
          "deployed: how the periods are split: time (MovieLens "
          "rating times), seeded (a seeded draw per instance), auto (time when the input has "
          "timestamps, i.e. --movielens, else seeded).");
ABSL_FLAG(double, later_fraction, 0.5, "deployed: share of the instances in the later period.");
ABSL_FLAG(int64_t, refresh_every, 0,
          "deployed: replay the later period in time order in chunks of this much log time "
          "(MovieLens: seconds; --time_col's units): each chunk's training pairs are rated by "
          "the base plus a delta version built by the delta builder from the earlier chunks "
          "(docs/FRESHNESS.md). 0 = no refresh. Needs timestamps; not with methods that need a "
          "pilot.");
ABSL_FLAG(std::string, default_policy, "node-mean",
          "deployed: the server's --default-policy for pairs with an unknown user or item: "
          "node-mean | alpha | model | positive-rate (the known node's smoothed positive rate "
          "through the snapshot's rule, fitted to alpha at build time) | a fixed rate in (0, 1].");
ABSL_FLAG(std::string, work_dir, "",
          "deployed: build snapshots under this directory (default $TMPDIR, else /dev/shm "
          "when it is a writable tmpfs, else /tmp), in a directory graphsieve-eval-XXXXXX of "
          "the run that is removed however the run ends (an interrupt, SIGTERM, a kill). A "
          "refresh replay publishes a delta per chunk: on a disk it mostly waits for fsync.");
ABSL_FLAG(std::string, truth_col, "",
          "The column of the generator's true click probability in --log and --test "
          "(graphsieve-gen --truth writes 'true_prob'). Read only by the oracle methods "
          "(oracle, oracle-p); no model and no other rate sees it.");
ABSL_FLAG(std::string, test, "",
          "Unbiased test: a file of randomly exposed impressions of the log's users and items "
          "(same columns as --log; graphsieve-gen --test_output) that replaces the test part in "
          "both modes; impressions of users or items absent from the log are dropped.");
ABSL_FLAG(bool, quiet, false, "Do not print one progress line per trained model to stderr.");
ABSL_FLAG(std::string, input, "",
          "verdict: the log to judge (CSV/TSV with a header, gzip ok; the column flags "
          "--user-col, --item-col, --label-col / --label-rule, --delimiter apply).");
ABSL_FLAG(
    std::string, time_col, "",
    "A time column (whole numbers >= 0 that order the impressions, e.g. epoch seconds). "
    "verdict: given, the verdict runs the deployed mode (a snapshot of the earlier half "
    "rates the later half); empty, the random split. --log in deployed mode: the periods (and "
    "--refresh_every's chunks) are split by it (e.g. graphsieve-gen --churn_days' "
    "timestamp).");
ABSL_FLAG(double, exposure_power, 0.0,
          "The exposure discount eta of the MA-EC methods without one in their name, as "
          "graphsieve-build --exposure_power (default 0, the builder's default; in [0, 2]); "
          "verdict: of the judged rule.");
ABSL_FLAG(double, alpha, 0.2,
          "tune: the kept share of negatives the rules are compared at (the flag file's "
          "--alpha), in (0, 1).");
ABSL_FLAG(std::string, output_dir, ".",
          "tune: where rule.flags (graphsieve-build --flagfile), tune.md, tune.json and "
          "tune-curve.svg are written (an existing directory).");
ABSL_FLAG(uint64_t, max_instances, 2000000,
          "tune: a log with more impressions is cut to a seeded subset of its users holding at "
          "most this many (the report says so); 0 = never.");
ABSL_FLAG(bool, exit_zero_on_answer, false,
          "tune: exit 0 whenever the flag file was written, uniform included (for a step of a "
          "Kubernetes Job, deploy/k8s/tune-cronjob.yaml); errors still exit 1 or 2.");
ABSL_FLAG(double, kappa, 1.0,
          "verdict: the mixture kappa of the judged rule, as graphsieve-build --kappa (default 1, "
          "the builder's default); > 0.");

namespace graphsieve::eval {

// Exit codes besides 0 (and verdict's 3 and 4), as --help says.
constexpr int kExitError = 1;  // reading an input, training, writing a report
constexpr int kExitUsage = 2;  // an unknown flag, a bad flag value, a flag that does not apply

namespace {

absl::StatusOr<std::vector<double>> ParseDoubles(const std::string& flag, const std::string& text) {
  std::vector<double> out;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    double v = 0.0;
    if (!absl::SimpleAtod(part, &v)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, ": '", std::string(part), "' is not a number"));
    }
    out.push_back(v);
  }
  if (out.empty()) return absl::InvalidArgumentError(absl::StrCat("--", flag, " is empty"));
  return out;
}

absl::StatusOr<ExperimentOptions> OptionsFromFlags() {
  ExperimentOptions o;
  o.methods = absl::StrSplit(absl::GetFlag(FLAGS_methods), ',', absl::SkipWhitespace());
  for (auto [flag, dst] :
       {std::pair{"alphas", &o.alphas}, {"floors", &o.floors}, {"gammas", &o.gammas}}) {
    const std::string text = flag == std::string("alphas")   ? absl::GetFlag(FLAGS_alphas)
                             : flag == std::string("floors") ? absl::GetFlag(FLAGS_floors)
                                                             : absl::GetFlag(FLAGS_gammas);
    absl::StatusOr<std::vector<double>> v = ParseDoubles(flag, text);
    if (!v.ok()) return v.status();
    *dst = *v;
  }
  if (absl::StatusOr<std::vector<double>> k = ParseDoubles("kappas", absl::GetFlag(FLAGS_kappas));
      k.ok()) {
    o.kappas = *k;
  } else {
    return k.status();
  }
  if (!absl::GetFlag(FLAGS_pilot_kappas).empty()) {
    absl::StatusOr<std::vector<double>> k =
        ParseDoubles("pilot_kappas", absl::GetFlag(FLAGS_pilot_kappas));
    if (!k.ok()) return k.status();
    o.pilot_kappas = *k;
  }
  o.models.clear();
  for (absl::string_view m :
       absl::StrSplit(absl::GetFlag(FLAGS_models), ',', absl::SkipWhitespace())) {
    absl::StatusOr<ModelKind> k = ParseModelKind(std::string(m));
    if (!k.ok())
      return absl::InvalidArgumentError(absl::StrCat("--models: ", k.status().message()));
    o.models.push_back(*k);
  }
  o.seeds = absl::GetFlag(FLAGS_seeds);
  o.first_seed = absl::GetFlag(FLAGS_first_seed);
  o.model.dim = absl::GetFlag(FLAGS_dim);
  o.model.hidden = absl::GetFlag(FLAGS_hidden);
  o.model.learning_rate = absl::GetFlag(FLAGS_learning_rate);
  o.model.l2 = absl::GetFlag(FLAGS_l2);
  o.model.max_epochs = absl::GetFlag(FLAGS_max_epochs);
  o.model.patience = absl::GetFlag(FLAGS_patience);
  o.ndcg_k = absl::GetFlag(FLAGS_ndcg_k);
  o.zero_positive_offset = absl::GetFlag(FLAGS_zero_positive_offset);
  o.include_full = absl::GetFlag(FLAGS_include_full);
  absl::StatusOr<EvalMode> mode = ParseEvalMode(absl::GetFlag(FLAGS_mode));
  if (!mode.ok())
    return absl::InvalidArgumentError(absl::StrCat("--mode: ", mode.status().message()));
  o.mode = *mode;
  o.later_fraction = absl::GetFlag(FLAGS_later_fraction);
  o.refresh_every = absl::GetFlag(FLAGS_refresh_every);
  if (o.refresh_every < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--refresh_every must be >= 0 (0 = no refresh), got ", o.refresh_every));
  }
  if (o.refresh_every > 0 && o.mode != EvalMode::kDeployed) {
    return absl::InvalidArgumentError("--refresh_every needs --mode=deployed");
  }
  absl::StatusOr<DefaultPolicy> policy = DefaultPolicy::Parse(absl::GetFlag(FLAGS_default_policy));
  if (!policy.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--default_policy: ", policy.status().message()));
  }
  o.default_policy = *policy;
  o.work_dir = absl::GetFlag(FLAGS_work_dir);
  absl::StatusOr<PilotSource> pilot = ParsePilotSource(absl::GetFlag(FLAGS_pilot));
  if (!pilot.ok())
    return absl::InvalidArgumentError(absl::StrCat("--pilot: ", pilot.status().message()));
  o.pilot = *pilot;
  o.pilot_folds = absl::GetFlag(FLAGS_pilot_folds);
  absl::StatusOr<ResistanceMethod> r = ParseResistanceMethod(absl::GetFlag(FLAGS_resistance));
  if (!r.ok())
    return absl::InvalidArgumentError(absl::StrCat("--resistance: ", r.status().message()));
  o.pipeline.resistance = *r;
  o.pipeline.sketch_dim = absl::GetFlag(FLAGS_sketch_dim);
  o.pipeline.unseen_control_variate = absl::GetFlag(FLAGS_unseen_control_variate);
  o.pipeline.symmetric_normalisation = absl::GetFlag(FLAGS_symmetric);
  o.pipeline.score_power = absl::GetFlag(FLAGS_score_power);
  o.pipeline.exposure_power = absl::GetFlag(FLAGS_exposure_power);
  o.pipeline.threads = absl::GetFlag(FLAGS_threads);
  if (!absl::GetFlag(FLAGS_quiet)) {
    o.progress = [](const std::string& line) { std::cerr << line << std::endl; };
  }
  if (absl::Status s = o.Validate(); !s.ok()) return s;
  return o;
}

// --work_dir, when given, must be a directory the deployed mode can make its
// snapshot directories in: checked at start-up, not at the first snapshot.
absl::Status CheckWorkDir(const std::string& dir) {
  struct stat st;
  if (dir.empty()) return absl::OkStatus();
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--work_dir '", dir, "' is not an existing directory"));
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--work_dir '", dir, "': cannot write in it: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

// What the main command was asked to do, from the flags, checked before any work.
struct MainCommand {
  ExperimentOptions options;
  std::string log_path;  // --log, or
  LogReaderOptions reader;
  std::string movielens_dir;  // --movielens
  MovieLensOptions movielens;
  std::string time_col;      // --time_col (deployed mode)
  std::string period_split;  // auto | time | seeded
  std::string test_path;     // --test
  LogReaderOptions test_reader;
  std::string truth_col;  // --truth_col: the oracle's truth, read into TrueProbabilities
  std::string title;
  // --output_md (standard output without it) and --output_json.
  std::optional<OutputFile> output_md, output_json;
};

// --output_md and --output_json, resolved before any work: a directory or a
// missing parent directory is refused naming the flag, and neither may be one
// of the inputs (--log, --movielens' u.data, --test) or the other output.
absl::Status ResolveOutputs(MainCommand* c) {
  std::vector<std::pair<const char*, std::string>> inputs;
  if (!c->log_path.empty()) inputs.emplace_back("--log", c->log_path);
  if (!c->movielens_dir.empty()) inputs.emplace_back("--movielens", c->movielens_dir + "/u.data");
  if (!c->test_path.empty()) inputs.emplace_back("--test", c->test_path);
  const std::string md = absl::GetFlag(FLAGS_output_md), json = absl::GetFlag(FLAGS_output_json);
  for (auto [flag, path, file] : {std::tuple{"--output_md", md, &c->output_md},
                                  std::tuple{"--output_json", json, &c->output_json}}) {
    if (path.empty()) continue;
    absl::StatusOr<OutputFile> out = OutputFile::Resolve(path, flag);
    if (!out.ok()) return out.status();
    for (const auto& [input_flag, input] : inputs) {
      if (absl::Status s = RefuseOutputOverInput(path, flag, input, input_flag); !s.ok()) return s;
    }
    *file = *std::move(out);
  }
  if (!md.empty() && !json.empty()) {
    return RefuseOutputOverInput(json, "--output_json", md, "--output_md");
  }
  return absl::OkStatus();
}

// Errors name the flag: usage errors (exit 2).
absl::StatusOr<MainCommand> MainCommandFromFlags() {
  MainCommand c;
  if (FlagGiven("input")) {
    return absl::InvalidArgumentError(
        "--input is verdict's flag (graphsieve-eval verdict --input LOG); the experiment reads "
        "--log or --movielens");
  }
  if (FlagGiven("kappa")) {
    return absl::InvalidArgumentError(
        "--kappa is verdict's flag; the experiment's mixture kappas are --kappas");
  }
  for (const char* flag : {"alpha", "output_dir", "max_instances", "exit_zero_on_answer"}) {
    if (FlagGiven(flag)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag,
                       " is tune's flag (graphsieve-eval tune); the experiment's are --alphas, "
                       "--output_md and --output_json"));
    }
  }
  absl::StatusOr<ExperimentOptions> options = OptionsFromFlags();
  if (!options.ok()) return options.status();
  c.options = *std::move(options);
  c.log_path = absl::GetFlag(FLAGS_log);
  c.movielens_dir = absl::GetFlag(FLAGS_movielens);
  if (c.log_path.empty() == c.movielens_dir.empty()) {
    return absl::InvalidArgumentError("give exactly one of --log and --movielens");
  }
  c.movielens.positive_min_rating = absl::GetFlag(FLAGS_movielens_min_rating);
  if (absl::Status s = c.movielens.Validate(); !s.ok()) return s;
  LogReaderOptions base;
  base.keep_id_names = false;
  absl::StatusOr<LogReaderOptions> r = LogReaderOptionsFromFlags(base, /*read_pilot=*/true);
  if (!r.ok()) return r.status();
  c.reader = *r;
  absl::StatusOr<LogReaderOptions> t = LogReaderOptionsFromFlags(base, /*read_pilot=*/false);
  if (!t.ok()) return t.status();
  c.test_reader = *t;
  c.time_col = absl::GetFlag(FLAGS_time_col);
  c.period_split = absl::GetFlag(FLAGS_period_split);
  if (c.period_split != "auto" && c.period_split != "time" && c.period_split != "seeded") {
    return absl::InvalidArgumentError(absl::StrCat("--period_split: unknown '", c.period_split,
                                                   "', expected auto, time or seeded"));
  }
  if (c.period_split == "time" && !c.log_path.empty() && c.time_col.empty()) {
    return absl::InvalidArgumentError(
        "--period_split=time needs timestamps: --movielens, or --log with --time_col");
  }
  if (c.options.pilot == PilotSource::kColumn && c.reader.pilot_column.empty()) {
    return absl::InvalidArgumentError(
        c.log_path.empty()
            ? "--pilot=column: --movielens has no pilot score column; use --pilot=lr, fm or mlp"
            : "--pilot=column reads the column named by --pilot-col (graphsieve-gen --pilot "
              "writes 'pilot_score'): give --pilot-col");
  }
  if (c.options.mode == EvalMode::kDeployed) {
    if (absl::Status s = CheckWorkDir(c.options.work_dir); !s.ok()) return s;
  }
  c.test_path = absl::GetFlag(FLAGS_test);
  c.truth_col = absl::GetFlag(FLAGS_truth_col);
  if (!c.truth_col.empty()) {
    if (c.log_path.empty()) {
      return absl::InvalidArgumentError(
          "--truth_col: --movielens has no true probabilities; the oracle needs a generated log");
    }
    c.test_reader.pilot_column = c.truth_col;  // the test's truth, aligned by MapUnbiasedTest
  }
  c.title = absl::GetFlag(FLAGS_title);
  if (absl::Status s = ResolveOutputs(&c); !s.ok()) return s;
  return c;
}

// A log too small to split (a header and no rows, say), naming the file.
absl::Status CheckLogSize(const std::string& path, const ImpressionLog& log) {
  if (log.size() >= kMinLogInstances) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      path, ": ", log.size(), " impressions", log.size() == 0 ? " (a header and no rows?)" : "",
      "; the evaluation splits the log 80/10/10 and needs at least ", kMinLogInstances));
}

absl::StatusOr<ImpressionLog> LoadInput(const MainCommand& c, std::string* title,
                                        std::vector<int64_t>* timestamps) {
  if (!c.movielens_dir.empty()) {
    *title = absl::StrCat("MovieLens (", c.movielens_dir,
                          ", implicit, rating >= ", c.movielens.positive_min_rating, ")");
    return ReadMovieLensImplicit(c.movielens_dir, c.movielens, timestamps);
  }
  ImpressionLog log;
  if (absl::Status s = ReadImpressionLog(c.log_path, c.reader, &log); !s.ok()) return s;
  if (absl::Status s = CheckLogSize(c.log_path, log); !s.ok()) return s;
  *title = c.log_path;
  if (timestamps != nullptr && !c.time_col.empty()) {
    absl::StatusOr<std::vector<int64_t>> times = ReadTimeColumn(c.log_path, c.time_col, c.reader);
    if (!times.ok()) return times.status();
    if (times->size() != log.size()) {
      return absl::InvalidArgumentError(absl::StrCat(c.log_path, ": ", times->size(),
                                                     " times in column '", c.time_col, "' for ",
                                                     log.size(), " rows"));
    }
    *timestamps = *std::move(times);
  }
  return log;
}

// Writes `text` through `out` (a temporary renamed over the file at the end,
// or a FIFO or device in place). Errors name the flag and the file.
absl::Status WriteOutput(const OutputFile& out, const char* flag, const std::string& text) {
  return out.WriteAll(text, flag);
}

// A report to its file, or to standard output without one. A file that fails
// now (a full disk, a file system gone read-only during the run) does not lose
// the run's work: the report goes to standard output instead, and the error
// is returned.
absl::Status DeliverReport(const std::optional<OutputFile>& out, const char* flag,
                           const std::string& text) {
  if (out.has_value()) {
    const absl::Status s = WriteOutput(*out, flag, text);
    if (s.ok()) return s;
    std::cout << text << std::flush;
    return absl::Status(s.code(),
                        absl::StrCat(s.message(), "; the report was written to standard output"));
  }
  std::cout << text << std::flush;
  return absl::OkStatus();
}

// Errors: reading the inputs, the experiment's, writing the reports (exit 1).
absl::Status RunMainCommand(const MainCommand& c, const std::string& command) {
  const ExperimentOptions& options = c.options;
  std::string title;
  std::vector<int64_t> timestamps;
  absl::StatusOr<ImpressionLog> log =
      LoadInput(c, &title, options.mode == EvalMode::kDeployed ? &timestamps : nullptr);
  if (!log.ok()) return log.status();
  if (c.period_split == "seeded") {
    timestamps.clear();
  } else if (c.period_split == "time" && options.mode == EvalMode::kDeployed &&
             timestamps.empty()) {
    return absl::InvalidArgumentError(
        "--period_split=time needs timestamps: --movielens, or --log with --time_col");
  }
  if (!c.title.empty()) title = c.title;
  if (options.refresh_every > 0) {
    absl::StrAppend(&title, ", deltas every ", options.refresh_every, " log time units");
  }
  absl::StatusOr<UnbiasedTest> unbiased;
  if (!c.test_path.empty()) {
    ImpressionLog test_log;
    if (absl::Status s = ReadImpressionLog(c.test_path, c.test_reader, &test_log); !s.ok()) {
      return s;
    }
    unbiased = MapUnbiasedTest(*log, test_log, absl::StrCat("--test ", c.test_path));
    if (!unbiased.ok()) return unbiased.status();
  }
  TrueProbabilities truth;
  if (!c.truth_col.empty()) {
    // The log read again with the truth as its only score column.
    LogReaderOptions reader = c.reader;
    reader.pilot_column = c.truth_col;
    ImpressionLog with_truth;
    if (absl::Status s = ReadImpressionLog(c.log_path, reader, &with_truth); !s.ok()) return s;
    truth.log = std::move(with_truth.pilot_scores);
    if (unbiased.ok()) truth.unbiased_test = unbiased->truth;
  }
  absl::StatusOr<ExperimentResult> result =
      RunExperiment(*log, options, timestamps, c.test_path.empty() ? nullptr : &unbiased->test,
                    c.truth_col.empty() ? nullptr : &truth);
  if (!result.ok()) return result.status();
  if (!c.test_path.empty()) {
    result->test_instances = unbiased->test.size();
    result->test_source = absl::StrCat(
        "randomly exposed impressions from --test (does not share the log's exposure; ",
        unbiased->dropped_unknown, " of users or items absent from the log dropped)");
  }
  const std::vector<Summary> cells = SummariseRuns(result->runs);
  ReportContext context{title, command, options.ndcg_k};
  absl::Status md =
      DeliverReport(c.output_md, "--output_md", FormatMarkdown(*result, cells, context));
  absl::Status json = c.output_json.has_value() ? DeliverReport(c.output_json, "--output_json",
                                                                FormatJson(*result, cells, context))
                                                : absl::OkStatus();
  return md.ok() ? json : md;
}

// Flags verdict does not read, with what it does instead: refused when given,
// so that a run is not taken for what it is not (--mode deployed used to run
// the random split).
struct NotForVerdict {
  const char* flag;
  const char* instead;
};
constexpr char kVerdictRule[] =
    "verdict judges the builder's default rule (maec-prop-mix, gamma 0.5; --kappa and "
    "--exposure_power choose it) against uniform at alpha 0.2, and uniform at 0.3, 0.5 and "
    "unsampled";
constexpr NotForVerdict kNotForVerdict[] = {
    {"log", "verdict reads the log given with --input"},
    {"movielens", "verdict reads the log given with --input"},
    {"movielens_min_rating", "verdict reads the log given with --input"},
    {"mode", "verdict runs the deployed mode when --time-col names the log's time column"},
    {"period_split", "verdict splits the periods by --time-col"},
    {"refresh_every", "verdict rates the later half with one snapshot"},
    {"methods", kVerdictRule},
    {"alphas", kVerdictRule},
    {"floors", kVerdictRule},
    {"gammas", kVerdictRule},
    {"kappas", "verdict judges one kappa: --kappa"},
    {"pilot_kappas", kVerdictRule},
    {"pilot", "the default rule needs no pilot score"},
    {"pilot_folds", "the default rule needs no pilot score"},
    {"pilot_col", "the default rule needs no pilot score"},
    {"pilot_column", "the default rule needs no pilot score"},
    {"include_full", "verdict always trains the unsampled model"},
    {"test", "verdict tests on a part of the log"},
    {"truth_col", "verdict judges the default rule, not the oracle"},
    {"ndcg_k", "verdict reports AUC"},
    {"title", "verdict prints its answer to standard output"},
    {"output_md", "verdict prints its answer to standard output"},
    {"output_json", "verdict prints its answer to standard output"},
    {"alpha", "verdict compares at alpha 0.2 (graphsieve-eval tune takes --alpha)"},
    {"output_dir", "verdict prints its answer to standard output"},
    {"max_instances", "verdict reads the whole log"},
    {"exit_zero_on_answer", "verdict's exit code is its answer"},
};
// Flags of the deployed mode: verdict reads them only with --time-col.
constexpr const char* kDeployedOnly[] = {"later_fraction", "default_policy", "work_dir"};

absl::Status RefuseFlagsVerdictDoesNotRead() {
  for (const NotForVerdict& f : kNotForVerdict) {
    if (FlagGiven(f.flag)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", f.flag, " does not apply to verdict: ", f.instead,
                       " (graphsieve-eval --log runs an experiment of your own design)"));
    }
  }
  if (absl::GetFlag(FLAGS_time_col).empty()) {
    for (const char* flag : kDeployedOnly) {
      if (FlagGiven(flag)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--", flag, " applies to the deployed mode, which verdict runs with --time-col"));
      }
    }
  }
  return absl::OkStatus();
}

// graphsieve-eval verdict: the default rule against uniform on the user's own log.
// What verdict and tune read alike, in this order: --input (required, into *input) and the
// experiment's options with one target model and at least 2 paired seeds (`seeds_why`: what
// the seeds pair, for the message). Errors name the flag: usage errors (exit 2).
absl::StatusOr<ExperimentOptions> PairedExperimentFromFlags(const char* command,
                                                            const char* seeds_why,
                                                            std::string* input) {
  *input = absl::GetFlag(FLAGS_input);
  if (input->empty()) return absl::InvalidArgumentError("--input is required");
  absl::StatusOr<ExperimentOptions> options = OptionsFromFlags();
  if (!options.ok()) return options.status();
  if (options->models.size() != 1) {
    return absl::InvalidArgumentError("--models takes one target model (lr, fm or mlp)");
  }
  if (options->seeds < 2) {
    return absl::InvalidArgumentError(absl::StrCat("--seeds must be >= 2 for ", command,
                                                   " (8 by default): ", seeds_why, ", got ",
                                                   options->seeds));
  }
  return options;
}

struct VerdictCommand {
  std::string input, time_col;
  LogReaderOptions reader;
  VerdictOptions verdict;
};

// Errors name the flag: usage errors (exit 2).
absl::StatusOr<VerdictCommand> VerdictCommandFromFlags() {
  VerdictCommand c;
  if (absl::Status s = RefuseFlagsVerdictDoesNotRead(); !s.ok()) return s;
  absl::StatusOr<ExperimentOptions> options = PairedExperimentFromFlags(
      "verdict", "the gain's standard error and interval are paired over seeds", &c.input);
  if (!options.ok()) return options.status();
  LogReaderOptions base;
  base.keep_id_names = false;
  absl::StatusOr<LogReaderOptions> r = LogReaderOptionsFromFlags(base, /*read_pilot=*/false);
  if (!r.ok()) return r.status();
  c.reader = *r;
  c.time_col = absl::GetFlag(FLAGS_time_col);
  if (!c.time_col.empty()) {
    if (absl::Status s = CheckWorkDir(options->work_dir); !s.ok()) return s;
  }
  VerdictOptions& v = c.verdict;
  v.model = ModelKindName(options->models.front());
  v.experiment = *std::move(options);
  v.kappa = absl::GetFlag(FLAGS_kappa);
  if (!(v.kappa > 0) || !std::isfinite(v.kappa)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--kappa must be a finite number > 0, got ", v.kappa));
  }
  return c;
}

// Errors: reading the log, the experiments' (exit 1).
absl::Status RunVerdictCommand(const VerdictCommand& c, int* exit_code) {
  ImpressionLog log;
  if (absl::Status s = ReadImpressionLog(c.input, c.reader, &log); !s.ok()) return s;
  if (absl::Status s = CheckLogSize(c.input, log); !s.ok()) return s;
  std::vector<int64_t> timestamps;
  std::string mode = "random split (no --time-col)";
  if (!c.time_col.empty()) {
    absl::StatusOr<std::vector<int64_t>> times = ReadTimeColumn(c.input, c.time_col, c.reader);
    if (!times.ok()) return times.status();
    if (times->size() != log.size()) {
      return absl::InvalidArgumentError(absl::StrCat(c.input, ": ", times->size(),
                                                     " times in column '", c.time_col, "' for ",
                                                     log.size(), " rows"));
    }
    timestamps = *std::move(times);
    const double later = c.verdict.experiment.later_fraction;
    mode = absl::StrCat("deployed mode (time column '", c.time_col, "': a snapshot of the earlier ",
                        later == 0.5 ? "half" : absl::StrFormat("%.0f%%", 100 * (1 - later)),
                        " rates the later ",
                        later == 0.5 ? "half" : absl::StrFormat("%.0f%%", 100 * later), ")");
  }
  VerdictOptions v = c.verdict;
  const int total = v.experiment.seeds * (3 + static_cast<int>(v.budget_alphas.size()));
  if (v.experiment.progress) {
    auto done = std::make_shared<int>(0);
    v.experiment.progress = [done, total](const std::string& line) {
      std::cerr << "verdict: [" << ++*done << "/" << total << "] " << line << std::endl;
    };
  }
  absl::StatusOr<VerdictReport> report = RunVerdict(log, timestamps, v, mode);
  if (!report.ok()) return report.status();
  std::cout << FormatVerdict(*report);
  *exit_code = ExitCode(report->recommendation);
  return absl::OkStatus();
}

// Flags tune does not read, with what it does instead (refused when given).
constexpr char kTuneGrid[] =
    "tune compares uniform, the graph rule over --kappas x eta {0, 0.5, 1}, the pilot rules and "
    "the default at --alpha, and uniform at larger alphas and unsampled";
constexpr NotForVerdict kNotForTune[] = {
    {"log", "tune reads the log given with --input"},
    {"movielens", "tune reads the log given with --input"},
    {"movielens_min_rating", "tune reads the log given with --input"},
    {"mode", "tune always runs the deployed mode (--time-col splits the periods by time)"},
    {"period_split", "tune splits the periods by --time-col (a seeded draw without it)"},
    {"refresh_every", "tune rates the later period with one snapshot"},
    {"methods", kTuneGrid},
    {"alphas", "tune compares at one --alpha"},
    {"floors", kTuneGrid},
    {"gammas", kTuneGrid},
    {"pilot_kappas", kTuneGrid},
    {"pilot_folds",
     "tune's pilot rules use graphsieve-build's built-in pilot with the builder's defaults"},
    {"kappa", "tune's mixture kappas are --kappas"},
    {"exposure_power", kTuneGrid},
    {"include_full", "tune always trains the unsampled model"},
    {"ndcg_k", "tune reports AUC"},
    {"title", "tune writes its report into --output_dir"},
    {"output_md", "tune writes tune.md into --output_dir"},
    {"output_json", "tune writes tune.json into --output_dir"},
};

// Errors name the flag: usage errors (exit 2).
absl::StatusOr<TuneCommand> TuneCommandFromFlags() {
  for (const NotForVerdict& f : kNotForTune) {
    if (FlagGiven(f.flag)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", f.flag, " does not apply to tune: ", f.instead));
    }
  }
  TuneCommand c;
  absl::StatusOr<ExperimentOptions> options =
      PairedExperimentFromFlags("tune", "every interval is paired over seeds", &c.input);
  if (!options.ok()) return options.status();
  const double alpha = absl::GetFlag(FLAGS_alpha);
  if (!(alpha > 0.0 && alpha < 1.0)) {
    return absl::InvalidArgumentError(absl::StrCat("--alpha must be in (0, 1), got ", alpha));
  }
  if (options->pilot != PilotSource::kNone && options->pilot != PilotSource::kBuiltIn) {
    return absl::InvalidArgumentError(
        "--pilot: tune measures the pilot rules with graphsieve-build's built-in pilot "
        "(builtin, the default: what their flag file publishes) or runs without them (none)");
  }
  for (double k : options->kappas) {
    if (!(k > 0) || !std::isfinite(k)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--kappas: every kappa must be a finite number > 0, got ", k));
    }
  }
  LogReaderOptions base;
  base.keep_id_names = false;
  absl::StatusOr<LogReaderOptions> r = LogReaderOptionsFromFlags(base, /*read_pilot=*/false);
  if (!r.ok()) return r.status();
  c.reader = c.test_reader = *r;
  c.time_col = absl::GetFlag(FLAGS_time_col);
  c.test_path = absl::GetFlag(FLAGS_test);
  if (absl::Status s = CheckWorkDir(options->work_dir); !s.ok()) return s;
  c.output_dir = absl::GetFlag(FLAGS_output_dir);
  c.exit_zero_on_answer = absl::GetFlag(FLAGS_exit_zero_on_answer);
  struct stat st;
  if (::stat(c.output_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--output_dir '", c.output_dir, "' is not an existing directory"));
  }
  TuneOptions& t = c.tune;
  t.model = ModelKindName(options->models.front());
  t.alpha = alpha;
  t.kappas = options->kappas;
  t.with_pilot = options->pilot != PilotSource::kNone;
  t.max_instances = absl::GetFlag(FLAGS_max_instances);
  t.experiment = *std::move(options);
  return c;
}

}  // namespace
}  // namespace graphsieve::eval

namespace graphsieve::eval {
namespace {

// A directory removed (with everything in it) when the object goes.
struct RemovedAtEnd {
  std::string path;
  ~RemovedAtEnd() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
};

// The deployed mode builds its snapshots in a directory of this run that a
// parent process removes however the run ends (eval/run_dir.h): `work_dir`
// becomes that directory. Called before any thread starts; returns in the child.
absl::Status GuardSnapshots(std::string* work_dir, RemovedAtEnd* at_end) {
  absl::StatusOr<RunDir> run = MakeGuardedRunDir(SnapshotWorkBase(*work_dir));
  if (!run.ok()) return run.status();
  *work_dir = at_end->path = run->path;
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  // graphsieve-eval select ROW=FILE.json...: the selection over finished runs
  // (eval/select_command.h).
  if (argc > 1 && std::string(argv[1]) == "select") {
    std::vector<std::string> rows(argv + 2, argv + argc);
    for (const std::string& a : rows) {
      if (a == "--help" || a == "-h" || a == "--helpfull") {
        std::cout << "Usage: graphsieve-eval select ROW=FILE.json[,FILE.json...] [ROW=...]\n"
                     "Chooses a rate rule over finished graphsieve-eval runs: non-inferior to "
                     "uniform on every\nrow (mean paired dAUC >= -0.0005 and >= -1 SE), then the "
                     "largest mean budget saved at\nequal AUC. Prints the Markdown table and the "
                     "decision. Exit 0 done, 2 a bad argument or file.\n"
                     "Docs: docs/EVALUATION.md \"Candidates and the selection\"\n";
        return 0;
      }
    }
    absl::StatusOr<std::string> md = RunSelect(rows, SelectionCriteria{});
    if (!md.ok()) {
      std::fprintf(stderr, "graphsieve-eval select: %s\n", md.status().ToString().c_str());
      return kExitUsage;
    }
    std::cout << *md;
    return 0;
  }
  const bool verdict = argc > 1 && std::string(argv[1]) == "verdict";
  const bool tune = argc > 1 && std::string(argv[1]) == "tune";
  if (tune) {
    graphsieve::ConfigureFlagUsage(
        "Which sampling rule should graphsieve-build publish for this log?\n"
        "Usage: graphsieve-eval tune --input LOG [--time-col C] [--test FILE] [--alpha 0.2]\n"
        "         [--output_dir DIR] [--seeds 8] [--kappas 0.25,1] [--pilot builtin|none]\n"
        "         [--max_instances 2000000] [column flags as verdict]\n"
        "Runs the deployed-mode selection protocol: per seed a snapshot of the earlier period\n"
        "rates the later one; the target model is trained on uniform's sample and on each\n"
        "candidate's at --alpha (the graph rule over --kappas x exposure discount eta 0, 0.5,\n"
        "1; the pilot rules; the default), and on uniform's at larger alphas and unsampled. The\n"
        "test is the later period's held-out part, or with --test your randomly exposed slice.\n"
        "A candidate passes when dAUC vs uniform >= -0.0005 and no more than 1 SE below it;\n"
        "among those the largest established budget saved wins; uniform when none does.\n"
        "Writes DIR/rule.flags (graphsieve-build --flagfile), tune.md, tune.json,\n"
        "tune-curve.svg and rule.flags.patch.json (a ConfigMap merge patch), and prints the\n"
        "report.\n"
        "Exit code: 0 a rule was chosen, 3 uniform (the default is non-inferior), 4 uniform\n"
        "(the default loses), 1 error, 2 usage.\n"
        "Docs: docs/EVALUATION.md \"Choosing the rule on your own log\"",
        "eval/main.cc", "graphsieve-eval " GRAPHSIEVE_VERSION);
    absl::SetFlag(&FLAGS_seeds, 8);
    absl::SetFlag(&FLAGS_models, "fm");
    absl::SetFlag(&FLAGS_kappas, "0.25,1");
    absl::SetFlag(&FLAGS_pilot, "builtin");
  } else if (verdict) {
    graphsieve::ConfigureFlagUsage(
        "Should this log be sampled with graphsieve's rates? Run this first on your own data.\n"
        "Usage: graphsieve-eval verdict --input LOG [--time-col C] [--models=fm] [--seeds=8]\n"
        "         [--user-col user_id --item-col item_id --label-col label | --label-rule R]\n"
        "Trains the target model on negatives kept at alpha 0.2 by the builder's default rule\n"
        "and by uniform sampling (paired over seeds), and uniform at alpha 0.3, 0.5 and\n"
        "unsampled; prints the gain over uniform and the budget saved at equal AUC (the alpha\n"
        "uniform needs to match), each with a 95% interval, and a one-line recommendation.\n"
        "With --time-col the deployed mode runs (a snapshot of the earlier half of the log\n"
        "rates the later half, as graphsieve-server would); without, a random 80/10/10 split.\n"
        "--seeds is at least 2. The experiment's own flags below (--methods, --alphas, --mode,\n"
        "--output_md, ...) do not apply to verdict and are refused.\n"
        "Exit code: 0 deploy, 3 no measurable gain, 4 keep uniform, 1 error (reading the log,\n"
        "training), 2 usage (an unknown flag, a bad flag value, a flag verdict does not read).\n"
        "Progress (one line per trained model) goes to stderr; --quiet silences it.\n"
        "Docs: docs/EVALUATION.md \"Your own log\"",
        "eval/main.cc", "graphsieve-eval " GRAPHSIEVE_VERSION);
    absl::SetFlag(&FLAGS_seeds, 8);
    absl::SetFlag(&FLAGS_models, "fm");
  } else {
    graphsieve::ConfigureFlagUsage(
        "Measures whether training on a subsample keeps model quality.\n"
        "Usage: graphsieve-eval (--log=FILE [--pilot_col=pilot_score] | --movielens=DIR)\n"
        "         [--methods=uniform,opt,maec,maec-prop,max] [--alphas=0.2] [--seeds=3]\n"
        "         [--mode=random|deployed] [--output_md=FILE] [--output_json=FILE]\n"
        "       graphsieve-eval verdict --input LOG [--time-col C]   (see verdict --help)\n"
        "       graphsieve-eval tune --input LOG [--time-col C] [--test FILE]   (see tune --help)\n"
        "Splits 80/10/10 by instance, computes rates on the training part, keeps positives and\n"
        "samples negatives, trains target models with the log-odds correction and reports test\n"
        "AUC, log-loss and NDCG@k as mean ± std over seeds, next to full and uniform.\n"
        "Exit code: 0 done, 1 error (reading an input, training, writing a report), 2 usage\n"
        "(an unknown flag, a bad flag value).\n"
        "Docs: docs/EVALUATION.md",
        "eval/main.cc", "graphsieve-eval " GRAPHSIEVE_VERSION);
  }
  const char* name = tune      ? "graphsieve-eval tune"
                     : verdict ? "graphsieve-eval verdict"
                               : "graphsieve-eval";
  auto fail = [name](const absl::Status& status, int code) {
    std::fprintf(stderr, "%s: %s\n", name, status.ToString().c_str());
    if (code == kExitUsage) std::fprintf(stderr, "(see %s --help)\n", name);
    return code;
  };
  CommandLine outcome;
  std::vector<std::string> rest;
  if (absl::Status s = ParseEvalCommandLine(argc, argv, &outcome, &rest); !s.ok()) {
    return fail(s, kExitUsage);
  }
  if (outcome == CommandLine::kUsageOut) return 0;
  const size_t positional = verdict || tune ? 2u : 1u;
  if (rest.size() > positional) {
    return fail(absl::InvalidArgumentError(absl::StrCat("unexpected argument '", rest[positional],
                                                        "' (flags are --name=value)")),
                kExitUsage);
  }
  if (tune) {
    absl::StatusOr<TuneCommand> command = TuneCommandFromFlags();
    if (!command.ok()) return fail(command.status(), kExitUsage);
    RemovedAtEnd run_dir;
    if (absl::Status s = GuardSnapshots(&command->tune.experiment.work_dir, &run_dir); !s.ok()) {
      return fail(s, kExitError);
    }
    int exit_code = kExitError;
    const absl::Status status = RunTuneCommand(*command, &exit_code);
    if (!status.ok()) return fail(status, kExitError);
    return exit_code;
  }
  if (verdict) {
    absl::StatusOr<VerdictCommand> command = VerdictCommandFromFlags();
    if (!command.ok()) return fail(command.status(), kExitUsage);
    RemovedAtEnd run_dir;
    if (!command->time_col.empty()) {
      if (absl::Status s = GuardSnapshots(&command->verdict.experiment.work_dir, &run_dir);
          !s.ok()) {
        return fail(s, kExitError);
      }
    }
    int exit_code = kExitError;
    const absl::Status status = RunVerdictCommand(*command, &exit_code);
    if (!status.ok()) return fail(status, kExitError);
    return exit_code;
  }
  absl::StatusOr<MainCommand> command = MainCommandFromFlags();
  if (!command.ok()) return fail(command.status(), kExitUsage);
  RemovedAtEnd run_dir;
  if (command->options.mode == EvalMode::kDeployed) {
    if (absl::Status s = GuardSnapshots(&command->options.work_dir, &run_dir); !s.ok()) {
      return fail(s, kExitError);
    }
  }
  std::vector<std::string> args(argv, argv + argc);
  args[0] = "graphsieve-eval";
  const absl::Status status = RunMainCommand(*command, absl::StrJoin(args, " "));
  if (!status.ok()) return fail(status, kExitError);
  return 0;
}

}  // namespace
}  // namespace graphsieve::eval

int main(int argc, char** argv) { return graphsieve::eval::Main(argc, argv); }
