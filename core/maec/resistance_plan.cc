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

// The phase-1 route of one component: dense, or the PCG route RouteFor names.
absl::StatusOr<Route> ChooseRoute(const PositiveGraph& g, const ResistanceOptions& o, uint32_t c,
                                  uint32_t s) {
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
  return r == "sketch" ? Route::kSketch : Route::kOneSided;
}

// Sketch column tasks [begin, end) of component c, dealt round-robin over
// the ranks by the running block counter.
void AddSketchTasks(const PositiveGraph& g, const ResistanceOptions& o, uint32_t c, uint32_t begin,
                    uint32_t end, uint32_t* block, std::vector<Task>* tasks) {
  const uint32_t k = end - begin;
  const uint32_t width =
      g.component_size(c) >= 2000
          ? std::max<uint32_t>(1,
                               std::min<uint32_t>(o.block_columns, (k + o.threads - 1) / o.threads))
          : k;
  for (uint32_t b = begin; b < end; b += width, ++*block) {
    if (int(*block % Ranks(o)) == Rank(o))
      tasks->push_back({c, Route::kSketch, b, std::min<uint32_t>(end, b + width)});
  }
}

// The solved side's positions this rank solves: all of S in one process; in
// a distributed run the users whose pairs this rank holds.
std::vector<uint32_t> OneSidedColumns(const PositiveGraph& g, const PairIncidence& inc,
                                      const ResistanceOptions& o, uint32_t c, uint32_t s) {
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
                                    const ResistanceOptions& o) {
  Plan plan;
  plan.route.assign(g.num_components, Route::kSkip);
  plan.s_is_users.assign(g.num_components, 1);
  plan.solved_side.assign(g.num_components, 0);
  plan.pair_sketch.assign(g.num_components, 0);
  plan.columns.resize(g.num_components);
  plan.pairs_in = PairsPerComponent(pairs, g, o);
  uint32_t block = 0;
  for (uint32_t c = 0; c < g.num_components; ++c) {
    const uint32_t n = g.component_size(c), nu = g.component_users(c);
    if (n < 2) continue;
    plan.s_is_users[c] = Distributed(o) || nu <= n - nu;
    plan.solved_side[c] = plan.s_is_users[c] ? nu : n - nu;
    absl::StatusOr<Route> route = ChooseRoute(g, o, c, plan.solved_side[c]);
    if (!route.ok()) return route.status();
    plan.route[c] = *route;
    if (*route == Route::kDense) {
      ++plan.dense_components;
      plan.tasks.push_back({c, Route::kDense, 0, 0});
      continue;
    }
    // kAuto may still serve a one-sided candidate by the pair sketch (phase 2).
    plan.pair_sketch[c] =
        o.compute_pairs && (*route == Route::kSketch || o.method == ResistanceMethod::kAuto);
    AddSketchTasks(g, o, c, 0, uint32_t(o.sketch_dim), &block, &plan.tasks);  // the node rows
  }
  plan.phase1_tasks = plan.tasks.size();
  plan.next_block = block;
  return plan;
}

void PlanSecondPhase(const PositiveGraph& g, const PairIncidence& inc, const ResistanceOptions& o,
                     double residual_share, Plan* plan) {
  plan->residual_share = residual_share;
  plan->pair_k = o.PairSketchDim(residual_share);
  uint32_t block = plan->next_block;  // continue phase 1's round-robin
  uint32_t largest = 0;
  for (uint32_t c = 0; c < g.num_components; ++c) {
    if (g.component_size(c) > g.component_size(largest)) largest = c;
    Route& r = plan->route[c];
    if (r != Route::kSketch && r != Route::kOneSided) continue;
    const uint32_t s = plan->solved_side[c];
    if (r == Route::kOneSided && plan->pair_sketch[c] &&
        !OneSidedIsCheaper(o, s, EdgesOf(g, c), plan->pairs_in[c], plan->pair_k)) {
      r = Route::kSketch;
    }
    if (r == Route::kOneSided) plan->pair_sketch[c] = 0;
    if (r == Route::kOneSided)
      ++plan->one_sided_components;
    else
      ++plan->sketch_components;
    if (!o.compute_pairs) continue;
    if (r == Route::kSketch) {
      AddSketchTasks(g, o, c, uint32_t(o.sketch_dim),
                     uint32_t(std::max(plan->pair_k, o.sketch_dim)), &block, &plan->tasks);
      continue;
    }
    plan->columns[c] = OneSidedColumns(g, inc, o, c, s);
    const uint32_t m = static_cast<uint32_t>(plan->columns[c].size());
    for (uint32_t b = 0; b < m; b += o.block_columns) {
      plan->tasks.push_back({c, Route::kOneSided, b, std::min<uint32_t>(m, b + o.block_columns)});
    }
  }
  const uint32_t nl = g.component_size(largest);
  plan->largest_route = nl < 2                                     ? "none"
                        : plan->route[largest] == Route::kDense    ? "dense"
                        : plan->route[largest] == Route::kOneSided ? "one-sided"
                                                                   : "sketch";
}

}  // namespace maec_internal
}  // namespace graphsieve
