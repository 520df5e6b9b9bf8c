#include "core/maec/propagation.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "core/distributed/communicator.h"
#include "core/maec/parallel.h"

namespace graphsieve {
namespace {

using maec_internal::ParallelChunks;

inline double PairNeighbours(absl::Span<const uint32_t> degrees, uint32_t u_node, uint32_t v_node) {
  return double(degrees[u_node]) + double(degrees[v_node]) - 2.0;
}

}  // namespace

std::vector<uint32_t> NodeDegrees(const PairTable& pairs, Communicator* comm) {
  const uint32_t U = static_cast<uint32_t>(pairs.num_users());
  std::vector<uint32_t> deg(pairs.num_users() + pairs.num_items(), 0);
  for (size_t p = 0; p < pairs.num_pairs(); ++p) {
    ++deg[pairs.pair_user[p]];
    ++deg[U + pairs.pair_item[p]];
  }
  if (comm != nullptr && comm->size() > 1) {
    std::vector<uint64_t> wide(deg.begin(), deg.end());
    comm->AllReduceSum(absl::MakeSpan(wide));
    for (size_t w = 0; w < deg.size(); ++w) deg[w] = static_cast<uint32_t>(wide[w]);
  }
  return deg;
}

std::vector<double> PropagationNodeSums(const PairTable& pairs, absl::Span<const uint32_t> degrees,
                                        absl::Span<const double> x, bool symmetric, int threads,
                                        Communicator* comm) {
  assert(x.size() == pairs.num_pairs());
  assert(degrees.size() == pairs.num_users() + pairs.num_items());
  const uint32_t U = static_cast<uint32_t>(pairs.num_users());
  const size_t nodes = degrees.size();
  std::vector<std::vector<double>> partial(std::max(1, threads), std::vector<double>(nodes, 0.0));
  ParallelChunks(pairs.num_pairs(), threads, [&](int t, size_t begin, size_t end) {
    std::vector<double>& m = partial[t];
    // A user's sum in a register over its run of pairs (pairs are sorted by
    // user; the same additions in the same order: bit-identical).
    for (size_t p = begin; p < end;) {
      const uint32_t u = pairs.pair_user[p];
      double user_sum = 0.0;
      for (; p < end && pairs.pair_user[p] == u; ++p) {
        const uint32_t v = U + pairs.pair_item[p];
        double value = x[p];
        if (symmetric) {
          const double d = PairNeighbours(degrees, u, v);
          value = d > 0 ? value / std::sqrt(d) : 0.0;
        }
        user_sum += value;
        m[v] += value;
      }
      m[u] += user_sum;
    }
  });
  for (size_t t = 1; t < partial.size(); ++t) {
    for (size_t w = 0; w < nodes; ++w) partial[0][w] += partial[t][w];
  }
  if (comm != nullptr) comm->AllReduceSum(absl::MakeSpan(partial[0]));
  return std::move(partial[0]);
}

namespace {

// One node's sums as one thread's pass over its pairs sees them: m (the
// previous iteration's, read) next to the thread's partial next m (written),
// so a pair's random item lookup touches one cache line, not two arrays.
struct NodeSums {
  double m;
  double next;
};

// Where each user's run of pairs starts (pairs are sorted by user), U + 1
// entries; users without pairs have empty runs.
std::vector<size_t> UserStarts(const PairTable& pairs) {
  std::vector<size_t> starts(pairs.num_users() + 1, 0);
  for (uint32_t u : pairs.pair_user) ++starts[u + 1];
  for (size_t u = 0; u < pairs.num_users(); ++u) starts[u + 1] += starts[u];
  return starts;
}

// d_p = deg(u) + deg(v) − 2 per pair, once per Propagate instead of two
// random degree lookups per pair and iteration (an integer: converting it
// to double gives exactly the double sum the operator used before).
std::vector<uint32_t> PairNeighbourCounts(const PairTable& pairs,
                                          absl::Span<const uint32_t> degrees, int threads) {
  const uint32_t U = static_cast<uint32_t>(pairs.num_users());
  std::vector<uint32_t> d(pairs.num_pairs());
  ParallelChunks(pairs.num_pairs(), threads, [&](int, size_t begin, size_t end) {
    for (size_t p = begin; p < end; ++p) {
      d[p] = degrees[pairs.pair_user[p]] + degrees[U + pairs.pair_item[p]] - 2u;
    }
  });
  return d;
}

// One fused pass over pairs [begin, end): the update from the old node sums
// and this thread's share of the new ones. Returns max |Δ| over the range.
// Pairs are sorted by user, so a user's new sum is added up in a register
// over its run of pairs (the same additions in the same order as adding
// into its record pair by pair, which started at 0: bit-identical) instead
// of a store-to-load chain through memory on every pair.
// The runs come from `starts` (UserStarts), so the pass does not read the
// pairs' user column at all.
template <bool kSymmetric>
double StepRange(const PairTable& pairs, const std::vector<size_t>& starts, const uint32_t* dcount,
                 const double* x0, double* x, double gamma, size_t begin, size_t end,
                 NodeSums* sums) {
  const uint32_t U = static_cast<uint32_t>(pairs.num_users());
  const uint32_t* pair_item = pairs.pair_item.data();
  double max_change = 0.0;
  size_t u = std::upper_bound(starts.begin(), starts.end(), begin) - starts.begin() - 1;
  for (size_t p = begin; p < end; ++u) {
    const size_t run_end = std::min(starts[u + 1], end);
    if (p == run_end) continue;  // a user without pairs (on this rank)
    const double mu = sums[u].m;
    double user_next = 0.0;
    for (; p < run_end; ++p) {
      NodeSums& sv = sums[U + pair_item[p]];
      const double d = double(dcount[p]);  // an integer, possibly 0; see PairNeighbourCounts
      const double xp = x[p];
      double next;
      if (dcount[p] == 0) {
        next = (1.0 - gamma) * x0[p] + gamma * xp;  // no neighbours: S x_p = x_p
      } else if (kSymmetric) {
        const double sd = std::sqrt(d);
        next = (1.0 - gamma) * x0[p] + gamma * (mu + sv.m - 2.0 * xp / sd) / sd;
        user_next += next / sd;
        sv.next += next / sd;
      } else {
        next = (1.0 - gamma) * x0[p] + gamma * (mu + sv.m - 2.0 * xp) / d;
        user_next += next;
        sv.next += next;
      }
      max_change = std::max(max_change, std::abs(next - xp));
      x[p] = next;
    }
    sums[u].next += user_next;
  }
  return max_change;
}

}  // namespace

PropagationReport Propagate(const PairTable& pairs, absl::Span<const uint32_t> degrees,
                            const PropagationOptions& o, std::vector<double>* x) {
  const size_t nodes = degrees.size();
  const int threads = std::max(1, o.threads);
  const std::vector<double> x0 = *x;
  const std::vector<uint32_t> dcount = PairNeighbourCounts(pairs, degrees, threads);
  const std::vector<size_t> starts = UserStarts(pairs);
  PropagationReport report;
  std::vector<double> m = PropagationNodeSums(pairs, degrees, *x, o.symmetric, threads, o.comm);
  std::vector<std::vector<NodeSums>> sums(threads, std::vector<NodeSums>(nodes));
  std::vector<double> change(threads);
  // One fused pass per iteration: the update from the old node sums, and the
  // new node sums of the updated values (per thread, added in thread order).
  while (report.iterations < o.max_iterations) {
    for (std::vector<NodeSums>& s : sums) {
      for (size_t w = 0; w < nodes; ++w) s[w] = {m[w], 0.0};
    }
    std::fill(change.begin(), change.end(), 0.0);
    ParallelChunks(pairs.num_pairs(), threads, [&](int t, size_t begin, size_t end) {
      change[t] = o.symmetric ? StepRange<true>(pairs, starts, dcount.data(), x0.data(), x->data(),
                                                o.gamma, begin, end, sums[t].data())
                              : StepRange<false>(pairs, starts, dcount.data(), x0.data(), x->data(),
                                                 o.gamma, begin, end, sums[t].data());
    });
    for (size_t w = 0; w < nodes; ++w) {
      double sum = 0.0;
      for (int t = 0; t < threads; ++t) sum += sums[t][w].next;
      m[w] = sum;
    }
    ++report.iterations;
    report.last_change = *std::max_element(change.begin(), change.end());
    if (o.comm != nullptr) {  // every rank's pairs: the same sums and the same stopping test
      o.comm->AllReduceSum(absl::MakeSpan(m));
      o.comm->AllReduceMax(absl::MakeSpan(&report.last_change, 1));
    }
    if (report.last_change <= o.tolerance) {
      report.converged = true;
      break;
    }
  }
  return report;
}

namespace {

// M_pp of every pair (positives_only = false) or of the positive pairs only,
// in pair order. 1/d_p is recomputed where it is needed instead of held per
// pair (the same expression: bit-identical).
std::vector<double> SelfInfluenceOf(const PairTable& pairs, absl::Span<const uint32_t> degrees,
                                    double gamma, Communicator* comm, bool positives_only) {
  const uint32_t U = static_cast<uint32_t>(pairs.num_users());
  const size_t P = pairs.num_pairs();
  auto inverse_d = [&](uint32_t u, uint32_t v) {
    const double d = PairNeighbours(degrees, u, v);
    return d > 0 ? 1.0 / d : 0.0;
  };
  std::vector<double> s1(degrees.size(), 0.0), s2(degrees.size(), 0.0);
  for (size_t p = 0;
       p < P;) {  // a user's sums in registers over its run (same order: bit-identical)
    const uint32_t u = pairs.pair_user[p];
    double u1 = 0.0, u2 = 0.0;
    for (; p < P && pairs.pair_user[p] == u; ++p) {
      const uint32_t v = U + pairs.pair_item[p];
      const double inv_d = inverse_d(u, v);
      u1 += inv_d, s1[v] += inv_d;
      u2 += inv_d * inv_d, s2[v] += inv_d * inv_d;
    }
    s1[u] += u1, s2[u] += u2;
  }
  if (comm != nullptr) {
    comm->AllReduceSum(absl::MakeSpan(s1));
    comm->AllReduceSum(absl::MakeSpan(s2));
  }
  std::vector<double> m;
  m.reserve(positives_only ? 0 : P);
  const double g2 = gamma * gamma, g3 = g2 * gamma;
  for (size_t p = 0; p < P; ++p) {
    if (positives_only && !pairs.label[p]) continue;
    const uint32_t u = pairs.pair_user[p], v = U + pairs.pair_item[p];
    const double inv_d = inverse_d(u, v);
    if (inv_d == 0.0) {  // no neighbours: x_p stays x⁽⁰⁾_p
      m.push_back(1.0);
      continue;
    }
    double second = 0.0, third = 0.0;
    for (uint32_t w : {u, v}) {
      const double a = s1[w] - inv_d, b = s2[w] - inv_d * inv_d;
      second += a;
      third += a * a - b;
    }
    m.push_back((1.0 - gamma) * (1.0 + g2 * inv_d * second + g3 * inv_d * third));
  }
  return m;
}

}  // namespace

std::vector<double> SelfInfluence(const PairTable& pairs, absl::Span<const uint32_t> degrees,
                                  double gamma, Communicator* comm) {
  return SelfInfluenceOf(pairs, degrees, gamma, comm, /*positives_only=*/false);
}

std::vector<double> SelfInfluenceOfPositives(const PairTable& pairs,
                                             absl::Span<const uint32_t> degrees, double gamma,
                                             Communicator* comm) {
  return SelfInfluenceOf(pairs, degrees, gamma, comm, /*positives_only=*/true);
}

}  // namespace graphsieve
