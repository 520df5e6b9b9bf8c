#include "core/model/node_default_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/maec/method.h"
#include "core/maec/rates.h"
#include "core/model/node_default.h"

namespace graphsieve {
namespace {

uint32_t Saturate(uint64_t v) { return static_cast<uint32_t>(std::min<uint64_t>(v, UINT32_MAX)); }

// One side's fit: the rule on q over the side's nodes, each weighted by its
// negative instances. False when the fit is not possible (floor rule, α
// unreachable).
bool FitSide(const NodeTable& nodes, bool is_item, const UnseenModel& m, double* rho,
             double* mean) {
  std::vector<double> q;
  std::vector<uint32_t> w;
  for (size_t k = 0; k < nodes.records.size(); ++k) {
    if ((nodes.is_item[k] != 0) != is_item) continue;
    const NodeRecord& r = nodes.records[k];
    q.push_back(SmoothedPositiveRate(r, m));
    w.push_back(r.impressions - std::min(r.positives, r.impressions));
  }
  if (q.empty()) return false;
  absl::StatusOr<RateFit> fit = m.rate_rule == static_cast<int>(RateRule::kMixture)
                                    ? FitMixtureRates(q, w, m.alpha, m.kappa, nullptr)
                                    : FitRates(q, w, m.alpha, m.floor, nullptr);
  if (!fit.ok()) return false;  // no negatives, or α unreachable with the floor
  *rho = fit->rho;
  *mean = fit->score_mean;
  return fit->rho > 0.0;
}

}  // namespace

absl::Status NodeDefaultOptions::Validate() const {
  if (!(smoothing_impressions > 0.0 && std::isfinite(smoothing_impressions))) {
    return absl::InvalidArgumentError(absl::StrCat("node default: smoothing_impressions ",
                                                   smoothing_impressions, " must be > 0"));
  }
  return absl::OkStatus();
}

absl::Status CountNodeImpressions(const PairTable& pairs, NodeTable* nodes) {
  const size_t users = pairs.num_users(), total = users + pairs.num_items();
  if (nodes->records.size() != total) {
    return absl::InvalidArgumentError(absl::StrCat("node counts: ", nodes->records.size(),
                                                   " node records for ", total, " nodes"));
  }
  std::vector<uint64_t> pos(total, 0), imp(total, 0);
  for (size_t p = 0; p < pairs.num_pairs(); ++p) {
    const uint64_t inst = pairs.instances[p],
                   neg = std::min(pairs.negatives[p], pairs.instances[p]);
    for (size_t w : {size_t{pairs.pair_user[p]}, users + pairs.pair_item[p]}) {
      imp[w] += inst;
      pos[w] += inst - neg;
    }
  }
  for (size_t w = 0; w < total; ++w) {
    nodes->records[w].positives = Saturate(pos[w]);
    nodes->records[w].impressions = Saturate(imp[w]);
  }
  return absl::OkStatus();
}

absl::Status FitNodeDefault(const NodeTable& nodes, const NodeDefaultOptions& options,
                            UnseenModel* m) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  m->default_prior = m->default_smoothing = 0.0;
  m->default_user_rho = m->default_user_mean = m->default_item_rho = m->default_item_mean = 0.0;
  if (m->method == static_cast<int>(Method::kUniform)) return absl::OkStatus();
  double pos = 0, imp = 0;
  for (size_t k = 0; k < nodes.records.size(); ++k) {
    if (nodes.is_item[k] != 0) continue;  // every instance once: the user side
    pos += nodes.records[k].positives;
    imp += nodes.records[k].impressions;
  }
  if (!(pos > 0.0 && imp > 0.0)) return absl::OkStatus();
  m->default_prior = pos / imp;
  m->default_smoothing = options.smoothing_impressions;
  double rho = 0, mean = 0;
  if (FitSide(nodes, /*is_item=*/false, *m, &rho, &mean)) {
    m->default_user_rho = rho;
    m->default_user_mean = mean;
  }
  if (FitSide(nodes, /*is_item=*/true, *m, &rho, &mean)) {
    m->default_item_rho = rho;
    m->default_item_mean = mean;
  }
  if (m->default_user_rho == 0.0 && m->default_item_rho == 0.0) {
    m->default_prior = m->default_smoothing = 0.0;
  }
  return absl::OkStatus();
}

absl::Status AttachNodeDefault(const PairTable& pairs, const NodeDefaultOptions& options,
                               PipelineResult* result) {
  if (absl::Status s = CountNodeImpressions(pairs, &result->nodes); !s.ok()) return s;
  return FitNodeDefault(result->nodes, options, &result->model);
}

}  // namespace graphsieve
