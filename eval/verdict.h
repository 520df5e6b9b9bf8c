// graphsieve-eval verdict: should this log be sampled with graphsieve's rates?
//
// On a user's own log, trains the target model on negatives subsampled at
// α = 0.2 by the builder's default rule and by uniform sampling (paired per
// seed: same split, same uniform numbers), and uniform at larger α and
// unsampled, then reports
//   * the gain: ΔAUC default − uniform at α 0.2, mean, standard error and a
//     95 % Student-t interval over seeds;
//   * the budget saved at equal AUC: the α uniform needs to reach the
//     default's AUC at α 0.2 (log-linear interpolation of the paired curve,
//     with the interval where the curve's 95 % band crosses), and so the share
//     of uniform's kept negatives the default does without;
//   * a one-line recommendation and the matching exit code.
// The deployed mode (a snapshot of the earlier period rates the later one) runs
// when the log has a time column, the random split otherwise.
//
// Thread-safety: the pure functions are; RunVerdict is a pure function of its inputs.
#ifndef GRAPHSIEVE_EVAL_VERDICT_H_
#define GRAPHSIEVE_EVAL_VERDICT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/io/log_reader.h"
#include "eval/experiment.h"

namespace graphsieve::eval {

// Mean of paired differences with its standard error and 95 % interval
// (Student t with n - 1 degrees of freedom). n < 2: se and the bounds are NaN.
struct PairedInterval {
  double mean = 0.0, se = 0.0, low = 0.0, high = 0.0;
  int n = 0;
};
PairedInterval IntervalOf(absl::Span<const double> diffs);
double StudentT975(int degrees_of_freedom);  // 1.96 beyond 30

// The α uniform needs to match a target: per grid α (ascending; 1 = unsampled)
// the paired differences uniform(α) − target per seed. `alpha` is where their
// mean rises through 0 scanning up, `low` where the interval's upper bound
// does, `high` where its lower bound does (log-linear between grid points).
// nullopt = never within the grid (uniform does not catch up even at the
// largest α); a value equal to the smallest α = already there.
struct BudgetMatch {
  std::optional<double> alpha, low, high;
  double smallest_alpha = 0.0, largest_alpha = 0.0;
};
BudgetMatch MatchAlpha(absl::Span<const double> alphas,
                       const std::vector<std::vector<double>>& diffs_per_alpha);
// Share of uniform's kept negatives the target does without: 1 − target_alpha / alpha.
double BudgetSaved(double target_alpha, double alpha);

// seed -> AUC of the runs of (model, method, alpha) among `runs`; the unsampled
// `full` runs answer at alpha >= 1.
std::map<uint64_t, double> AucBySeed(const std::vector<RunResult>& runs, const std::string& model,
                                     const std::string& method, double alpha);
// a − b for every seed both hold, in seed order.
std::vector<double> PairedDifferences(const std::map<uint64_t, double>& a,
                                      const std::map<uint64_t, double>& b);

enum class Recommendation {
  kDeploy,      // the gain's 95 % interval is above 0
  kNoGain,      // the interval contains 0: uniform is as good at this precision
  kKeepUniform  // the interval is below 0: the default loses to uniform
};
Recommendation Recommend(const PairedInterval& gain);
// 0 deploy, 3 no measurable gain, 4 keep uniform (1 and 2 are errors and usage).
int ExitCode(Recommendation r);

struct VerdictOptions {
  std::string model = "fm";  // target model (lr | fm | mlp)
  double alpha = 0.2;        // the compared kept share of negatives
  double kappa =
      1.0;  // the judged rule's mixture κ: the builder's default (--kappa of graphsieve-build)
  std::vector<double> budget_alphas = {0.3, 0.5};  // uniform's further points (and unsampled)
  // seeds, model settings, threads, progress, work_dir; experiment.pipeline.exposure_power is
  // the judged rule's exposure discount η (--exposure_power of graphsieve-build)
  ExperimentOptions experiment;
};

struct VerdictReport {
  std::string mode;  // "deployed (time column 'ts')" or "random split (no time column)"
  uint64_t instances = 0, positives = 0;
  int seeds = 0;
  PairedInterval gain;             // default − uniform at alpha
  PairedInterval full_vs_uniform;  // unsampled − uniform at alpha
  BudgetMatch budget;
  double alpha = 0.2;
  double kappa = 1.0;           // the judged rule's mixture κ
  double exposure_power = 0.0;  // the judged rule's exposure discount η
  Recommendation recommendation = Recommendation::kNoGain;
};

// Runs the two experiments (default and uniform at alpha; uniform at the
// budget alphas and unsampled) on `log`. `timestamps` non-empty = deployed mode.
// Errors: RunExperiment's; FAILED_PRECONDITION when fewer than 2 seeds pair
// the default rule with uniform (one seed, or the rule refused on the rest),
// so every interval of the report is defined.
absl::StatusOr<VerdictReport> RunVerdict(const ImpressionLog& log,
                                         absl::Span<const int64_t> timestamps,
                                         const VerdictOptions& options, const std::string& mode);

// Reads the time column `column` of a delimited log (plain or gzip), one value per data row
// in file order: the impressions' times for the deployed mode. The file is read as
// ReadImpressionLog reads it with `options` (core/io's line reader, CSV quoting and field
// parsing; the same delimiter detection, header-less layout, BOM, CRLF and blank lines).
// A time is a whole number >= 0 (an integer, or a number without fraction up to 2^53).
// Errors: the file's; INVALID_ARGUMENT "<file>:<line>: column '<column>': ..." for a missing
// column, a row of the wrong width or a value that is not a time; for a MIND log or
// standard input ("-", which cannot be read twice).
absl::StatusOr<std::vector<int64_t>> ReadTimeColumn(const std::string& path,
                                                    const std::string& column,
                                                    const LogReaderOptions& options);

// The printed verdict: the figures with their intervals and the one-line recommendation last.
std::string FormatVerdict(const VerdictReport& report);

}  // namespace graphsieve::eval

#endif  // GRAPHSIEVE_EVAL_VERDICT_H_
