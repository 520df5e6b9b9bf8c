#include "eval/report.h"

#include <cmath>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"

namespace graphsieve::eval {
namespace {

using Key = std::tuple<std::string, std::string, double, double, double, double, double>;

Key KeyOf(const RunResult& r) {
  return {r.model, r.method, r.alpha, r.floor, r.gamma, r.kappa, r.pilot_kappa};
}

std::string PlusMinus(const Stat& s, int digits) {
  return absl::StrFormat("%.*f ± %.*f", digits, s.mean, digits, s.std);
}

std::string SignedPlusMinus(const Stat& s) {
  if (s.n == 0) return "–";
  return absl::StrFormat("%+.4f ± %.4f", s.mean, s.std);
}

// The rate rule's parameter: the floor ϱ, or κ of the mixture rule (with the
// pilot member's κ when it differs).
std::string RuleCell(const Summary& c) {
  if (c.kappa <= 0.0) return absl::StrFormat("%g", c.floor);
  if (c.pilot_kappa > 0.0 && c.pilot_kappa != c.kappa) {
    return absl::StrFormat("κ %g, pilot κ %g", c.kappa, c.pilot_kappa);
  }
  return absl::StrFormat("κ %g", c.kappa);
}

nlohmann::json StatJson(const Stat& s) { return {{"mean", s.mean}, {"std", s.std}, {"n", s.n}}; }

}  // namespace

Stat Summarise(const std::vector<double>& values) {
  Stat s;
  s.n = static_cast<int>(values.size());
  if (values.empty()) return s;
  for (double v : values) s.mean += v;
  s.mean /= s.n;
  if (s.n > 1) {
    double ss = 0.0;
    for (double v : values) ss += (v - s.mean) * (v - s.mean);
    s.std = std::sqrt(ss / (s.n - 1));
  }
  return s;
}

std::vector<Summary> SummariseRuns(const std::vector<RunResult>& runs) {
  std::vector<Key> order;
  std::map<Key, std::vector<const RunResult*>> groups;
  // (model, alpha, seed) -> AUC of uniform; (model, seed) -> AUC of full.
  std::map<std::tuple<std::string, double, uint64_t>, double> uniform_auc;
  std::map<std::pair<std::string, uint64_t>, double> full_auc;
  for (const RunResult& r : runs) {
    auto [it, inserted] = groups.try_emplace(KeyOf(r));
    if (inserted) order.push_back(KeyOf(r));
    it->second.push_back(&r);
    if (r.method == "uniform") uniform_auc[{r.model, r.alpha, r.seed}] = r.auc;
    if (r.method == "full") full_auc[{r.model, r.seed}] = r.auc;
  }
  std::vector<Summary> out;
  for (const Key& key : order) {
    const std::vector<const RunResult*>& g = groups[key];
    Summary s;
    std::tie(s.model, s.method, s.alpha, s.floor, s.gamma, s.kappa, s.pilot_kappa) = key;
    std::vector<double> auc, ll, ne, calibration, ndcg, kept, floor_share, one_share, d_uniform,
        d_full;
    std::vector<double> exact, inferred, by_default;
    for (const RunResult* r : g) {
      auc.push_back(r->auc);
      ll.push_back(r->log_loss);
      ne.push_back(r->normalised_entropy);
      calibration.push_back(r->calibration);
      ndcg.push_back(r->ndcg);
      kept.push_back(r->kept_negative_fraction);
      floor_share.push_back(r->negatives_at_floor);
      one_share.push_back(r->negatives_at_one);
      if (r->source_exact >= 0.0) {
        exact.push_back(r->source_exact);
        inferred.push_back(r->source_inferred);
        by_default.push_back(r->source_default);
      }
      if (auto u = uniform_auc.find({r->model, r->alpha, r->seed}); u != uniform_auc.end()) {
        d_uniform.push_back(r->auc - u->second);
      }
      if (auto f = full_auc.find({r->model, r->seed}); f != full_auc.end()) {
        d_full.push_back(r->auc - f->second);
      }
    }
    s.auc = Summarise(auc);
    s.log_loss = Summarise(ll);
    s.normalised_entropy = Summarise(ne);
    s.calibration = Summarise(calibration);
    s.ndcg = Summarise(ndcg);
    s.kept = Summarise(kept);
    s.at_floor = Summarise(floor_share);
    s.at_one = Summarise(one_share);
    if (s.method != "full") s.delta_auc_vs_uniform = Summarise(d_uniform);
    s.delta_auc_vs_full = Summarise(d_full);
    s.source_exact = Summarise(exact);
    s.source_inferred = Summarise(inferred);
    s.source_default = Summarise(by_default);
    out.push_back(std::move(s));
  }
  return out;
}

std::string FormatMarkdown(const ExperimentResult& result, const std::vector<Summary>& cells,
                           const ReportContext& context) {
  std::string md = absl::StrCat("### ", context.title, "\n\n");
  const bool deployed = !result.period_split.empty();
  std::string split = "split 80/10/10 by instance";
  if (deployed) {
    split = absl::StrFormat(
        "deployed mode: %s split into an earlier period (%d instances, the snapshot's input) and a "
        "later one (%d instances) split 80/10/10 by instance; the later training impressions are "
        "rated by graphsieve-server's scorer on the earlier period's snapshot",
        result.period_split == "time" ? "rating-time" : "seeded", result.earlier_instances,
        result.later_instances);
  }
  absl::StrAppendFormat(
      &md,
      "%d instances (%d positive, %.2f%%), %d users, %d items; %s "
      "(train %d, validation %d, test %d). Pilot score: %s. Mean ± sample std over %d seeds; "
      "ΔAUC is paired per seed (same split, same uniform numbers). Test: %s. Runtime %.0f s.\n\n",
      result.instances, result.positives,
      100.0 * result.positives / std::max<uint64_t>(1, result.instances), result.users,
      result.items, split, result.train_instances, result.validation_instances,
      result.test_instances, result.pilot, cells.empty() ? 0 : cells.front().auc.n,
      result.test_source, result.seconds);
  if (!context.command.empty()) absl::StrAppend(&md, "Command: `", context.command, "`\n\n");
  std::vector<std::string> models;
  for (const Summary& c : cells) {
    if (std::find(models.begin(), models.end(), c.model) == models.end()) models.push_back(c.model);
  }
  for (const std::string& model : models) {
    absl::StatusOr<ModelKind> kind = ParseModelKind(model);
    absl::StrAppend(&md, "Target model **", kind.ok() ? ModelKindDescription(*kind) : model.c_str(),
                    "**\n\n");
    absl::StrAppendFormat(
        &md,
        "| method | α | ϱ or κ | γ | kept neg. | neg. at ϱ / at 1 | test AUC | ΔAUC vs uniform | "
        "ΔAUC vs full | log-loss | NE | calibration | NDCG@%d |%s\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|%s\n",
        context.ndcg_k, deployed ? " source EXACT / INFERRED / DEFAULT |" : "",
        deployed ? "---|" : "");
    for (const Summary& c : cells) {
      if (c.model != model) continue;
      const bool full = c.method == "full";
      const bool pipeline = !full && c.method != "uniform";
      absl::StrAppendFormat(
          &md, "| %s | %s | %s | %s | %.3f | %s | %s | %s | %s | %s | %s | %s | %s |", c.method,
          full ? "1" : absl::StrFormat("%.2f", c.alpha), pipeline ? RuleCell(c) : "–",
          c.gamma > 0 ? absl::StrFormat("%g", c.gamma) : "–", c.kept.mean,
          pipeline ? absl::StrFormat("%.2f / %.3f", c.at_floor.mean, c.at_one.mean) : "–",
          PlusMinus(c.auc, 4), SignedPlusMinus(c.delta_auc_vs_uniform),
          full ? "–" : SignedPlusMinus(c.delta_auc_vs_full), PlusMinus(c.log_loss, 4),
          PlusMinus(c.normalised_entropy, 4), PlusMinus(c.calibration, 3), PlusMinus(c.ndcg, 4));
      if (deployed) {
        absl::StrAppend(&md, " ",
                        c.source_exact.n == 0
                            ? std::string("–")
                            : absl::StrFormat("%.3f / %.3f / %.3f", c.source_exact.mean,
                                              c.source_inferred.mean, c.source_default.mean),
                        " |");
      }
      absl::StrAppend(&md, "\n");
    }
    absl::StrAppend(&md, "\n");
  }
  if (!result.skipped.empty()) {
    absl::StrAppend(&md, "Not run (the pipeline refused these configurations for these data):\n\n");
    for (const std::string& s : result.skipped) absl::StrAppend(&md, "- ", s, "\n");
    absl::StrAppend(&md, "\n");
  }
  return md;
}

std::string FormatJson(const ExperimentResult& result, const std::vector<Summary>& cells,
                       const ReportContext& context) {
  nlohmann::json j;
  j["title"] = context.title;
  j["command"] = context.command;
  j["data"] = {{"instances", result.instances},
               {"positives", result.positives},
               {"users", result.users},
               {"items", result.items},
               {"train", result.train_instances},
               {"validation", result.validation_instances},
               {"test", result.test_instances},
               {"test_source", result.test_source},
               {"pilot", result.pilot},
               {"period_split", result.period_split},
               {"earlier_instances", result.earlier_instances},
               {"later_instances", result.later_instances}};
  j["seconds"] = result.seconds;
  j["skipped"] = result.skipped;
  j["ndcg_k"] = context.ndcg_k;
  for (const RunResult& r : result.runs) {
    j["runs"].push_back({{"method", r.method},
                         {"alpha", r.alpha},
                         {"floor", r.floor},
                         {"kappa", r.kappa},
                         {"pilot_kappa", r.pilot_kappa},
                         {"gamma", r.gamma},
                         {"model", r.model},
                         {"seed", r.seed},
                         {"auc", r.auc},
                         {"log_loss", r.log_loss},
                         {"normalised_entropy", r.normalised_entropy},
                         {"calibration", r.calibration},
                         {"ndcg", r.ndcg},
                         {"kept_negative_fraction", r.kept_negative_fraction},
                         {"kept_instances", r.kept_instances},
                         {"mean_rate_positive_pairs", r.mean_rate_positive_pairs},
                         {"negatives_at_floor", r.negatives_at_floor},
                         {"negatives_at_one", r.negatives_at_one},
                         {"epochs", r.epochs},
                         {"best_epoch", r.best_epoch},
                         {"rate_seconds", r.rate_seconds},
                         {"train_seconds", r.train_seconds},
                         {"source_exact", r.source_exact},
                         {"source_inferred", r.source_inferred},
                         {"source_default", r.source_default},
                         {"oracle_cv2", r.oracle_cv2},
                         {"predicted_recovery", r.predicted_recovery}});
  }
  for (const Summary& c : cells) {
    j["summary"].push_back({{"method", c.method},
                            {"alpha", c.alpha},
                            {"floor", c.floor},
                            {"kappa", c.kappa},
                            {"pilot_kappa", c.pilot_kappa},
                            {"gamma", c.gamma},
                            {"model", c.model},
                            {"auc", StatJson(c.auc)},
                            {"log_loss", StatJson(c.log_loss)},
                            {"normalised_entropy", StatJson(c.normalised_entropy)},
                            {"calibration", StatJson(c.calibration)},
                            {"ndcg", StatJson(c.ndcg)},
                            {"kept_negative_fraction", StatJson(c.kept)},
                            {"negatives_at_floor", StatJson(c.at_floor)},
                            {"negatives_at_one", StatJson(c.at_one)},
                            {"delta_auc_vs_uniform", StatJson(c.delta_auc_vs_uniform)},
                            {"delta_auc_vs_full", StatJson(c.delta_auc_vs_full)},
                            {"source_exact", StatJson(c.source_exact)},
                            {"source_inferred", StatJson(c.source_inferred)},
                            {"source_default", StatJson(c.source_default)}});
  }
  return j.dump(2) + "\n";
}

}  // namespace graphsieve::eval
