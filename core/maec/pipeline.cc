// RunPipeline (pipeline.h): the MA-EC stages in order. The heavy numerics
// live in graph / resistance / propagation / rates; this file wires them,
// times the stages and fills the per-node records the server needs.
#include "core/maec/pipeline.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "core/maec/graph.h"
#include "core/maec/parallel.h"
#include "core/maec/propagation.h"
#include "core/maec/rates.h"
#include "core/maec/resistance.h"

namespace graphsieve {
namespace {

class StageClock {
 public:
  StageClock(std::vector<StageTiming>* timings, const PipelineOptions& o) : timings_(timings), o_(o) {}
  void Done(const std::string& stage) {
    const absl::Time now = absl::Now();
    timings_->push_back({stage, absl::ToDoubleSeconds(now - last_)});
    last_ = now;
    if (o_.progress) o_.progress(stage, 1.0);
  }

 private:
  std::vector<StageTiming>* timings_;
  const PipelineOptions& o_;
  absl::Time last_ = absl::Now();
};

bool NeedsPilot(Method m) {
  return m == Method::kOpt || m == Method::kMax || m == Method::kMean || m == Method::kProduct;
}

struct Corrected {
  std::vector<double> uncertainty;  // B̂ per pair
  std::vector<double> score;        // final score per pair
  PropagationReport uncertainty_report, score_report;
};

// §2.5–2.6 applied to a base prediction z ∈ [0, 1] per pair.
Corrected Correct(const PairTable& pairs, absl::Span<const uint32_t> degrees, std::vector<double> z,
                  const PipelineOptions& o) {
  Corrected c;
  PropagationOptions po;
  po.gamma = o.gamma;
  po.tolerance = o.propagation_tolerance;
  po.max_iterations = o.propagation_max_iterations;
  po.symmetric = o.symmetric_normalisation;
  po.threads = o.threads;
  c.uncertainty.resize(z.size());
  for (size_t p = 0; p < z.size(); ++p) c.uncertainty[p] = std::abs(double(pairs.label[p]) - z[p]);
  if (o.uncertainty_propagation) c.uncertainty_report = Propagate(pairs, degrees, po, &c.uncertainty);
  c.score = std::move(z);
  for (size_t p = 0; p < c.score.size(); ++p) {
    c.score[p] = pairs.label[p] ? 1.0 - c.uncertainty[p] : c.uncertainty[p];
  }
  if (o.score_propagation) c.score_report = Propagate(pairs, degrees, po, &c.score);
  for (double& s : c.score) s = std::max(s, 0.0);
  return c;
}

}  // namespace

absl::StatusOr<Method> ParseMethod(std::string_view name) {
  for (Method m : {Method::kMaec, Method::kUniform, Method::kOpt, Method::kMax, Method::kMean,
                   Method::kProduct}) {
    if (name == MethodName(m)) return m;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown method '", std::string(name), "': expected maec, uniform, opt, max, mean or product"));
}

absl::StatusOr<ResistanceMethod> ParseResistanceMethod(std::string_view name) {
  for (ResistanceMethod m : {ResistanceMethod::kAuto, ResistanceMethod::kExact,
                             ResistanceMethod::kSketch, ResistanceMethod::kOneSided}) {
    if (name == ResistanceMethodName(m)) return m;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown resistance method '", std::string(name), "': expected auto, exact, sketch or one-sided"));
}

const char* MethodName(Method m) {
  switch (m) {
    case Method::kMaec: return "maec";
    case Method::kUniform: return "uniform";
    case Method::kOpt: return "opt";
    case Method::kMax: return "max";
    case Method::kMean: return "mean";
    case Method::kProduct: return "product";
  }
  return "?";
}

const char* ResistanceMethodName(ResistanceMethod m) {
  switch (m) {
    case ResistanceMethod::kAuto: return "auto";
    case ResistanceMethod::kExact: return "exact";
    case ResistanceMethod::kSketch: return "sketch";
    case ResistanceMethod::kOneSided: return "one-sided";
  }
  return "?";
}

absl::Status PipelineOptions::Validate() const {
  auto bad = [](auto&&... parts) { return absl::InvalidArgumentError(absl::StrCat(parts...)); };
  if (!(alpha > 0.0 && alpha <= 1.0)) return bad("alpha must be in (0, 1], got ", alpha);
  if (!(floor >= 0.0 && floor < alpha)) {
    return bad("floor must be in [0, alpha) = [0, ", alpha, "), got ", floor);
  }
  if (!(product_floor >= 0.0 && product_floor < alpha)) {
    return bad("product_floor must be in [0, alpha) = [0, ", alpha, "), got ", product_floor);
  }
  if (!(gamma >= 0.0 && gamma < 1.0)) return bad("gamma must be in [0, 1), got ", gamma);
  if (!(propagation_tolerance > 0.0)) return bad("propagation_tolerance must be > 0, got ", propagation_tolerance);
  if (propagation_max_iterations < 0) {
    return bad("propagation_max_iterations must be >= 0, got ", propagation_max_iterations);
  }
  if (threads < 1 || threads > 256) return bad("threads must be in [1, 256], got ", threads);
  ResistanceOptions r;
  r.sketch_dim = sketch_dim;
  r.solver_tolerance = solver_tolerance;
  r.solver_max_iterations = solver_max_iterations;
  r.exact_max_nodes = exact_max_nodes;
  r.one_sided_max_solves = one_sided_max_solves;
  r.block_columns = block_columns;
  r.threads = threads;
  return r.Validate();
}

absl::StatusOr<ConductanceResult> ComputeConductance(const PairTable& pairs, const PipelineOptions& o) {
  if (absl::Status s = o.Validate(); !s.ok()) return s;
  ConductanceResult c;
  StageClock clock(&c.timings, o);
  absl::StatusOr<PositiveGraph> graph = BuildPositiveGraph(pairs);
  if (!graph.ok()) return graph.status();
  c.component = graph->component;
  c.num_components = graph->num_components;
  c.positive_pairs = static_cast<uint32_t>(graph->num_edges);
  clock.Done("graph");

  ResistanceOptions ro;
  ro.method = o.resistance;
  ro.sketch_dim = o.sketch_dim;
  ro.solver_tolerance = o.solver_tolerance;
  ro.solver_max_iterations = o.solver_max_iterations;
  ro.exact_max_nodes = o.exact_max_nodes;
  ro.one_sided_max_solves = o.one_sided_max_solves;
  ro.block_columns = o.block_columns;
  ro.seed = o.seed;
  ro.threads = o.threads;
  absl::StatusOr<ResistanceResult> r = ComputeResistance(pairs, *graph, ro);
  if (!r.ok()) return r.status();
  c.sketch_dim = r->sketch_dim;
  c.sketch = std::move(r->sketch);
  c.solves = std::move(r->solves);
  c.resistance_route = r->route;
  clock.Done("resistance");

  c.geff.resize(pairs.num_pairs());
  c.hardness.resize(pairs.num_pairs());
  maec_internal::ParallelChunks(pairs.num_pairs(), o.threads, [&](int, size_t begin, size_t end) {
    for (size_t p = begin; p < end; ++p) {
      const double res = r->resistance[p];
      const double g = std::isfinite(res) && res > 0.0 ? 1.0 / res : 0.0;
      c.geff[p] = static_cast<float>(g);
      // A positive edge is in parallel with the rest of the graph: G_eff − 1
      // is the conductance of the graph without it (0 for a bridge).
      c.hardness[p] = static_cast<float>(std::max(0.0, g - pairs.label[p]));
    }
  });
  clock.Done("hardness");
  return c;
}

absl::StatusOr<PipelineResult> RunPipelineWithConductance(const PairTable& pairs,
                                                          const ConductanceResult& cond,
                                                          const PipelineOptions& o) {
  if (absl::Status s = o.Validate(); !s.ok()) return s;
  if (NeedsPilot(o.method) && pairs.pilot_mean.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "method '", MethodName(o.method), "' needs a pilot score column; the log has none"));
  }
  if (cond.geff.size() != pairs.num_pairs()) {
    return absl::InvalidArgumentError("conductance was computed for a different pair table");
  }
  const size_t P = pairs.num_pairs();
  PipelineResult res;
  StageClock clock(&res.timings, o);
  const std::vector<uint32_t> degrees = NodeDegrees(pairs);

  // MA-EC prediction: min-max normalised hardness, then correction.
  double hmin = std::numeric_limits<double>::infinity(), hmax = -hmin;
  for (float h : cond.hardness) {
    hmin = std::min<double>(hmin, h);
    hmax = std::max<double>(hmax, h);
  }
  const double span = hmax - hmin;
  std::vector<double> z(P);
  for (size_t p = 0; p < P; ++p) z[p] = span > 0 ? (cond.hardness[p] - hmin) / span : 0.0;
  Corrected maec = Correct(pairs, degrees, std::move(z), o);
  res.uncertainty_iterations = maec.uncertainty_report.iterations;
  res.score_iterations = maec.score_report.iterations;
  res.uncertainty_converged = !o.uncertainty_propagation || maec.uncertainty_report.converged;
  res.score_converged = !o.score_propagation || maec.score_report.converged;
  clock.Done("propagation");

  // Rates per method.
  std::vector<double> final_score, rate;
  absl::StatusOr<RateFit> fit;
  if (o.method == Method::kUniform) {
    final_score.assign(P, o.alpha);
    rate.assign(P, o.alpha);
    fit = RateFit{0.0, o.alpha, 1.0};
  } else if (o.method == Method::kMaec) {
    final_score = maec.score;
    fit = FitRates(final_score, pairs.negatives, o.alpha, o.floor, &rate, o.threads);
  } else {
    std::vector<double> pilot(pairs.pilot_mean.begin(), pairs.pilot_mean.end());
    if (o.correct_pilot) pilot = Correct(pairs, degrees, std::move(pilot), o).score;
    if (o.method == Method::kOpt) {
      final_score = std::move(pilot);
      fit = FitRates(final_score, pairs.negatives, o.alpha, o.floor, &rate, o.threads);
    } else {
      std::vector<double> rate_m, rate_o;
      fit = FitRates(maec.score, pairs.negatives, o.alpha, o.floor, &rate_m, o.threads);
      if (!fit.ok()) return fit.status();
      fit = FitRates(pilot, pairs.negatives, o.alpha, o.floor, &rate_o, o.threads);
      if (!fit.ok()) return fit.status();
      final_score.resize(P);
      for (size_t p = 0; p < P; ++p) {
        final_score[p] = o.method == Method::kMax    ? std::max(rate_m[p], rate_o[p])
                         : o.method == Method::kMean ? 0.5 * (rate_m[p] + rate_o[p])
                                                     : rate_m[p] * rate_o[p];
      }
      if (o.method == Method::kMean) {
        // The mean of two rates with mean α already has mean α.
        rate = final_score;
        double sum = 0, w = 0;
        for (size_t p = 0; p < P; ++p) sum += pairs.negatives[p] * rate[p], w += pairs.negatives[p];
        fit = RateFit{1.0, w > 0 ? sum / w : o.alpha, 1.0};
      } else {
        const double fl = o.method == Method::kProduct ? o.product_floor : o.floor;
        fit = FitRates(final_score, pairs.negatives, o.alpha, fl, &rate, o.threads);
      }
    }
  }
  if (!fit.ok()) return fit.status();
  res.rho = fit->rho;
  res.achieved_negative_mean_rate = fit->achieved_mean;
  clock.Done("rates");

  res.geff = cond.geff;
  res.hardness = cond.hardness;
  res.uncertainty.assign(maec.uncertainty.begin(), maec.uncertainty.end());
  res.score.assign(final_score.begin(), final_score.end());
  res.rate.assign(rate.begin(), rate.end());
  res.num_components = cond.num_components;
  res.positive_pairs = cond.positive_pairs;
  res.solves = cond.solves;
  res.resistance_route = cond.resistance_route;

  // Node table.
  const uint32_t U = static_cast<uint32_t>(pairs.num_users());
  NodeTable& nt = res.nodes;
  const size_t N = degrees.size();
  nt.ids.reserve(N);
  nt.ids.insert(nt.ids.end(), pairs.user_ids.begin(), pairs.user_ids.end());
  nt.ids.insert(nt.ids.end(), pairs.item_ids.begin(), pairs.item_ids.end());
  nt.is_item.assign(N, 1);
  std::fill(nt.is_item.begin(), nt.is_item.begin() + U, 0);
  nt.sketch_dim = cond.sketch_dim;
  nt.sketch = cond.sketch;
  nt.records.resize(N);
  const std::vector<double> sum_b =
      PropagationNodeSums(pairs, degrees, maec.uncertainty, o.symmetric_normalisation, o.threads);
  const std::vector<double> sum_s =
      PropagationNodeSums(pairs, degrees, maec.score, o.symmetric_normalisation, o.threads);
  std::vector<double> rate_sum(N, 0.0), neg(N, 0.0), plain_sum(N, 0.0);
  for (size_t p = 0; p < P; ++p) {
    for (uint32_t w : {pairs.pair_user[p], U + pairs.pair_item[p]}) {
      rate_sum[w] += double(pairs.negatives[p]) * rate[p];
      neg[w] += pairs.negatives[p];
      plain_sum[w] += rate[p];
    }
  }
  for (size_t w = 0; w < N; ++w) {
    NodeRecord& rec = nt.records[w];
    rec.component = cond.component[w];
    rec.degree = degrees[w];
    rec.sum_uncertainty = static_cast<float>(sum_b[w]);
    rec.sum_score = static_cast<float>(sum_s[w]);
    rec.mean_rate = static_cast<float>(neg[w] > 0 ? rate_sum[w] / neg[w]
                                                  : degrees[w] > 0 ? plain_sum[w] / degrees[w] : o.alpha);
  }
  UnseenModel& m = res.model;
  m.method = static_cast<int>(o.method);
  m.alpha = o.alpha;
  m.floor = o.method == Method::kProduct ? o.product_floor : o.floor;
  m.rho = fit->rho;
  m.gamma = o.gamma;
  m.geff_min = std::isfinite(hmin) ? hmin : 0.0;
  m.geff_max = std::isfinite(hmax) ? hmax : 1.0;
  m.uncertainty_propagation = o.uncertainty_propagation;
  m.score_propagation = o.score_propagation;
  m.symmetric_normalisation = o.symmetric_normalisation;
  m.sketch_dim = cond.sketch_dim;
  clock.Done("node_table");
  return res;
}

absl::StatusOr<PipelineResult> RunPipeline(const PairTable& pairs, const PipelineOptions& o) {
  absl::StatusOr<ConductanceResult> cond = ComputeConductance(pairs, o);
  if (!cond.ok()) return cond.status();
  absl::StatusOr<PipelineResult> res = RunPipelineWithConductance(pairs, *cond, o);
  if (!res.ok()) return res.status();
  res->timings.insert(res->timings.begin(), cond->timings.begin(), cond->timings.end());
  return res;
}

}  // namespace graphsieve
