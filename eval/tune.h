// graphsieve-eval tune: which rule should the builder publish for this log?
//
// The project's selection protocol (docs/EVALUATION.md "Choosing the rule on
// your own log") on a user's own log, in the deployed mode: per seed an
// earlier period of the log builds a real snapshot, the later period's
// training part is rated by the server's scorer and the target model is
// trained on each candidate's sample; the test is the later period's held-out
// part, or the user's own randomly exposed slice (--test). Every candidate is
// paired with uniform at the same α per seed (common random numbers), uniform
// is also trained at larger α and unsampled (the curve the budget saved is read
// from), and the choice follows SelectRule (eval/tune_selection.h):
// non-inferiority, then the largest established budget saved; `uniform` is a
// legitimate answer. This is verdict's protocol (eval/verdict.h: the same
// experiment, intervals and budget arithmetic) over a grid of candidates
// instead of the default alone; verdict remains its one-candidate fast form.
//
// Thread-safety: the functions are pure functions of their inputs.
#ifndef GRAPHSIEVE_EVAL_TUNE_H_
#define GRAPHSIEVE_EVAL_TUNE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/io/log_reader.h"
#include "eval/experiment.h"
#include "eval/model.h"
#include "eval/tune_selection.h"
#include "eval/verdict.h"

namespace graphsieve::eval {

// One rule tune can choose: the eval's method and its mixture κ, and the
// graphsieve-build flags that publish the same rule.
struct TuneCandidate {
  std::string name;    // e.g. "graph kappa=1 eta=0.5"
  std::string method;  // the eval's MethodSpec name (experiment.h), e.g. "maec-prop-mix-exp0.5"
  double kappa = 0.0;  // mixture κ (0 for uniform)
  double exposure_power = 0.0;
  bool is_default = false;  // graphsieve-build's default rule
  bool needs_pilot = false;
  // graphsieve-build can publish it from the log alone (every candidate can:
  // the pilot rules' pilot is the builder's built-in one, measured as such).
  bool deployable = true;
};

// The candidates for `kappas` × η ∈ {0, 0.5, 1} (the graph rule), the pilot
// rules opt-mix and max-mix for `kappas` when `with_pilot`, and the default
// (κ 1, η 0) whether or not `kappas` holds 1. Uniform is not among them (it is
// the reference every candidate is paired with).
std::vector<TuneCandidate> TuneCandidates(absl::Span<const double> kappas, bool with_pilot);

// The graphsieve-build flags that publish `c` at `alpha`, one per line as a
// flag file holds them (uniform when `c` is null).
std::vector<std::string> BuildFlagsFor(const TuneCandidate* c, double alpha);

struct TuneOptions {
  std::string model = "fm";  // target model (lr | fm | mlp)
  double alpha = 0.2;        // the compared kept share of negatives
  std::vector<double> kappas = {0.25, 1.0};
  // The pilot rules, with the builder's built-in pilot (PilotSource::kBuiltIn:
  // fitted by each snapshot build; experiment.pilot is not read).
  bool with_pilot = true;
  SelectionRule selection;
  // Uniform's further points (and unsampled): 1.5α, 2.5α and 4α below 1 when empty.
  std::vector<double> curve_alphas;
  // A log with more instances is cut to a seeded subset of its users holding at
  // most this many (0 = never): the protocol trains 4 + |candidates| models a seed.
  uint64_t max_instances = 2'000'000;
  // seeds (>= 2), model settings, threads, progress, work_dir,
  // later_fraction, default_policy; mode, methods, alphas and grids are set here.
  ExperimentOptions experiment;
};

// One row of the report.
struct TuneRow {
  TuneCandidate candidate;
  PairedInterval gain;  // candidate − uniform at alpha (AUC)
  BudgetMatch budget;   // the α uniform needs to match it
  SavingEstimate saving;
  double mean_auc = 0.0;
  CandidateVerdict verdict;
  std::vector<std::string> skipped;  // seeds the pipeline refused, with its message
};

struct TuneReport {
  std::string input, mode, test;  // what was read, the mode line, what the test is
  uint64_t instances = 0, positives = 0, used_instances = 0, used_users = 0, users = 0;
  std::string subsample;  // empty, or how the log was cut (said in the report)
  int seeds = 0;
  double alpha = 0.2;
  std::string pilot;  // what the pilot score was
  std::vector<TuneRow> rows;
  int chosen = -1;  // index into rows; -1 = uniform
  // Uniform's curve: α ascending (alpha first, 1 = unsampled last) and mean AUC with its SE.
  std::vector<double> curve_alphas, curve_auc, curve_se;
  PairedInterval full_vs_uniform;
  // Unsampled measurably beats uniform at alpha (the interval above 0): only
  // then is there a budget to save, and a rule other than uniform can be chosen.
  bool sampling_costs = false;
  Recommendation recommendation = Recommendation::kNoGain;  // exit code as verdict's
  double seconds = 0.0;
};

// Keeps a seeded subset of the users of `log` (in a random order, while their
// impressions fit) so that at most `max_instances` remain; `timestamps` (may be
// empty) is cut alike. Returns the number of users kept; 0 when nothing was cut.
uint64_t SubsampleUsers(uint64_t max_instances, uint64_t seed, ImpressionLog* log,
                        std::vector<int64_t>* timestamps);

// The fewest positive impressions tune takes.
inline constexpr uint64_t kTuneMinPositives = 50;

// Runs the protocol. `unbiased_test` (may be null): the test instances on the
// log's dense indices (MapUnbiasedTest). Errors: INVALID_ARGUMENT naming
// `input` for too few positives; RunExperiment's; FAILED_PRECONDITION when
// uniform is trained on fewer than 2 seeds.
absl::StatusOr<TuneReport> RunTune(const ImpressionLog& log, absl::Span<const int64_t> timestamps,
                                   const Instances* unbiased_test, const TuneOptions& options,
                                   const std::string& input, const std::string& mode);

// The exit code: 0 a rule other than uniform was chosen; 3 uniform was chosen
// and the default rule is non-inferior; 4 uniform was chosen and the default
// loses to it (verdict's codes).
int TuneExitCode(const TuneReport& report);

// The report as Markdown, as JSON, and the AUC-against-α curve as an SVG picture.
std::string FormatTuneMarkdown(const TuneReport& report);
std::string FormatTuneJson(const TuneReport& report);
std::string FormatTuneSvg(const TuneReport& report);

// The flag file graphsieve-build reads with --flagfile: the chosen rule's
// flags and the provenance the manifest records (--tune_rule, --tune_date,
// --tune_report_digest). `date` is RFC 3339 UTC, `report_digest` the digest
// of the JSON report ("xxh3:" and 16 hex digits, ReportDigest).
std::string FormatFlagFile(const TuneReport& report, const std::string& date,
                           const std::string& report_digest);
std::string ReportDigest(const std::string& json_report);

}  // namespace graphsieve::eval

#endif  // GRAPHSIEVE_EVAL_TUNE_H_
