// The evaluation experiment: split a log, compute sampling rates on the
// training part with each method, draw the subsample, train the target models
// with the log-odds correction and measure them on the test part.
//
// Per seed s the split, the pilot model, the uniform numbers of the keep
// decisions and the model initialisation are all derived from s. Within a seed
// every method sees the same split and the same uniform number per instance
// (common random numbers), so differences between methods are paired.
//
// Thread-safety: RunExperiment is a pure function of its inputs.
#ifndef GRAPHSIEVE_EVAL_EXPERIMENT_H_
#define GRAPHSIEVE_EVAL_EXPERIMENT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/io/log_reader.h"
#include "core/maec/pipeline.h"
#include "core/serving/default_policy.h"
#include "eval/model.h"
#include "eval/split.h"

namespace graphsieve::eval {

// A named sampling method of the evaluation.
//   full       no sampling (all negatives, offset 0)
//   uniform    every negative kept with probability alpha
//   opt        Opt-Sampling: rates from the pilot score (pipeline kOpt)
//   opt-prop   Opt-Sampling with uncertainty + score propagation of the pilot score
//   maec       MA-EC hardness, no propagation
//   maec-u     MA-EC with uncertainty propagation only
//   maec-prop  MA-EC with uncertainty and score propagation
//   max        max-ensemble of maec-prop and opt (rescaled to alpha)
//   max-raw    max-ensemble of maec (no propagation) and opt
//   mean, product  the other ensembles of maec-prop and opt
//   maec-prop-sqrt, opt-sqrt  investigation: rates from the square root of the
//              method's final score (a flatter rate distribution), refit to alpha
//   NAME-mix   for maec, maec-u, maec-prop, opt, max, max-raw: the same with the
//              mixture rate rule (κ grid instead of the floor grid)
//   oracle     π ∝ p·h_Q from the generator's truth: p the pair's true click
//              probability, h_Q its leverage under the measured test's exposure
//              (eval/leverage.h); needs the truth (--truth_col)
//   oracle-p   π ∝ p (the truth without the leverage)
//   oracle-mix the oracle's score p·h_Q under the mixture rule (κ grid)
//   Candidates (offline only; docs/EVALUATION.md "Candidates"), each the mixture
//   rule on a transformed score of maec-prop-mix or opt-mix:
//   maec-prop-mix-lev, opt-mix-lev    score × √(1/P_u + 1/P_i) (P = training positives)
//   maec-prop-mix-levr, opt-mix-levr  score × h_Q with Q of a uniformly exposed test
//   maec-prop-mix-pos0.1 .. pos0.4    score / P_i^η, η counted on the item's positives
//   maec-prop-mix-user                the mixture rule fitted per user (each user's
//                                     negatives' mean rate = α)
struct MethodSpec {
  enum class Kind { kFull, kUniform, kPipeline, kOracle } kind = Kind::kPipeline;
  // A transform of the pipeline's final score before the mixture rule is refitted.
  enum class Transform { kNone, kLeverageOwn, kLeverageRandom, kItemPositives, kPerUser };
  Transform transform = Transform::kNone;
  double transform_power = 0.0;  // kItemPositives: η
  bool oracle_leverage = true;   // kOracle: p·h_Q (true) or p alone
  std::string name;
  Method method = Method::kMaec;
  bool uncertainty_propagation = false;
  bool score_propagation = false;
  bool correct_pilot = false;
  double score_power = 1.0;  // rates from score^power (1 = the pipeline's own rates)
  bool mixture = false;  // the mixture rate rule π = min(1, ρ(s/s̄ + κ)) instead of the floor
  // The exposure discount η of the pipeline (PipelineOptions::exposure_power, graphsieve-build
  // --exposure_power): rates from s / n_i^η, n_i = the item's impressions (0 = off).
  double exposure_power = 0.0;
  // An investigation variant (offline only): the score divided by the mean score over the
  // item's negative instances before the mixture fit.
  bool item_centred = false;
  bool is_investigation_variant() const {
    return score_power != 1.0 || item_centred || transform != Transform::kNone;
  }
  bool needs_pilot() const;
  bool uses_gamma() const;  // propagation on: the gamma grid applies
};
absl::StatusOr<MethodSpec> ParseMethodSpec(std::string_view name);
// The names above, comma separated (for --help).
std::string MethodSpecNames();

enum class PilotSource {
  kAuto,      // the log's pilot column when it has one, else kTrainLr
  kColumn,    // the log's pilot column (error when absent)
  kTrainLr,   // a one-hot logistic regression trained on the training part (unsampled)
  kTrainFm,   // an fm target model trained on the training part (unsampled): a near-oracle
  kTrainMlp,  // an mlp target model likewise
  kNone,      // no pilot: methods that need one are an error
  // graphsieve-build's built-in pilot (core/model/pilot.h), fitted by each
  // snapshot build on the earlier period (no pilot column is passed): what
  // `graphsieve-build --method=opt ...` without --pilot_col publishes, EXACT
  // and INFERRED rates alike. Deployed mode only.
  kBuiltIn,
};
bool IsTrainedPilot(PilotSource source);  // kTrainLr, kTrainFm or kTrainMlp
absl::StatusOr<PilotSource> ParsePilotSource(std::string_view name);

// kRandom: rates are computed on the training part itself (every training
// impression is a pair the builder saw). kDeployed: the builder sees an
// earlier period, the later period's impressions are rated by the server's
// scorer on that snapshot (eval/deployed.h, docs/EVALUATION.md).
enum class EvalMode { kRandom, kDeployed };
absl::StatusOr<EvalMode> ParseEvalMode(std::string_view name);  // "random" | "deployed"
const char* EvalModeName(EvalMode mode);

// The generator's true click probabilities (graphsieve-gen --truth, column
// true_prob), read only by the oracle methods: per log instance, and per
// instance of the unbiased test (empty without one).
struct TrueProbabilities {
  std::vector<float> log, unbiased_test;
};

struct ExperimentOptions {
  std::vector<std::string> methods = {"uniform", "opt", "maec", "maec-prop", "max"};
  std::vector<double> alphas = {0.2};   // target kept fraction of negatives
  std::vector<double> floors = {0.01};  // rate floor grid (pipeline methods)
  std::vector<double> gammas = {0.5};   // propagation weight grid (methods with propagation)
  // Mixture rule (methods named *-mix): the uniform share κ of the MA-EC
  // score, and of the pilot score in the pilot methods and ensembles
  // (pilot_kappas empty = the same κ as the graph member).
  std::vector<double> kappas = {0.25};
  std::vector<double> pilot_kappas;
  std::vector<ModelKind> models = {ModelKind::kLogistic, ModelKind::kFactorisation};
  ModelOptions model;        // training options; kind and seed set per run
  PipelineOptions pipeline;  // base options; method, alpha, floor, gamma, switches set per run
  SplitOptions split;        // fractions; the seed is set per run
  int seeds = 3;             // repetitions
  uint64_t first_seed = 1;   // seeds first_seed .. first_seed + seeds - 1
  PilotSource pilot = PilotSource::kAuto;
  // Trained pilots: 1 = scored in-sample (the model saw each pair's label);
  // K >= 2 = cross-fitted, each pair scored by a model trained on the other
  // K-1 folds (folds by a seeded hash of the pair), so no pair's own label
  // enters its pilot score.
  int pilot_folds = 1;
  int ndcg_k = 10;  // NDCG cutoff
  // Offset of kept positives: false = log of the pair's (counterfactual) rate,
  // the consistent estimator; true = 0 (pi read as 1 for positives), an ablation.
  bool zero_positive_offset = false;
  // Train the unsampled model too (the `full` rows). Off only for grids that
  // are reported next to a run that has it (it is the slowest model to train).
  bool include_full = true;
  EvalMode mode = EvalMode::kRandom;
  // kDeployed: share of the instances in the later period (by time when
  // timestamps are given, else a seeded draw per instance; deployed.h).
  double later_fraction = 0.5;
  // kDeployed: how the simulated server rates pairs with an unknown user or
  // item (graphsieve-server --default-policy).
  DefaultPolicy default_policy;
  // kDeployed: > 0 replays the later period in time order in chunks of this
  // much log time (timestamps needed): the training pairs first seen in
  // chunk k > 0 are rated by the base plus a delta version built by the delta
  // builder from the training impressions of chunks 0..k-1 (docs/FRESHNESS.md).
  // 0 = no refresh (the base rates everything). Methods that need a pilot
  // score are not supported with refresh.
  int64_t refresh_every = 0;
  // kDeployed: snapshots are built in fresh directories under this one
  // (empty = $TMPDIR or /tmp) and removed after use.
  std::string work_dir;
  std::function<void(const std::string&)> progress;  // one line per finished run; may be empty
  absl::Status Validate() const;
};

// One trained and measured model.
struct RunResult {
  std::string method;                            // MethodSpec name
  double alpha = 1.0, floor = 0.0, gamma = 0.0;  // alpha 1 for full; floor/gamma 0 when unused
  double kappa = 0.0,
         pilot_kappa = 0.0;  // mixture rule's κ (graph member, pilot member); 0 = floor rule
  std::string model;         // "lr" | "fm"
  uint64_t seed = 0;
  double auc = 0.0, log_loss = 0.0, ndcg = 0.0;
  // On the test: log-loss over the base rate's entropy, and mean predicted / observed CTR.
  double normalised_entropy = 0.0, calibration = 0.0;
  double kept_negative_fraction = 1.0;    // kept negative instances / training negatives
  uint64_t kept_instances = 0;            // training instances after sampling
  double mean_rate_positive_pairs = 1.0;  // mean counterfactual rate over positive pairs (offset)
  double negatives_at_floor = 0.0;        // share of training negatives whose rate is the floor
  double negatives_at_one = 0.0;          // share of training negatives kept with rate 1
  int epochs = 0, best_epoch = 0;
  double rate_seconds = 0.0, train_seconds = 0.0;
  // kDeployed, graph/pilot methods: shares of the training instances whose
  // rate was EXACT / INFERRED / DEFAULT; all -1 when not applicable.
  double source_exact = -1.0, source_inferred = -1.0, source_default = -1.0;
  // Oracle methods: CV² of p·h_Q over the training negatives and the predicted
  // recovery R* = CV² / ((1 + CV²)(1 − α)) (eval/leverage.h); -1 otherwise.
  double oracle_cv2 = -1.0, predicted_recovery = -1.0;
};

struct ExperimentResult {
  uint64_t instances = 0, positives = 0, users = 0, items = 0;
  uint64_t train_instances = 0, validation_instances = 0, test_instances = 0;
  std::string pilot;  // what the pilot score was ("column", "lr", "none")
  std::vector<RunResult> runs;
  // kDeployed: sizes of the two periods (the later one is split 80/10/10)
  // and how they were split ("time" or "seeded"); empty/0 in kRandom.
  uint64_t earlier_instances = 0, later_instances = 0;
  std::string period_split;
  // Whether the test shares the log's exposure: "the log's own test part" or,
  // with an unbiased test, a line naming it and its dropped impressions.
  std::string test_source = "a part of the log (shares the log's exposure)";
  // Configurations the pipeline refused for these data (e.g. alpha unreachable
  // with the floor because most negatives have zero conductance), with its
  // message; one entry per configuration and seed.
  std::vector<std::string> skipped;
  double seconds = 0.0;
};

// The fewest instances a log can have to be split 80/10/10 and evaluated.
inline constexpr size_t kMinLogInstances = 10;

// Errors: INVALID_ARGUMENT for bad options or a log that cannot be evaluated
// (empty, one class in a part), the pipeline's errors with the method named,
// except its INVALID_ARGUMENT for a configuration these data cannot meet,
// which is recorded in `skipped` and the experiment goes on.
// `timestamps` (kDeployed only, may be empty): per instance its time, < 0
// for untimed instances (AssignPeriods, deployed.h). `unbiased_test` (may be
// null): instances on the log's dense indices (eval/unbiased.h) that replace
// every seed's test part; the split's test part is then unused. `truth` (may
// be null; required by the oracle methods): the generator's probabilities,
// truth->unbiased_test aligned with `unbiased_test`.
absl::StatusOr<ExperimentResult> RunExperiment(const ImpressionLog& log,
                                               const ExperimentOptions& options,
                                               absl::Span<const int64_t> timestamps = {},
                                               const Instances* unbiased_test = nullptr,
                                               const TrueProbabilities* truth = nullptr);

}  // namespace graphsieve::eval

#endif  // GRAPHSIEVE_EVAL_EXPERIMENT_H_
