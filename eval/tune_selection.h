// The selection rule of graphsieve-eval tune (docs/EVALUATION.md "Choosing the
// rule on your own log"): non-inferiority first, then the budget saved. Each
// row's non-inferiority is decided by eval/selection.h's NonInferior, the
// function `graphsieve-eval select` uses, so the two cannot disagree; this
// adapts it to tune's candidates (one saving with its interval each).
//
//  1. A candidate passes when, on every row, its paired ΔAUC against uniform
//     (candidate − uniform, one difference per seed) has a mean of at least
//     −margin and lies no more than `max_se_below` standard errors below 0.
//  2. Among those that pass, the one with the largest mean budget saved at
//     equal AUC wins. Uniform itself always passes and saves 0, so it is the
//     answer when no passing candidate saves more than 0 (ties keep the
//     earlier candidate, and uniform comes first).
// The caller decides whether a budget saved is measurable at all (tune: only
// when unsampled training measurably beats uniform at α, so that uniform's
// AUC-against-α curve rises; on a flat curve every "saving" is noise).
//
// Thread-safety: pure functions.
#ifndef GRAPHSIEVE_EVAL_TUNE_SELECTION_H_
#define GRAPHSIEVE_EVAL_TUNE_SELECTION_H_

#include <string>
#include <vector>

#include "absl/types/span.h"

namespace graphsieve::eval {

// The share of uniform's kept negatives a candidate does without at equal AUC
// (1 − α / the α uniform needs to match it), with the ends of its interval.
// NaN = not measured (the candidate is then never chosen for its saving).
struct SavingEstimate {
  double mean = 0.0, low = 0.0, high = 0.0;
};

struct SelectionCandidate {
  std::string name;
  // Per row, the paired differences candidate − uniform of test AUC, one per seed.
  std::vector<std::vector<double>> delta_auc;
  SavingEstimate saving;
};

struct SelectionRule {
  double margin = 0.0005;     // a mean ΔAUC below −margin fails
  double max_se_below = 1.0;  // a mean more than this many standard errors below 0 fails
};

struct CandidateVerdict {
  bool passes = false;  // non-inferior on every row
  bool saves = false;   // passes, and its mean saving is above 0
  std::string failed;   // why it does not pass ("row 0: dAUC -0.0012 < -0.0005"), else empty
};

struct Selection {
  int chosen = -1;  // index into the candidates; -1 = uniform (none passes and saves)
  std::vector<CandidateVerdict> verdicts;  // one per candidate
};

// Non-inferiority of one row's paired differences under `rule`; `why` gets the
// reason when it fails. Fewer than 2 differences fail (no standard error).
bool NonInferior(absl::Span<const double> delta_auc, const SelectionRule& rule, std::string* why);

// The rule above over `candidates` (uniform need not be among them: choosing
// none means uniform).
Selection SelectRule(absl::Span<const SelectionCandidate> candidates,
                     const SelectionRule& rule = SelectionRule{});

}  // namespace graphsieve::eval

#endif  // GRAPHSIEVE_EVAL_TUNE_SELECTION_H_
