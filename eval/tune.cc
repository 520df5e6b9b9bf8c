#include "eval/tune.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "eval/random.h"
#include "nlohmann/json.hpp"
#include "xxhash.h"

namespace graphsieve::eval {
namespace {

constexpr double kGamma = 0.5;  // the builder's propagation weight (graphsieve-build --gamma)
constexpr double kEtas[] = {0.0, 0.5, 1.0};

// The eval's method name of the default rule with exposure discount η.
std::string GraphMethod(double eta) {
  if (eta == 0.0) return "maec-prop-mix";
  return absl::StrCat("maec-prop-mix-exp", eta);
}

bool Same(double a, double b) { return std::abs(a - b) < 1e-9; }

// seed -> AUC of the runs of `c` (uniform when null) at `alpha` among `runs`;
// the unsampled runs answer at alpha >= 1.
std::map<uint64_t, double> CandidateAuc(const std::vector<RunResult>& runs,
                                        const std::string& model, const TuneCandidate* c,
                                        double alpha) {
  if (c == nullptr || alpha >= 1.0) {
    return AucBySeed(runs, model, "uniform", alpha);
  }
  std::map<uint64_t, double> out;
  for (const RunResult& r : runs) {
    if (r.model == model && r.method == c->method && Same(r.alpha, alpha) &&
        Same(r.kappa, c->kappa)) {
      out[r.seed] = r.auc;
    }
  }
  return out;
}

double Mean(const std::map<uint64_t, double>& v) {
  double s = 0.0;
  for (const auto& [seed, x] : v) s += x;
  return v.empty() ? std::nan("") : s / static_cast<double>(v.size());
}

// The saving at equal AUC from where uniform's curve meets the candidate:
// 0 when uniform at alpha already does; beyond the grid, the saving at its
// largest α (a lower bound).
SavingEstimate SavingOf(const BudgetMatch& b, double alpha) {
  auto at = [&](const std::optional<double>& a) {
    return BudgetSaved(alpha, a.has_value() ? *a : b.largest_alpha);
  };
  return {at(b.alpha), at(b.low), at(b.high)};
}

std::string Num(double v) { return absl::StrFormat("%g", v); }

std::string SavingText(const TuneRow& r) {
  const SavingEstimate& s = r.saving;
  if (!std::isfinite(s.mean)) return "-";
  const char* beyond = r.budget.alpha.has_value() ? "" : ">= ";
  return absl::StrFormat("%s%.0f%% [%.0f%%, %s%.0f%%]", beyond, 100 * s.mean, 100 * s.low,
                         r.budget.high.has_value() ? "" : ">= ", 100 * s.high);
}

}  // namespace

std::vector<TuneCandidate> TuneCandidates(absl::Span<const double> kappas, bool with_pilot) {
  std::vector<TuneCandidate> out;
  std::vector<double> ks(kappas.begin(), kappas.end());
  if (std::none_of(ks.begin(), ks.end(), [](double k) { return Same(k, 1.0); })) ks.push_back(1.0);
  std::sort(ks.begin(), ks.end());
  for (double eta : kEtas) {
    for (double k : ks) {
      TuneCandidate c;
      c.name = absl::StrFormat("graph kappa=%g eta=%g", k, eta);
      c.method = GraphMethod(eta);
      c.kappa = k;
      c.exposure_power = eta;
      c.is_default = Same(k, 1.0) && eta == 0.0;
      out.push_back(std::move(c));
    }
  }
  if (with_pilot) {
    // The pilot rules, measured with the builder's built-in pilot (RunTune runs
    // them with PilotSource::kBuiltIn), so their flags publish what was measured.
    for (const char* method : {"opt-mix", "max-mix"}) {
      for (double k : ks) {
        TuneCandidate c;
        c.name =
            absl::StrFormat("%s kappa=%g", std::string(method) == "opt-mix" ? "pilot" : "max", k);
        c.method = method;
        c.kappa = k;
        c.needs_pilot = true;
        out.push_back(std::move(c));
      }
    }
  }
  return out;
}

std::vector<std::string> BuildFlagsFor(const TuneCandidate* c, double alpha) {
  const std::string a = absl::StrCat("--alpha=", Num(alpha));
  if (c == nullptr) return {"--method=uniform", a};
  std::string method = "maec";
  if (c->method == "opt-mix") method = "opt";
  if (c->method == "max-mix") method = "max";
  std::vector<std::string> out = {absl::StrCat("--method=", method), a, "--rate_rule=mixture",
                                  absl::StrCat("--kappa=", Num(c->kappa))};
  if (c->needs_pilot) out.push_back(absl::StrCat("--pilot_kappa=", Num(c->kappa)));
  if (method != "opt") {
    out.push_back(absl::StrCat("--gamma=", Num(kGamma)));
    out.push_back(absl::StrCat("--exposure_power=", Num(c->exposure_power)));
  }
  return out;
}

uint64_t SubsampleUsers(uint64_t max_instances, uint64_t seed, ImpressionLog* log,
                        std::vector<int64_t>* timestamps) {
  if (max_instances == 0 || log->size() <= max_instances) return 0;
  std::map<uint64_t, uint64_t> count;  // ordered: the draw does not depend on hashing
  for (uint64_t u : log->user_ids) ++count[u];
  std::vector<uint64_t> users;
  users.reserve(count.size());
  for (const auto& [u, n] : count) users.push_back(u);
  SplitMix64 rng(seed);
  for (size_t i = users.size(); i > 1; --i) {  // Fisher-Yates
    std::swap(users[i - 1], users[rng.Next() % i]);
  }
  absl::flat_hash_set<uint64_t> kept;
  uint64_t total = 0;
  for (uint64_t u : users) {
    if (total + count[u] > max_instances) continue;
    total += count[u];
    kept.insert(u);
  }
  ImpressionLog out;
  std::vector<int64_t> times;
  const bool pilot = !log->pilot_scores.empty();
  for (size_t i = 0; i < log->size(); ++i) {
    if (!kept.contains(log->user_ids[i])) continue;
    out.user_ids.push_back(log->user_ids[i]);
    out.item_ids.push_back(log->item_ids[i]);
    out.labels.push_back(log->labels[i]);
    if (pilot) out.pilot_scores.push_back(log->pilot_scores[i]);
    if (!timestamps->empty()) times.push_back((*timestamps)[i]);
  }
  out.rows_read = log->rows_read;
  out.bytes_read = log->bytes_read;
  *log = std::move(out);
  if (!timestamps->empty()) *timestamps = std::move(times);
  return kept.size();
}

absl::StatusOr<TuneReport> RunTune(const ImpressionLog& log, absl::Span<const int64_t> timestamps,
                                   const Instances* unbiased_test, const TuneOptions& options,
                                   const std::string& input, const std::string& mode) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<ModelKind> kind = ParseModelKind(options.model);
  if (!kind.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--models: ", kind.status().message()));
  }
  uint64_t positives = 0;
  for (uint8_t y : log.labels) positives += y;
  if (positives < kTuneMinPositives) {
    return absl::InvalidArgumentError(absl::StrCat(
        input, ": ", positives, " positive impressions of ", log.size(), "; tune needs at least ",
        kTuneMinPositives,
        " (each seed's later period is split 80/10/10 and every part needs positives)"));
  }
  const std::vector<TuneCandidate> candidates = TuneCandidates(options.kappas, options.with_pilot);
  ExperimentOptions o = options.experiment;
  o.models = {*kind};
  o.mode = EvalMode::kDeployed;
  o.gammas = {kGamma};
  o.pilot_kappas.clear();
  o.kappas.clear();
  for (const TuneCandidate& c : candidates) {
    if (std::none_of(o.kappas.begin(), o.kappas.end(), [&](double k) { return Same(k, c.kappa); }))
      o.kappas.push_back(c.kappa);
  }
  // 1. Uniform and every candidate at alpha (the paired gains).
  o.methods = {"uniform"};
  for (const TuneCandidate& c : candidates) {
    if (std::find(o.methods.begin(), o.methods.end(), c.method) == o.methods.end())
      o.methods.push_back(c.method);
  }
  // The pilot rules' snapshots fit graphsieve-build's own pilot on the earlier
  // period (no pilot column), as the flag file's build will.
  o.pilot = options.with_pilot ? PilotSource::kBuiltIn : PilotSource::kNone;
  o.alphas = {options.alpha};
  o.include_full = false;
  absl::StatusOr<ExperimentResult> compared = RunExperiment(log, o, timestamps, unbiased_test);
  if (!compared.ok()) return compared.status();
  // 2. Uniform at the larger alphas and unsampled: the curve the budget is read from.
  std::vector<double> curve = options.curve_alphas;
  if (curve.empty()) {
    for (double f : {1.5, 2.5, 4.0}) {
      if (f * options.alpha < 1.0) curve.push_back(f * options.alpha);
    }
  }
  o.methods = {"uniform"};
  o.pilot = PilotSource::kNone;
  o.alphas = curve;
  o.include_full = true;
  absl::StatusOr<ExperimentResult> curve_runs = RunExperiment(log, o, timestamps, unbiased_test);
  if (!curve_runs.ok()) return curve_runs.status();

