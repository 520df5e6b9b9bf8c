#include "eval/select_command.h"

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"

namespace graphsieve::eval {
namespace {

// One measured run of a row, as the selection reads it.
struct Measured {
  double auc = 0.0, log_loss = 0.0, ne = 0.0, calibration = 0.0, predicted_recovery = -1.0;
};

// (method, alpha, floor, kappa, pilot_kappa, gamma): the candidate's run key.
using Key = std::tuple<std::string, double, double, double, double, double>;
// row -> key -> seed -> measured
using Rows = std::map<std::string, std::map<Key, std::map<uint64_t, Measured>>>;

std::string CandidateName(const Key& k) {
  const auto& [method, alpha, floor, kappa, pilot_kappa, gamma] = k;
  std::string s = method;
  if (floor > 0.0) absl::StrAppendFormat(&s, " ϱ=%g", floor);
  if (kappa > 0.0) {
    absl::StrAppendFormat(&s, " κ=%g", kappa);
    if (pilot_kappa > 0.0 && pilot_kappa != kappa) absl::StrAppendFormat(&s, "/%g", pilot_kappa);
  }
  if (gamma > 0.0) absl::StrAppendFormat(&s, " γ=%g", gamma);
  return s;
}

absl::Status LoadFile(const std::string& label, const std::string& path, Rows* rows,
                      std::vector<std::string>* order) {
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError(absl::StrCat(path, ": cannot be read"));
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("runs") || !j["runs"].is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a graphsieve-eval JSON output (no 'runs' array)"));
  }
  for (const nlohmann::json& r : j["runs"]) {
    auto num = [&](const char* field) { return r.value(field, 0.0); };
    if (!r.contains("method") || !r.contains("model") || !r.contains("seed") ||
        !r.contains("auc")) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": a run lacks method, model, seed or auc"));
    }
    const std::string row = absl::StrCat(label, ", ", r["model"].get<std::string>());
    if (rows->find(row) == rows->end()) order->push_back(row);
    Measured m{num("auc"), num("log_loss"), num("normalised_entropy"), num("calibration"),
               r.value("predicted_recovery", -1.0)};
    const Key key{r["method"].get<std::string>(),
                  num("alpha"),
                  num("floor"),
                  num("kappa"),
                  num("pilot_kappa"),
                  num("gamma")};
    (*rows)[row][key][r["seed"].get<uint64_t>()] = m;
  }
  return absl::OkStatus();
}

std::vector<double> Paired(const std::map<uint64_t, Measured>& a,
                           const std::map<uint64_t, Measured>& b,
                           double (*value)(const Measured&)) {
  std::vector<double> d;
  for (const auto& [seed, m] : a) {
    if (auto it = b.find(seed); it != b.end()) d.push_back(value(m) - value(it->second));
  }
  return d;
}
double Auc(const Measured& m) { return m.auc; }
double NegLogLoss(const Measured& m) { return -m.log_loss; }
double Ne(const Measured& m) { return m.ne; }

std::string Signed(const PairedInterval& i, int digits = 4) {
  if (i.n == 0) return "–";
  if (i.n < 2) return absl::StrFormat("%+.*f", digits, i.mean);
  return absl::StrFormat("%+.*f ± %.*f", digits, i.mean, digits, i.se);
}

// Per row: the uniform runs by α (the smallest is the candidates' α) and full.
struct RowCurve {
  std::vector<double> alphas;
  std::vector<const std::map<uint64_t, Measured>*> uniform;  // per alpha (1 = full)
};

RowCurve CurveOf(const std::map<Key, std::map<uint64_t, Measured>>& runs) {
  std::map<double, const std::map<uint64_t, Measured>*> by_alpha;
  for (const auto& [k, seeds] : runs) {
    if (std::get<0>(k) == "uniform") by_alpha[std::get<1>(k)] = &seeds;
    if (std::get<0>(k) == "full") by_alpha[1.0] = &seeds;
  }
  RowCurve c;
  for (const auto& [a, s] : by_alpha) {
    c.alphas.push_back(a);
    c.uniform.push_back(s);
  }
  return c;
}

