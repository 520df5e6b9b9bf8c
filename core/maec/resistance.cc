#include "core/maec/resistance.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include <Eigen/Cholesky>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/maec/parallel.h"

namespace graphsieve {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr uint32_t kMaxDenseNodes = 8000;  // 0.5 GB of doubles and ~10^12 flops

enum class Route { kSkip, kDense, kOneSided, kSketch };

struct Task {
  uint32_t component;
  Route kind;          // kDense: whole component; kOneSided: S columns; kSketch: sketch columns
  uint32_t begin, end; // column range
};

struct TaskResult {
  BlockPcgResult pcg;
  int columns = 0;
  absl::Status status;
};

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Columns [begin, end) of Bᵀ Qᵀ: every edge (u, v), u the user, adds its
// random ±1/√k row to u and subtracts it from v. The signs depend only on
// (seed, u, v, column), so blocking and threads do not change them.
void SketchRhs(const ComponentLaplacian& lap, const PositiveGraph& g, int k, uint32_t begin,
               uint32_t end, uint64_t seed, RowMatrix* rhs) {
  rhs->setZero(lap.size(), end - begin);
  const double scale = 1.0 / std::sqrt(static_cast<double>(k));
  for (size_t i = 0; i < lap.size(); ++i) {
    const uint32_t u = lap.nodes[i];
    if (u >= g.num_users) break;  // users come first in a component
    for (uint64_t e = lap.row_ptr[i]; e < lap.row_ptr[i + 1]; ++e) {
      const uint32_t j = lap.cols[e];
      uint64_t state = seed ^ (uint64_t{u} * 0x100000001b3ULL) ^ (uint64_t{lap.nodes[j]} << 32);
      SplitMix64(&state);
      uint64_t bits = 0;
      for (uint32_t c = 0; c < end; ++c) {
        if (c % 64 == 0) bits = SplitMix64(&state);
        if (c >= begin) {
          const double q = ((bits >> (c % 64)) & 1) ? scale : -scale;
          (*rhs)(i, c - begin) += q;
          (*rhs)(j, c - begin) -= q;
        }
      }
    }
  }
}

}  // namespace

absl::StatusOr<Eigen::MatrixXd> DensePseudoInverse(const ComponentLaplacian& lap) {
  const Eigen::Index n = static_cast<Eigen::Index>(lap.size());
  // L + J/n is positive definite on a connected graph; its inverse minus J/n is L⁺.
  Eigen::MatrixXd a = Eigen::MatrixXd::Constant(n, n, 1.0 / n);
  for (Eigen::Index i = 0; i < n; ++i) {
    a(i, i) += lap.degree[i];
    for (uint64_t e = lap.row_ptr[i]; e < lap.row_ptr[i + 1]; ++e) a(i, lap.cols[e]) -= 1.0;
  }
  Eigen::LLT<Eigen::MatrixXd> llt(a);
  if (llt.info() != Eigen::Success) {
    return absl::FailedPreconditionError(absl::StrCat(
        "component ", lap.component, " (", n, " nodes): dense Cholesky of L + J/n failed"));
  }
  Eigen::MatrixXd p = llt.solve(Eigen::MatrixXd::Identity(n, n));
  if (llt.info() != Eigen::Success) {
    return absl::FailedPreconditionError(absl::StrCat("component ", lap.component, ": dense solve failed"));
  }
  p.array() -= 1.0 / n;
  return p;
}