  std::vector<RunResult> runs = compared->runs;
  runs.insert(runs.end(), curve_runs->runs.begin(), curve_runs->runs.end());
  const std::map<uint64_t, double> uniform =
      CandidateAuc(runs, options.model, nullptr, options.alpha);
  if (uniform.size() < 2) {
    return absl::FailedPreconditionError(absl::StrCat("uniform was trained on ", uniform.size(),
                                                      " seeds; the intervals need at least 2"));
  }
  TuneReport r;
  r.input = input;
  r.mode = mode;
  r.test = compared->test_source;
  r.instances = compared->instances;
  r.positives = positives;
  r.users = compared->users;
  r.seeds = static_cast<int>(uniform.size());
  r.alpha = options.alpha;
  r.pilot = compared->pilot;
  std::vector<double> grid = {options.alpha};
  grid.insert(grid.end(), curve.begin(), curve.end());
  grid.push_back(1.0);
  for (double a : grid) {
    const std::map<uint64_t, double> u = CandidateAuc(runs, options.model, nullptr, a);
    std::vector<double> v;
    for (const auto& [seed, x] : u) v.push_back(x);
    const PairedInterval i = IntervalOf(v);  // the AUC itself: its mean and SE over seeds
    r.curve_alphas.push_back(a);
    r.curve_auc.push_back(i.mean);
    r.curve_se.push_back(i.se);
  }
  r.full_vs_uniform =
      IntervalOf(PairedDifferences(CandidateAuc(runs, options.model, nullptr, 1.0), uniform));
  std::vector<SelectionCandidate> selectable;
  std::vector<int> row_of;  // selectable index -> row
  for (const TuneCandidate& c : candidates) {
    TuneRow row;
    row.candidate = c;
    const std::map<uint64_t, double> auc = CandidateAuc(runs, options.model, &c, options.alpha);
    row.mean_auc = Mean(auc);
    const std::vector<double> diffs = PairedDifferences(auc, uniform);
    row.gain = IntervalOf(diffs);
    std::vector<std::vector<double>> per_alpha;
    for (double a : grid) {
      per_alpha.push_back(PairedDifferences(CandidateAuc(runs, options.model, nullptr, a), auc));
    }
    row.budget = MatchAlpha(grid, per_alpha);
    row.saving = diffs.size() >= 2 ? SavingOf(row.budget, options.alpha)
                                   : SavingEstimate{std::nan(""), std::nan(""), std::nan("")};
    // The pipeline's refusals name the method (not its kappa): every row of the method shows them.
    for (const std::string& s : compared->skipped) {
      if (s.find(absl::StrCat("method ", c.method, " (")) != std::string::npos) {
        row.skipped.push_back(s);
      }
    }
    SelectionCandidate sc{c.name, {diffs}, row.saving};
    const Selection one = SelectRule({sc}, options.selection);
    row.verdict = one.verdicts.front();
    if (c.deployable) {
      selectable.push_back(std::move(sc));
      row_of.push_back(static_cast<int>(r.rows.size()));
    }
    r.rows.push_back(std::move(row));
  }
  // A budget saved at equal AUC exists only where uniform's curve rises: when
  // unsampled training does not measurably beat uniform at alpha, subsampling
  // costs nothing here and every candidate's "saving" is read off a flat,
  // noisy curve, so uniform is the answer.
  r.sampling_costs = r.full_vs_uniform.n >= 2 && r.full_vs_uniform.low > 0.0;
  const Selection chosen = SelectRule(selectable, options.selection);
  r.chosen = chosen.chosen < 0 || !r.sampling_costs ? -1 : row_of[chosen.chosen];
  for (const TuneRow& row : r.rows) {
    if (row.candidate.is_default) r.recommendation = Recommend(row.gain);
  }
  if (r.chosen >= 0) r.recommendation = Recommendation::kDeploy;
  if (r.chosen < 0 && r.recommendation == Recommendation::kDeploy) {
    r.recommendation = Recommendation::kNoGain;  // the default gains, but saves nothing measurable
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

int TuneExitCode(const TuneReport& report) {
  if (report.chosen >= 0) return 0;
  for (const TuneRow& row : report.rows) {
    if (row.candidate.is_default && !row.verdict.passes) return 4;
  }
  return 3;
}

namespace {

std::string ChosenName(const TuneReport& r) {
  return r.chosen < 0 ? std::string("uniform") : r.rows[r.chosen].candidate.name;
}

std::string ChosenFlags(const TuneReport& r) {
  return absl::StrJoin(BuildFlagsFor(r.chosen < 0 ? nullptr : &r.rows[r.chosen].candidate, r.alpha),
                       " ");
}

}  // namespace

std::string FormatTuneMarkdown(const TuneReport& r) {
  std::string out = absl::StrFormat("# graphsieve-eval tune: %s\n\n", r.input);
  absl::StrAppendFormat(&out,
                        "- **Chosen rule: %s** (`graphsieve-build %s`, the flag file `rule.flags`)"
                        "\n",
                        ChosenName(r), ChosenFlags(r));
  if (r.chosen >= 0) {
    const TuneRow& c = r.rows[r.chosen];
    absl::StrAppendFormat(&out,
                          "- Budget saved at equal AUC: **%s** of uniform's kept negatives "
                          "(95%% interval in brackets); dAUC vs uniform at alpha %g: %+.4f +- "
                          "%.4f (SE)\n",
                          SavingText(c), r.alpha, c.gain.mean, c.gain.se);
  } else if (!r.sampling_costs) {
    absl::StrAppend(&out,
                    "- Unsampled training does not measurably beat uniform at this alpha: "
                    "subsampling costs nothing measurable on this log, so there is no budget to "
                    "save and uniform sampling is the answer.\n");
  } else {
    absl::StrAppend(&out,
                    "- No buildable candidate is non-inferior to uniform and saves any of its "
                    "budget: uniform sampling is the answer for this log.\n");
  }
  absl::StrAppendFormat(&out, "- Log: %d impressions (%d positive), %d users. %s\n", r.instances,
                        r.positives, r.users, r.subsample.empty() ? "" : r.subsample);
  absl::StrAppendFormat(&out, "- Protocol: %s; test: %s; %d seeds paired with uniform; pilot: %s\n",
                        r.mode, r.test, r.seeds, r.pilot);
  absl::StrAppendFormat(&out,
                        "- Selection: non-inferior (mean dAUC >= -0.0005 and no more than 1 SE "
                        "below uniform), then the largest mean budget saved at equal AUC; "
                        "uniform when none saves, or when unsampled does not measurably beat "
                        "uniform (no budget to save). Pilot rules are measured with the "
                        "builder's built-in pilot, fitted by each snapshot build as "
                        "graphsieve-build fits it.\n");
  absl::StrAppendFormat(&out,
                        "- Unsampled vs uniform at alpha %g: dAUC %+.4f +- %.4f (what uniform "
                        "subsampling costs).\n\n",
                        r.alpha, r.full_vs_uniform.mean, r.full_vs_uniform.se);
  absl::StrAppend(&out,
                  "| candidate | AUC | dAUC vs uniform (SE) | 95% interval | non-inferior | "
                  "budget saved [95%] | graphsieve-build flags |\n|---|---|---|---|---|---|---|\n");
  absl::StrAppendFormat(&out, "| uniform | %.4f | 0 | - | yes | 0 | %s |\n", r.curve_auc.front(),
                        absl::StrJoin(BuildFlagsFor(nullptr, r.alpha), " "));
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const TuneRow& row = r.rows[i];
    std::string name = row.candidate.name;
    if (row.candidate.is_default) absl::StrAppend(&name, " (default)");
    if (static_cast<int>(i) == r.chosen) name = absl::StrCat("**", name, "** (chosen)");
    if (!row.candidate.deployable) absl::StrAppend(&name, " (not buildable)");
    absl::StrAppendFormat(
        &out, "| %s | %.4f | %+.4f (%.4f) | %+.4f .. %+.4f | %s | %s | %s |\n", name, row.mean_auc,
        row.gain.mean, row.gain.se, row.gain.low, row.gain.high,
        row.verdict.passes ? "yes" : absl::StrCat("no: ", row.verdict.failed), SavingText(row),
        absl::StrJoin(BuildFlagsFor(&row.candidate, r.alpha), " "));
  }
  for (const TuneRow& row : r.rows) {
    for (const std::string& s : row.skipped) {
      absl::StrAppendFormat(&out, "\n- %s: refused on a seed (%s)", row.candidate.name, s);
    }
  }
  absl::StrAppend(&out,
                  "\nUniform's curve (AUC against alpha; 1 = unsampled):\n\n| alpha | AUC | SE "
                  "|\n|---|---|---|\n");
  for (size_t i = 0; i < r.curve_alphas.size(); ++i) {
    absl::StrAppendFormat(&out, "| %g | %.4f | %.4f |\n", r.curve_alphas[i], r.curve_auc[i],
                          r.curve_se[i]);
  }
  absl::StrAppendFormat(&out, "\nPicture: `tune-curve.svg`. Run time %.0f s.\n", r.seconds);
  return out;
}

std::string FormatTuneJson(const TuneReport& r) {
  using nlohmann::json;
  auto interval = [](const PairedInterval& i) {
    auto num = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
    return json{{"mean", num(i.mean)},
                {"se", num(i.se)},
                {"low", num(i.low)},
                {"high", num(i.high)},
                {"n", i.n}};
  };
  json rows = json::array();
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const TuneRow& row = r.rows[i];
    auto num = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
    rows.push_back({{"name", row.candidate.name},
                    {"method", row.candidate.method},
                    {"kappa", row.candidate.kappa},
                    {"exposure_power", row.candidate.exposure_power},
                    {"default", row.candidate.is_default},
                    {"deployable", row.candidate.deployable},
                    {"auc", num(row.mean_auc)},
                    {"delta_auc", interval(row.gain)},
                    {"non_inferior", row.verdict.passes},
                    {"why_not", row.verdict.failed},
                    {"saves", row.verdict.saves},
                    {"budget_saved",
                     {{"mean", num(row.saving.mean)},
                      {"low", num(row.saving.low)},
                      {"high", num(row.saving.high)},
                      {"beyond_grid", !row.budget.alpha.has_value()}}},
                    {"build_flags", BuildFlagsFor(&row.candidate, r.alpha)},
                    {"skipped", row.skipped}});
  }
  json curve = json::array();
  for (size_t i = 0; i < r.curve_alphas.size(); ++i) {
    curve.push_back({{"alpha", r.curve_alphas[i]},
                     {"auc", r.curve_auc[i]},
                     {"se", std::isfinite(r.curve_se[i]) ? json(r.curve_se[i]) : json(nullptr)}});
  }
  json j = {{"input", r.input},
            {"mode", r.mode},
            {"test", r.test},
            {"instances", r.instances},
            {"positives", r.positives},
            {"users", r.users},
            {"subsample", r.subsample},
            {"seeds", r.seeds},
            {"alpha", r.alpha},
            {"pilot", r.pilot},
            {"chosen", ChosenName(r)},
            {"chosen_build_flags",
             BuildFlagsFor(r.chosen < 0 ? nullptr : &r.rows[r.chosen].candidate, r.alpha)},
            {"exit_code", TuneExitCode(r)},
            {"full_vs_uniform", interval(r.full_vs_uniform)},
            {"sampling_costs", r.sampling_costs},
            {"uniform_curve", curve},
            {"candidates", rows},
            {"seconds", r.seconds}};
  return j.dump(2) + "\n";
}

