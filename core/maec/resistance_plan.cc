#include "core/maec/resistance_plan.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_format.h"

namespace graphsieve {
namespace maec_internal {
namespace {



// Pairs (over all ranks) inside each component: the sketch's per-pair cost.
std::vector<uint64_t> PairsPerComponent(const PairTable& pairs, const PositiveGraph& g,
                                        const ResistanceOptions& o) {
  std::vector<uint64_t> count(g.num_components, 0);
  for (size_t p = 0; p < pairs.num_pairs(); ++p) {
    const uint32_t c = g.component[pairs.pair_user[p]];
    if (g.component[g.num_users + pairs.pair_item[p]] == c) ++count[c];
  }
  if (o.comm) o.comm->AllReduceSum(absl::MakeSpan(count));
  return count;
}

uint64_t EdgesOf(const PositiveGraph& g, uint32_t c) {
  uint64_t e = 0;
  for (uint64_t q = g.component_offsets[c]; q < g.component_offsets[c + 1]; ++q) {
    e += g.degree(g.component_nodes[q]);
  }
  return e / 2;
}

// The route of one component (kAuto: dense, then one-sided while it is
// cheaper than the pair sketch, else the pair sketch).
absl::StatusOr<Route> ChooseRoute(const PositiveGraph& g, const ResistanceOptions& o, uint32_t c,
                                  uint32_t s, uint64_t pairs_in_c) {
  const uint32_t n = g.component_size(c);
  const std::string r = RouteFor(o, n, s);
  if (r == "dense") {
    if (n > kMaxDenseNodes) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "component %d has %d nodes; the dense route holds n^2 doubles (%.1f GiB) and is "
          "limited to %d nodes: use resistance 'one-sided' or 'sketch'",
          c, n, double(n) * n * 8 / (1 << 30), kMaxDenseNodes));
    }
    return Route::kDense;
  }
  if (r == "sketch") return Route::kSketch;
  if (o.method == ResistanceMethod::kAuto && o.compute_pairs &&
      !OneSidedIsCheaper(o, s, EdgesOf(g, c), pairs_in_c)) {
    return Route::kSketch;
  }
  return Route::kOneSided;
}

// The solved side's positions this rank solves: all of S in one process; in
// a distributed run the users whose pairs this rank holds.
std::vector<uint32_t> OneSidedColumns(const PositiveGraph& g,
                                      const PairIncidence& inc, const ResistanceOptions& o,
                                      uint32_t c, uint32_t s) {
  std::vector<uint32_t> cols;
  if (!Distributed(o)) {
    cols.resize(s);
    for (uint32_t j = 0; j < s; ++j) cols[j] = j;
    return cols;
  }
  const uint64_t first = g.component_offsets[c];  // users come first inside a component
  for (uint32_t j = 0; j < s; ++j) {
    const uint32_t u = g.component_nodes[first + j];
    if (inc.user_begin[u + 1] > inc.user_begin[u]) cols.push_back(j);
  }
  return cols;
}

}  // namespace

absl::StatusOr<Plan> PlanComponents(const PairTable& pairs, const PositiveGraph& g,
                                    const PairIncidence& inc, const ResistanceOptions& o,
                                    ResistanceResult* out) {
  Plan plan;
  plan.route.assign(g.num_components, Route::kSkip);
  plan.s_is_users.assign(g.num_components, 1);
  plan.columns.resize(g.num_components);
  plan.pair_k = o.PairSketchDim();
  const std::vector<uint64_t> pairs_in = PairsPerComponent(pairs, g, o);
  uint32_t largest = 0, block = 0;
  for (uint32_t c = 0; c < g.num_components; ++c) {
    const uint32_t n = g.component_size(c), nu = g.component_users(c);
    if (n > g.component_size(largest)) largest = c;
    if (n < 2) continue;
    plan.s_is_users[c] = Distributed(o) || nu <= n - nu;
    const uint32_t s = plan.s_is_users[c] ? nu : n - nu;
    absl::StatusOr<Route> route = ChooseRoute(g, o, c, s, pairs_in[c]);
    if (!route.ok()) return route.status();
    plan.route[c] = *route;
    if (*route == Route::kDense) {
      ++out->dense_components;
      plan.tasks.push_back({c, Route::kDense, 0, 0});
      continue;
    }
    if (*route == Route::kOneSided) ++out->one_sided_components; else ++out->sketch_components;
    // Sketch columns: the node rows (one-sided), or the pair sketch whose
    // first sketch_dim columns are also the node rows (sketch).
    const uint32_t k = *route == Route::kSketch && o.compute_pairs ? plan.pair_k : o.sketch_dim;
    const uint32_t width = n >= 2000 ? std::max<uint32_t>(1, std::min<uint32_t>(o.block_columns,
                                                                                (k + o.threads - 1) / o.threads))
                                     : k;
    for (uint32_t b = 0; b < k; b += width, ++block) {
      if (int(block % Ranks(o)) == Rank(o)) {
        plan.tasks.push_back({c, Route::kSketch, b, std::min<uint32_t>(k, b + width)});
      }
    }
    if (*route == Route::kOneSided && o.compute_pairs) {
      plan.columns[c] = OneSidedColumns(g, inc, o, c, s);
      const uint32_t m = static_cast<uint32_t>(plan.columns[c].size());
      for (uint32_t b = 0; b < m; b += o.block_columns) {
        plan.tasks.push_back({c, Route::kOneSided, b, std::min<uint32_t>(m, b + o.block_columns)});
      }
    }
  }
  const uint32_t nl = g.component_size(largest);
  out->route = nl < 2 ? "none"
               : plan.route[largest] == Route::kDense    ? "dense"
               : plan.route[largest] == Route::kOneSided ? "one-sided"
                                                         : "sketch";
  return plan;
}

}  // namespace maec_internal
}  // namespace graphsieve
