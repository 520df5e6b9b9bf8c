// The selection of a rate rule by non-inferiority, then saving
// (docs/EVALUATION.md "Selection by non-inferiority, then saving").
//
// A candidate passes when on every row its paired gain over uniform at α
// (mean of the per-seed differences candidate − uniform) is at least
// −margin and no more than se_multiple standard errors below 0. Among the
// candidates that pass, the one with the largest mean budget saved (over the
// rows, at equal AUC) wins; uniform (saving 0) wins when no candidate passes
// with a positive saving. One rule, used by `graphsieve-eval select` and by
// anything else that chooses a rule (a tuner), so the two cannot disagree.
//
// Thread-safety: pure functions.
#ifndef GRAPHSIEVE_EVAL_SELECTION_H_
#define GRAPHSIEVE_EVAL_SELECTION_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "eval/experiment.h"
#include "eval/verdict.h"

namespace graphsieve::eval {

struct SelectionCriteria {
  double margin = 0.0005;    // the largest loss in mean ΔAUC a passing row may have
  double se_multiple = 1.0;  // and at most this many standard errors below 0
};

// One candidate on one row.
struct RowEvidence {
  std::vector<double> delta_auc;  // per paired seed: candidate − uniform at α
  // The share of uniform's kept negatives the candidate does without at equal
  // AUC (RowBudget); nullopt when the row has no uniform α grid.
  std::optional<double> budget_saved;
};

struct CandidateDecision {
  std::string candidate;
  bool complete = false;  // measured on every row
  bool passes = false;    // complete and non-inferior on every row
  std::vector<std::string> failing_rows;
  double mean_budget_saved = 0.0;  // over the rows with a budget
  int rows_with_budget = 0;
};

struct SelectionResult {
  std::vector<CandidateDecision> decisions;  // in the order of the input map
  std::string winner = "uniform";
};

// Non-inferiority of one row's paired differences.
bool NonInferior(const PairedInterval& gain, const SelectionCriteria& criteria);

// evidence[candidate][row]. `rows`: every row a candidate must pass.
// Ties in saving go to the candidate first in name order.
SelectionResult SelectByNonInferiority(
    absl::Span<const std::string> rows,
    const std::map<std::string, std::map<std::string, RowEvidence>>& evidence,
    const SelectionCriteria& criteria);

// The budget saved at equal quality from a row's α curve: `alphas` the
// candidate's α and uniform's larger ones (ascending; 1 = unsampled), per α the
// per-seed differences uniform(α) − candidate(α₀) in the quality (AUC, or
// −log-loss for equal log-loss). 1 − α₀/α at MatchAlpha's crossing; 0 when
// uniform is already as good at α₀; 1 − α₀/α_max (a lower bound) when uniform
// never catches up within the grid although it improves with α; nullopt when
// it never catches up and does not improve (the quality is not monotone in α,
// e.g. log-loss on a test whose click rate differs from the log's).
std::optional<double> RowBudget(absl::Span<const double> alphas,
                                const std::vector<std::vector<double>>& diffs_per_alpha);

}  // namespace graphsieve::eval

#endif  // GRAPHSIEVE_EVAL_SELECTION_H_
