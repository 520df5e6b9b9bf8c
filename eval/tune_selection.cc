#include "eval/tune_selection.h"

#include <cmath>

#include "absl/strings/str_format.h"
#include "eval/selection.h"
#include "eval/verdict.h"

namespace graphsieve::eval {

bool NonInferior(absl::Span<const double> delta_auc, const SelectionRule& rule, std::string* why) {
  // The decision is eval/selection.h's NonInferior, the one rule `select` and
  // tune share; this adds the reason a failing row gets in tune's report.
  const PairedInterval d = IntervalOf(delta_auc);
  if (NonInferior(d, SelectionCriteria{rule.margin, rule.max_se_below})) {
    why->clear();
    return true;
  }
  if (d.n < 2 || !std::isfinite(d.se)) {
    *why = absl::StrFormat("%d paired seeds; non-inferiority needs at least 2", d.n);
  } else if (d.mean < -rule.margin) {
    *why = absl::StrFormat("dAUC %+.4f < -%.4f", d.mean, rule.margin);
  } else {
    *why = absl::StrFormat("dAUC %+.4f is more than %g SE (%.4f) below uniform", d.mean,
                           rule.max_se_below, d.se);
  }
  return false;
}

Selection SelectRule(absl::Span<const SelectionCandidate> candidates, const SelectionRule& rule) {
  Selection out;
  double best = 0.0;  // uniform's saving
  for (size_t c = 0; c < candidates.size(); ++c) {
    const SelectionCandidate& cand = candidates[c];
    CandidateVerdict v;
    v.passes = !cand.delta_auc.empty();
    if (!v.passes) v.failed = "no rows";
    for (size_t r = 0; r < cand.delta_auc.size() && v.passes; ++r) {
      std::string why;
      if (!NonInferior(cand.delta_auc[r], rule, &why)) {
        v.passes = false;
        v.failed = absl::StrFormat("row %d: %s", r, why);
      }
    }
    v.saves = v.passes && std::isfinite(cand.saving.mean) && cand.saving.mean > 0.0;
    if (v.saves && cand.saving.mean > best) {
      best = cand.saving.mean;
      out.chosen = static_cast<int>(c);
    }
    out.verdicts.push_back(std::move(v));
  }
  return out;
}

}  // namespace graphsieve::eval