namespace {

// What ComputeResistance decided per component, and the work list.
struct Plan {
  std::vector<Route> route;         // per component
  std::vector<uint8_t> s_is_users;  // per component: the solved (smaller) side S is the users
  std::vector<Task> tasks;
};

// Stage 1: a route per component, then the tasks (dense components whole,
// sketch columns split over threads, one-sided columns in blocks). Counts the
// routes into `out`.
absl::StatusOr<Plan> PlanComponents(const PositiveGraph& g, const ResistanceOptions& o,
                                    ResistanceResult* out) {
  Plan plan;
  plan.route.assign(g.num_components, Route::kSkip);
  plan.s_is_users.assign(g.num_components, 1);
  const uint32_t k = static_cast<uint32_t>(o.sketch_dim);
  uint32_t largest = 0;
  for (uint32_t c = 0; c < g.num_components; ++c) {
    const uint32_t n = g.component_size(c), nu = g.component_users(c);
    if (n > g.component_size(largest)) largest = c;
    if (n < 2) continue;
    plan.s_is_users[c] = nu <= n - nu;
    const std::string r = RouteFor(o, n, std::min(nu, n - nu));
    if (r == "dense") {
      if (n > kMaxDenseNodes) {
        return absl::ResourceExhaustedError(absl::StrFormat(
            "component %d has %d nodes; the dense route holds n^2 doubles (%.1f GiB) and is "
            "limited to %d nodes: use resistance 'one-sided' or 'sketch'",
            c, n, double(n) * n * 8 / (1 << 30), kMaxDenseNodes));
      }
      plan.route[c] = Route::kDense;
      ++out->dense_components;
      plan.tasks.push_back({c, Route::kDense, 0, 0});
      continue;
    }
    plan.route[c] = r == "one-sided" ? Route::kOneSided : Route::kSketch;
    if (plan.route[c] == Route::kOneSided) ++out->one_sided_components; else ++out->sketch_components;
    // Node sketch rows: split the k columns over the threads on big components.
    const uint32_t parts = n >= 2000 ? std::min<uint32_t>(o.threads, k) : 1;
    for (uint32_t t = 0; t < parts; ++t) plan.tasks.push_back({c, Route::kSketch, k * t / parts, k * (t + 1) / parts});
    if (plan.route[c] == Route::kOneSided && o.compute_pairs) {
      const uint32_t s = plan.s_is_users[c] ? nu : n - nu;
      for (uint32_t b = 0; b < s; b += o.block_columns) {
        plan.tasks.push_back({c, Route::kOneSided, b, std::min<uint32_t>(s, b + o.block_columns)});
      }
    }
  }
  out->route = RouteFor(o, g.component_size(largest),
                        std::min(g.component_users(largest), g.component_size(largest) - g.component_users(largest)));
  return plan;
}

// The state the tasks of one ComputeResistance call share. Tasks write
// disjoint parts of out->sketch, out->resistance and diag.
struct Work {
  const PairTable& pairs;
  const PositiveGraph& g;
  const ResistanceOptions& o;
  const Plan& plan;
  ResistanceResult* out;
  PairIncidence inc;                                     // only with o.compute_pairs
  std::vector<std::unique_ptr<ComponentLaplacian>> laps; // PCG components, built once and shared
  std::vector<double> diag;                              // L⁺_ss of the solved side (one-sided)

