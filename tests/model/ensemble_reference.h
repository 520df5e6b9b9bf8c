// A reference, in double and written apart from core/model/unseen.cc, of the
// rate the server gives an INFERRED pair of two known nodes under max / mean /
// product with the built-in pilot's rows (docs/METHOD.md "Per ensemble
// member"): the MA-EC member's rate from the graph's part of the rows, the
// pilot member's from the pilot's part, combined by the method, then the
// combination's rule. Used by tests/model and tests/server.
#ifndef GRAPHSIEVE_TESTS_MODEL_ENSEMBLE_REFERENCE_H_
#define GRAPHSIEVE_TESTS_MODEL_ENSEMBLE_REFERENCE_H_

#include <algorithm>
#include <cmath>

#include "core/records/node_record.h"
#include "core/records/unseen_model.h"

namespace graphsieve::testing {

// floor rule (0): min(max(ρs, ϱ), 1); mixture (1): min(1, ρ(s/h̄ + κ)).
inline double ReferenceRuleRate(const RuleFit& f, double s) {
  if (f.rule == 0) return std::min(std::max(f.rho * s, f.floor), 1.0);
  return std::min(1.0, f.rho * ((f.score_mean > 0 ? s / f.score_mean : 0.0) + f.kappa));
}

// max(a, b), (a + b) / 2 or a·b for method 3, 4, 5 (core/maec/method.h).
inline double ReferenceCombine(int method, double a, double b) {
  return method == 3 ? std::max(a, b) : method == 4 ? (a + b) / 2 : a * b;
}

// The MA-EC rate score of a negative pair from two node rows: conductance
// 1/‖x_u − x_i‖² (0 across components), min-max normalised, one step of each
// propagation over the d = deg(u) + deg(i) pairs at its endpoints, then
// max(s, 0)^β / max(n_i, 1)^η.
inline double ReferenceMaecScore(const NodeView& u, const NodeView& i, const UnseenModel& m) {
  double g = 0;
  if (u.record.component == i.record.component) {
    double r = 0;
    for (int k = 0; k < m.GraphRowFloats(); ++k) {
      const double d = double(u.sketch[k]) - double(i.sketch[k]);
      r += d * d;
    }
    g = r > 0 ? 1 / r : m.geff_max;
  }
  const double span = m.geff_max - m.geff_min;
  double z = span > 0 ? (g - m.geff_min) / span : 0;
  z = std::min(std::max(z, 0.0), 1.0);
  const double d = double(u.record.degree) + double(i.record.degree);
  const double norm = m.symmetric_normalisation ? std::sqrt(d) : d;
  double b = z, s;
  if (m.uncertainty_propagation && d > 0) {
    b = (1 - m.gamma) * z +
        m.gamma * (double(u.record.sum_uncertainty) + double(i.record.sum_uncertainty)) / norm;
  }
  s = b;
  if (m.score_propagation && d > 0) {
    s = (1 - m.gamma) * b +
        m.gamma * (double(u.record.sum_score) + double(i.record.sum_score)) / norm;
  }
  const double t = std::pow(std::max(s, 0.0), m.score_power);
  return t / std::pow(std::max(double(i.record.impressions), 1.0), m.exposure_power);
}

// σ(b + b_u + b_i + p_u·q_i) from the last 1 + pilot_dim floats of each row.
inline double ReferencePilotScore(const NodeView& u, const NodeView& i, const UnseenModel& m) {
  const int at = m.GraphRowFloats();
  double logit = m.pilot_bias + double(u.sketch[at]) + double(i.sketch[at]);
  for (int k = 1; k <= m.pilot_dim; ++k) {
    logit += double(u.sketch[at + k]) * double(i.sketch[at + k]);
  }
  return 1 / (1 + std::exp(-logit));
}

// The INFERRED rate of (u, i) under the snapshot's ensemble.
inline double ReferenceEnsembleRate(const NodeView& u, const NodeView& i, const UnseenModel& m) {
  const double maec = ReferenceRuleRate(m.maec_member, ReferenceMaecScore(u, i, m));
  const double pilot = ReferenceRuleRate(m.pilot_member, ReferencePilotScore(u, i, m));
  return ReferenceRuleRate(m.combined, ReferenceCombine(m.method, maec, pilot));
}

}  // namespace graphsieve::testing

#endif  // GRAPHSIEVE_TESTS_MODEL_ENSEMBLE_REFERENCE_H_