std::optional<double> BudgetOf(const RowCurve& c, const std::map<uint64_t, Measured>& cand,
                               double (*value)(const Measured&)) {
  std::vector<std::vector<double>> diffs;
  for (const auto* u : c.uniform) diffs.push_back(Paired(*u, cand, value));
  return RowBudget(c.alphas, diffs);
}

std::string Percent(const std::optional<double>& v) {
  return v.has_value() ? absl::StrFormat("%.0f%%", 100 * *v) : "n/a";
}

}  // namespace

absl::StatusOr<std::string> RunSelect(absl::Span<const std::string> row_args,
                                      const SelectionCriteria& criteria) {
  if (row_args.empty()) {
    return absl::InvalidArgumentError("select: give at least one ROW=FILE.json[,FILE.json...]");
  }
  Rows rows;
  std::vector<std::string> order;
  for (const std::string& arg : row_args) {
    const size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("select: '", arg, "' is not ROW=FILE.json[,FILE.json...]"));
    }
    for (absl::string_view f : absl::StrSplit(arg.substr(eq + 1), ',', absl::SkipEmpty())) {
      if (absl::Status s = LoadFile(arg.substr(0, eq), std::string(f), &rows, &order); !s.ok()) {
        return s;
      }
    }
  }
  std::string md;
  absl::StrAppend(
      &md,
      "| row | seeds | AUC full | AUC uniform | full − uniform | best oracle rule: gain "
      "(recovery) | R* predicted (pure oracle) |\n|---|---|---|---|---|---|---|\n");
  std::map<std::string, std::map<std::string, RowEvidence>> evidence;
  // candidate -> row -> the table cell
  std::map<std::string, std::map<std::string, std::string>> cells;
  std::map<std::string, double> oracle_gain;  // row -> mean gain of the oracle
  for (const std::string& row : order) {
    const auto& runs = rows[row];
    const RowCurve curve = CurveOf(runs);
    if (curve.alphas.empty() || curve.alphas.front() >= 1.0) {
      return absl::InvalidArgumentError(absl::StrCat("select: row '", row, "' has no uniform run"));
    }
    const double alpha = curve.alphas.front();
    const auto& uniform = *curve.uniform.front();
    const std::map<uint64_t, Measured>* full =
        curve.alphas.back() >= 1.0 ? curve.uniform.back() : nullptr;
    PairedInterval gap;
    if (full != nullptr) gap = IntervalOf(Paired(*full, uniform, Auc));
    // The oracle's gain: the best of the oracle rules measured on the row (oracle π ∝ p·h_Q,
    // oracle-p, oracle-mix), named; R* from the pure oracle's CV².
    std::string oracle_cell = "–", predicted_cell = "–";
    for (const auto& [k, seeds] : runs) {
      const std::string& method = std::get<0>(k);
      if (method.rfind("oracle", 0) != 0 || std::get<1>(k) != alpha) continue;
      const PairedInterval g = IntervalOf(Paired(seeds, uniform, Auc));
      if (method == "oracle") {
        double r = 0.0;
        for (const auto& [seed, m] : seeds) r += m.predicted_recovery;
        predicted_cell = absl::StrFormat("%.0f%%", 100 * r / std::max<size_t>(1, seeds.size()));
      }
      if (oracle_gain.count(row) && oracle_gain[row] >= g.mean) continue;
      oracle_gain[row] = g.mean;
      oracle_cell = absl::StrCat(CandidateName(k), ": ", Signed(g));
      if (gap.n > 0 && gap.mean > 0) {
        absl::StrAppendFormat(&oracle_cell, " (%+.0f%%)", 100 * g.mean / gap.mean);
      }
    }
    double au = 0.0, af = 0.0;
    for (const auto& [seed, m] : uniform) au += m.auc / uniform.size();
    if (full != nullptr) {
      for (const auto& [seed, m] : *full) af += m.auc / full->size();
    }
    absl::StrAppendFormat(&md, "| %s | %d | %s | %.4f | %s | %s | %s |\n", row, uniform.size(),
                          full ? absl::StrFormat("%.4f", af) : "–", au, Signed(gap), oracle_cell,
                          predicted_cell);
    for (const auto& [k, seeds] : runs) {
      const std::string& method = std::get<0>(k);
      if (method == "full" || std::get<1>(k) != alpha) continue;
      const std::string name = CandidateName(k);
      RowEvidence e;
      e.delta_auc = Paired(seeds, uniform, Auc);
      const PairedInterval g = IntervalOf(e.delta_auc);
      std::string cell = method == "uniform" ? "0 (reference)" : Signed(g);
      if (method != "uniform" && gap.n > 0 && gap.mean > 0) {
        absl::StrAppendFormat(&cell, " (%.0f%%", 100 * g.mean / gap.mean);
        if (oracle_gain.count(row) && oracle_gain[row] > 0) {
          absl::StrAppendFormat(&cell, "; %.0f%% of oracle", 100 * g.mean / oracle_gain[row]);
        }
        absl::StrAppend(&cell, ")");
      }
      if (curve.alphas.size() > 1) {
        e.budget_saved = BudgetOf(curve, seeds, Auc);
        const std::optional<double> ll = BudgetOf(curve, seeds, NegLogLoss);
        absl::StrAppend(&cell, "; saved ", Percent(e.budget_saved), " AUC / ", Percent(ll), " LL");
      }
      const PairedInterval dne = IntervalOf(Paired(seeds, uniform, Ne));
      double cal = 0.0;
      for (const auto& [seed, m] : seeds) cal += m.calibration / seeds.size();
      if (method != "uniform") absl::StrAppend(&cell, "; ΔNE ", Signed(dne));
      absl::StrAppendFormat(&cell, "; cal. %.3f", cal);
      if (method != "uniform" && !NonInferior(g, criteria)) absl::StrAppend(&cell, " **✗**");
      cells[name][row] = cell;
      if (method != "uniform") evidence[name][row] = std::move(e);
    }
  }
  const SelectionResult result = SelectByNonInferiority(order, evidence, criteria);
  absl::StrAppend(&md,
                  "\nPer candidate and row: ΔAUC vs uniform ± paired SE (recovery of full − "
                  "uniform; share of the oracle's gain); budget saved at equal AUC / at "
                  "equal log-loss; ΔNE vs uniform; calibration (mean predicted / observed "
                  "CTR). ✗: the row fails non-inferiority.\n\n| candidate |");
  for (const std::string& row : order) absl::StrAppend(&md, " ", row, " |");
  absl::StrAppend(&md, " passes | mean saved |\n|---|");
  for (size_t i = 0; i < order.size() + 2; ++i) absl::StrAppend(&md, "---|");
  absl::StrAppend(&md, "\n");
  auto line = [&](const std::string& name, const std::string& verdict, const std::string& saved) {
    absl::StrAppend(&md, "| ", name, " |");
    for (const std::string& row : order) {
      auto it = cells[name].find(row);
      absl::StrAppend(&md, " ", it == cells[name].end() ? "not run" : it->second, " |");
    }
    absl::StrAppend(&md, " ", verdict, " | ", saved, " |\n");
  };
  for (const auto& [name, by_row] : cells) {
    if (name == "uniform") line(name, "reference", "0%");
  }
  for (const CandidateDecision& d : result.decisions) {
    std::string verdict = d.passes ? "yes" : (!d.complete ? "not run on every row" : "no");
    if (!d.failing_rows.empty()) absl::StrAppend(&verdict, " (", d.failing_rows.size(), " rows)");
    line(d.candidate, verdict,
         d.rows_with_budget ? absl::StrFormat("%.0f%%", 100 * d.mean_budget_saved) : "–");
  }
  absl::StrAppendFormat(&md,
                        "\nSelected (non-inferior on every row: mean ΔAUC ≥ −%g and ≥ −%g SE; "
                        "then the largest mean budget saved at equal AUC): **%s**\n",
                        criteria.margin, criteria.se_multiple, result.winner);
  return md;
}

}  // namespace graphsieve::eval