std::string FormatTuneSvg(const TuneReport& r) {
  // AUC against log α: uniform's curve with ±1 SE bars, each candidate at α,
  // and the chosen rule's AUC carried across to where uniform meets it.
  constexpr double kW = 640, kH = 400, kL = 70, kR = 20, kT = 40, kB = 50;
  double lo = 1e9, hi = -1e9;
  for (size_t i = 0; i < r.curve_auc.size(); ++i) {
    const double se = std::isfinite(r.curve_se[i]) ? r.curve_se[i] : 0.0;
    lo = std::min(lo, r.curve_auc[i] - se);
    hi = std::max(hi, r.curve_auc[i] + se);
  }
  for (const TuneRow& row : r.rows) {
    if (!std::isfinite(row.mean_auc)) continue;
    lo = std::min(lo, row.mean_auc);
    hi = std::max(hi, row.mean_auc);
  }
  if (!(hi > lo)) hi = lo + 1e-3;
  const double pad = 0.05 * (hi - lo);
  lo -= pad;
  hi += pad;
  const double a0 = std::log(r.curve_alphas.front()), a1 = std::log(r.curve_alphas.back());
  auto x = [&](double a) { return kL + (std::log(a) - a0) / (a1 - a0) * (kW - kL - kR); };
  auto y = [&](double auc) { return kH - kB - (auc - lo) / (hi - lo) * (kH - kT - kB); };
  std::string out = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" "
      "fill=\"white\"/>\n",
      kW, kH);
  absl::StrAppendFormat(&out,
                        "<text x=\"%g\" y=\"20\" font-size=\"14\">Test AUC against the kept share "
                        "alpha (%d seeds): uniform, and the candidates at alpha %g</text>\n",
                        kL, r.seeds, r.alpha);
  absl::StrAppendFormat(&out,
                        "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"black\"/>\n"
                        "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"black\"/>\n",
                        kL, kH - kB, kW - kR, kH - kB, kL, kT, kL, kH - kB);
  for (double a : r.curve_alphas) {
    absl::StrAppendFormat(&out, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">%g</text>\n", x(a),
                          kH - kB + 16, a);
  }
  for (int k = 0; k <= 4; ++k) {
    const double v = lo + k * (hi - lo) / 4;
    absl::StrAppendFormat(&out, "<text x=\"%g\" y=\"%g\" text-anchor=\"end\">%.4f</text>\n", kL - 6,
                          y(v) + 4, v);
  }
  absl::StrAppendFormat(&out,
                        "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">alpha (log scale; 1 = "
                        "unsampled)</text>\n",
                        (kL + kW - kR) / 2, kH - 12);
  std::string path;
  for (size_t i = 0; i < r.curve_alphas.size(); ++i) {
    absl::StrAppendFormat(&path, "%s%g,%g", i == 0 ? "" : " ", x(r.curve_alphas[i]),
                          y(r.curve_auc[i]));
    if (std::isfinite(r.curve_se[i])) {
      absl::StrAppendFormat(&out,
                            "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"#2563eb\"/>\n",
                            x(r.curve_alphas[i]), y(r.curve_auc[i] - r.curve_se[i]),
                            x(r.curve_alphas[i]), y(r.curve_auc[i] + r.curve_se[i]));
    }
  }
  absl::StrAppendFormat(&out,
                        "<polyline points=\"%s\" fill=\"none\" stroke=\"#2563eb\" "
                        "stroke-width=\"2\"/>\n",
                        path);
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const TuneRow& row = r.rows[i];
    if (!std::isfinite(row.mean_auc)) continue;
    const bool chosen = static_cast<int>(i) == r.chosen;
    absl::StrAppendFormat(&out,
                          "<circle cx=\"%g\" cy=\"%g\" r=\"%d\" fill=\"%s\"><title>%s: AUC "
                          "%.4f</title></circle>\n",
                          x(r.alpha), y(row.mean_auc), chosen ? 5 : 3,
                          chosen ? "#dc2626" : (row.candidate.is_default ? "#16a34a" : "#9ca3af"),
                          row.candidate.name, row.mean_auc);
    if (chosen) {
      const double meet = row.budget.alpha.has_value() ? *row.budget.alpha : r.curve_alphas.back();
      absl::StrAppendFormat(&out,
                            "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"#dc2626\" "
                            "stroke-dasharray=\"4 3\"/>\n",
                            x(r.alpha), y(row.mean_auc), x(meet), y(row.mean_auc));
    }
  }
  absl::StrAppendFormat(&out,
                        "<text x=\"%g\" y=\"%g\" fill=\"#2563eb\">uniform (mean +- 1 SE)</text>\n"
                        "<text x=\"%g\" y=\"%g\" fill=\"#dc2626\">chosen: %s</text>\n"
                        "<text x=\"%g\" y=\"%g\" fill=\"#16a34a\">default</text>\n"
                        "<text x=\"%g\" y=\"%g\" fill=\"#9ca3af\">other candidates</text>\n",
                        kW - 230, kT + 14, kW - 230, kT + 30, ChosenName(r), kW - 230, kT + 46,
                        kW - 230, kT + 62);
  absl::StrAppend(&out, "</svg>\n");
  return out;
}

