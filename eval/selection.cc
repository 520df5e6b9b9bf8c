#include "eval/selection.h"

#include <algorithm>
#include <cmath>

namespace graphsieve::eval {

bool NonInferior(const PairedInterval& gain, const SelectionCriteria& criteria) {
  // One seed has no standard error: non-inferiority cannot be established.
  if (gain.n < 2 || !std::isfinite(gain.se)) return false;
  return gain.mean >= -criteria.margin && gain.mean >= -criteria.se_multiple * gain.se;
}

SelectionResult SelectByNonInferiority(
    absl::Span<const std::string> rows,
    const std::map<std::string, std::map<std::string, RowEvidence>>& evidence,
    const SelectionCriteria& criteria) {
  SelectionResult out;
  double best = 0.0;
  for (const auto& [candidate, by_row] : evidence) {
    CandidateDecision d;
    d.candidate = candidate;
    d.complete = true;
    double saved = 0.0;
    for (const std::string& row : rows) {
      const auto it = by_row.find(row);
      if (it == by_row.end() || it->second.delta_auc.empty()) {
        d.complete = false;
        continue;
      }
      if (!NonInferior(IntervalOf(it->second.delta_auc), criteria)) d.failing_rows.push_back(row);
      if (it->second.budget_saved.has_value()) {
        saved += *it->second.budget_saved;
        ++d.rows_with_budget;
      }
    }
    d.mean_budget_saved = d.rows_with_budget > 0 ? saved / d.rows_with_budget : 0.0;
    d.passes = d.complete && d.failing_rows.empty() && !rows.empty();
    if (d.passes && d.mean_budget_saved > best) {
      best = d.mean_budget_saved;
      out.winner = candidate;
    }
    out.decisions.push_back(std::move(d));
  }
  return out;
}

std::optional<double> RowBudget(absl::Span<const double> alphas,
                                const std::vector<std::vector<double>>& diffs_per_alpha) {
  if (alphas.empty()) return std::nullopt;
  const BudgetMatch m = MatchAlpha(alphas, diffs_per_alpha);
  if (m.alpha.has_value()) return std::max(0.0, BudgetSaved(alphas.front(), *m.alpha));
  const double first = IntervalOf(diffs_per_alpha.front()).mean;
  const double last = IntervalOf(diffs_per_alpha.back()).mean;
  if (!(last > first)) return std::nullopt;
  return BudgetSaved(alphas.front(), m.largest_alpha);
}

}  // namespace graphsieve::eval