  // Calls fn(pair, other endpoint node) for every pair at node s.
  template <typename Fn>
  void ForPairsAt(uint32_t s, Fn&& fn) const {
    const uint32_t U = g.num_users;
    if (s < U) {
      for (uint64_t p = inc.user_begin[s]; p < inc.user_begin[s + 1]; ++p) fn(p, U + pairs.pair_item[p]);
    } else {
      const uint32_t it = s - U;
      for (uint64_t q = inc.item_begin[it]; q < inc.item_begin[it + 1]; ++q) {
        fn(uint64_t{inc.item_pairs[q]}, pairs.pair_user[inc.item_pairs[q]]);
      }
    }
  }
};

// A dense component: L⁺ by Cholesky, its sketch rows L⁺BᵀQᵀ and R for its pairs.
void RunDenseTask(Work& w, const Task& task, TaskResult* res) {
  const uint32_t c = task.component, U = w.g.num_users;
  const int k = w.o.sketch_dim;
  ComponentLaplacian lap = ComponentLaplacian::Build(w.g, c);
  absl::StatusOr<Eigen::MatrixXd> p = DensePseudoInverse(lap);
  if (!p.ok()) {
    res->status = p.status();
    return;
  }
  RowMatrix rhs;
  SketchRhs(lap, w.g, k, 0, k, w.o.seed, &rhs);
  const RowMatrix z = (*p) * rhs;
  for (size_t i = 0; i < lap.size(); ++i) {
    for (int j = 0; j < k; ++j) w.out->sketch[size_t(lap.nodes[i]) * k + j] = static_cast<float>(z(i, j));
  }
  if (!w.o.compute_pairs) return;
  for (size_t i = 0; i < lap.size() && lap.nodes[i] < U; ++i) {
    w.ForPairsAt(lap.nodes[i], [&](uint64_t pi, uint32_t v) {
      if (w.g.component[v] != c) return;
      const uint32_t j = w.g.local_index[v];
      w.out->resistance[pi] = (*p)(i, i) + (*p)(j, j) - 2.0 * (*p)(i, j);
    });
  }
}

// A block of PCG columns: sketch columns (node rows) or one-sided columns
// e_s, keeping L⁺_ss and L⁺_ts for every pair (s, t) inside the component.
void RunPcgTask(Work& w, BlockPcg& solver, const Task& task, TaskResult* res) {
  const uint32_t c = task.component;
  const int k = w.o.sketch_dim;
  const ComponentLaplacian& lap = *w.laps[c];
  const uint32_t first = w.plan.s_is_users[c] ? 0 : w.g.component_users(c);
  RowMatrix rhs, x;
  if (task.kind == Route::kSketch) {
    SketchRhs(lap, w.g, k, task.begin, task.end, w.o.seed, &rhs);
  } else {
    rhs.setZero(lap.size(), task.end - task.begin);
    for (uint32_t j = task.begin; j < task.end; ++j) rhs(first + j, j - task.begin) = 1.0;
  }
  res->pcg = solver.Solve(lap, rhs, w.o.solver_tolerance, w.o.solver_max_iterations, &x);
  res->columns = static_cast<int>(rhs.cols());
  if (task.kind == Route::kSketch) {
    for (size_t i = 0; i < lap.size(); ++i) {
      for (uint32_t j = task.begin; j < task.end; ++j) {
        w.out->sketch[size_t(lap.nodes[i]) * k + j] = static_cast<float>(x(i, j - task.begin));
      }
    }
    return;
  }
  for (uint32_t j = task.begin; j < task.end; ++j) {
    const uint32_t si = first + j;
    const Eigen::Index col = j - task.begin;
    w.diag[lap.nodes[si]] = x(si, col);
    w.ForPairsAt(lap.nodes[si], [&](uint64_t pi, uint32_t t) {
      if (w.g.component[t] == c) w.out->resistance[pi] = x(w.g.local_index[t], col);
    });
  }
}

// Stage 2: every task, spread over the threads.
std::vector<TaskResult> RunTasks(Work& w) {
  std::vector<TaskResult> results(w.plan.tasks.size());
  std::vector<BlockPcg> solvers(w.o.threads);
  maec_internal::ParallelTasks(w.plan.tasks.size(), w.o.threads, [&](int thread, size_t ti) {
    const Task& task = w.plan.tasks[ti];
    if (task.kind == Route::kDense) {
      RunDenseTask(w, task, &results[ti]);
    } else {
      RunPcgTask(w, solvers[thread], task, &results[ti]);
    }
  });
  return results;
}

// Stage 3: one SolveSummary per PCG component plus one for all dense ones;
// the first failure (task error or non-convergence) is the answer.
absl::Status Summarise(const Work& w, const std::vector<TaskResult>& results) {
  const PositiveGraph& g = w.g;
  std::vector<SolveSummary> per_component(g.num_components);
  uint32_t largest_dense = 0, largest_dense_id = 0;
  for (size_t ti = 0; ti < w.plan.tasks.size(); ++ti) {
    if (!results[ti].status.ok()) return results[ti].status;
    const Task& task = w.plan.tasks[ti];
    if (task.kind == Route::kDense) {
      if (g.component_size(task.component) > largest_dense) {
        largest_dense = g.component_size(task.component);
        largest_dense_id = task.component;
      }
      continue;
    }
    SolveSummary& s = per_component[task.component];
    const bool first = s.right_hand_sides == 0;
    s.component = task.component;
    s.nodes = g.component_size(task.component);
    s.method = w.plan.route[task.component] == Route::kOneSided ? "pcg-one-sided" : "pcg-sketch";
    s.right_hand_sides += results[ti].columns;
    s.max_iterations = std::max(s.max_iterations, results[ti].pcg.iterations);
    s.max_relative_residual = std::max(s.max_relative_residual, results[ti].pcg.max_relative_residual);
    s.converged = (first || s.converged) && results[ti].pcg.converged;
  }
  if (w.out->dense_components > 0) {
    SolveSummary s;
    s.method = "dense";
    s.component = largest_dense_id;  // the largest of them
    s.nodes = largest_dense;
    s.converged = true;
    s.message = absl::StrCat(w.out->dense_components, " component(s) by dense Cholesky, largest ",
                             largest_dense, " nodes");
    w.out->solves.push_back(s);
  }
  for (uint32_t c = 0; c < g.num_components; ++c) {
    SolveSummary& s = per_component[c];
    if (s.right_hand_sides == 0) continue;
    s.message = absl::StrFormat("%d right-hand sides, Jacobi block PCG, tolerance %g", s.right_hand_sides,
                                w.o.solver_tolerance);
    if (!s.converged) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "component %d (%d nodes): PCG did not converge within %d iterations (relative residual "
          "%.3g > tolerance %g); raise solver_max_iterations or loosen solver_tolerance",
          c, s.nodes, w.o.solver_max_iterations, s.max_relative_residual, w.o.solver_tolerance));
    }
    w.out->solves.push_back(s);
  }
  return absl::OkStatus();
}