std::string ReportDigest(const std::string& json_report) {
  return absl::StrFormat("xxh3:%016x", XXH3_64bits(json_report.data(), json_report.size()));
}

std::string FormatFlagFile(const TuneReport& r, const std::string& date,
                           const std::string& report_digest) {
  std::string out = absl::StrCat(
      "# graphsieve-build --flagfile: the rule graphsieve-eval tune chose for ", r.input,
      "\n# (docs/EVALUATION.md \"Choosing the rule on your own log\"). Chosen: ", ChosenName(r),
      "\n");
  if (r.chosen >= 0) {
    const TuneRow& c = r.rows[r.chosen];
    absl::StrAppendFormat(&out, "# dAUC vs uniform at alpha %g: %+.4f +- %.4f; budget saved %s\n",
                          r.alpha, c.gain.mean, c.gain.se, SavingText(c));
  }
  for (const std::string& f :
       BuildFlagsFor(r.chosen < 0 ? nullptr : &r.rows[r.chosen].candidate, r.alpha)) {
    absl::StrAppend(&out, f, "\n");
  }
  std::string rule = ChosenName(r);
  std::replace(rule.begin(), rule.end(), ' ', ',');
  absl::StrAppend(&out, "# recorded in the snapshot's manifest (\"tune\")\n--tune_rule=", rule,
                  "\n--tune_date=", date, "\n--tune_report_digest=", report_digest, "\n");
  return out;
}

}  // namespace graphsieve::eval