// Stage 4 (one-sided): the other side's diagonal from its Laplacian row,
// L⁺_tt = (1 − 1/n_c + Σ_{s∼t} L⁺_st) / deg(t).
void OtherSideDiagonal(Work& w) {
  const PositiveGraph& g = w.g;
  const uint32_t U = g.num_users;
  std::vector<double> acc(g.num_nodes(), 0.0);
  for (size_t p = 0; p < w.pairs.num_pairs(); ++p) {
    if (!w.pairs.label[p]) continue;
    const uint32_t u = w.pairs.pair_user[p], v = U + w.pairs.pair_item[p], c = g.component[u];
    if (w.plan.route[c] != Route::kOneSided) continue;
    acc[w.plan.s_is_users[c] ? v : u] += w.out->resistance[p];
  }
  for (uint32_t c = 0; c < g.num_components; ++c) {
    if (w.plan.route[c] != Route::kOneSided) continue;
    const double n = g.component_size(c);
    for (uint64_t q = g.component_offsets[c]; q < g.component_offsets[c + 1]; ++q) {
      const uint32_t t = g.component_nodes[q];
      if ((t < U) == bool(w.plan.s_is_users[c])) continue;
      w.diag[t] = (1.0 - 1.0 / n + acc[t]) / g.degree(t);
    }
  }
}

// Stage 5: R per pair — L⁺_uu + L⁺_vv − 2L⁺_uv (one-sided) or ‖Z_u − Z_v‖² (sketch).
void PairResistances(Work& w) {
  const PositiveGraph& g = w.g;
  const uint32_t U = g.num_users;
  const int k = w.o.sketch_dim;
  ResistanceResult& out = *w.out;
  maec_internal::ParallelChunks(w.pairs.num_pairs(), w.o.threads, [&](int, size_t begin, size_t end) {
    for (size_t p = begin; p < end; ++p) {
      const uint32_t u = w.pairs.pair_user[p], v = U + w.pairs.pair_item[p], c = g.component[u];
      if (g.component[v] != c) continue;
      if (w.plan.route[c] == Route::kOneSided) {
        out.resistance[p] = w.diag[u] + w.diag[v] - 2.0 * out.resistance[p];
      } else if (w.plan.route[c] == Route::kSketch) {
        const float* zu = out.sketch.data() + size_t(u) * k;
        const float* zv = out.sketch.data() + size_t(v) * k;
        double r = 0.0;
        for (int j = 0; j < k; ++j) r += double(zu[j] - zv[j]) * double(zu[j] - zv[j]);
        out.resistance[p] = r;
      }
    }
  });
}

}  // namespace

absl::StatusOr<ResistanceResult> ComputeResistance(const PairTable& pairs, const PositiveGraph& g,
                                                   const ResistanceOptions& o) {
  if (absl::Status s = o.Validate(); !s.ok()) return s;
  ResistanceResult out;
  out.sketch_dim = o.sketch_dim;
  out.sketch.assign(g.num_nodes() * size_t(o.sketch_dim), 0.0f);
  if (o.compute_pairs) out.resistance.assign(pairs.num_pairs(), kInf);
  absl::StatusOr<Plan> plan = PlanComponents(g, o, &out);
  if (!plan.ok()) return plan.status();

  Work w{pairs, g, o, *plan, &out, {}, {}, {}};
  w.laps.resize(g.num_components);
  for (uint32_t c = 0; c < g.num_components; ++c) {
    if (plan->route[c] == Route::kOneSided || plan->route[c] == Route::kSketch) {
      w.laps[c] = std::make_unique<ComponentLaplacian>(ComponentLaplacian::Build(g, c));
    }
  }
  if (o.compute_pairs) {
    w.inc = PairIncidence::Build(pairs);
    w.diag.assign(g.num_nodes(), 0.0);
  }
  const std::vector<TaskResult> results = RunTasks(w);
  if (absl::Status s = Summarise(w, results); !s.ok()) return s;
  if (!o.compute_pairs) return out;
  OtherSideDiagonal(w);
  PairResistances(w);
  return out;
}

}  // namespace graphsieve
