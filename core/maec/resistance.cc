#include "core/maec/resistance.h"

#include <algorithm>
#include <limits>
#include <memory>

#include <Eigen/Cholesky>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/distributed/communicator.h"
#include "core/maec/parallel.h"
#include "core/maec/resistance_internal.h"
#include "core/maec/resistance_plan.h"

namespace graphsieve {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct TaskResult {
  BlockPcgResult pcg;
  int columns = 0;
  absl::Status status;
};

}  // namespace

double ControlVariateExactPart(double degree_u, double degree_v, bool edge) {
  // bᵀ(2D⁻¹ − D⁻¹LD⁻¹)b = bᵀ(D⁻¹ + D⁻¹AD⁻¹)b for b = e_u − e_v.
  return 1.0 / degree_u + 1.0 / degree_v - (edge ? 2.0 / (degree_u * degree_v) : 0.0);
}

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
    return absl::FailedPreconditionError(absl::StrCat("component ", lap.component, " (", n,
                                                      " nodes): dense Cholesky of L + J/n failed"));
  }
  Eigen::MatrixXd p = llt.solve(Eigen::MatrixXd::Identity(n, n));
  if (llt.info() != Eigen::Success) {
    return absl::FailedPreconditionError(
        absl::StrCat("component ", lap.component, ": dense solve failed"));
  }
  p.array() -= 1.0 / n;
  return p;
}

namespace {

using maec_internal::Distributed;
using maec_internal::Plan;
using maec_internal::PlanComponents;
using maec_internal::Rank;
using maec_internal::Ranks;
using maec_internal::Route;
using maec_internal::Task;

using maec_internal::NodeRowExactCoordinates;
using maec_internal::ReducePhaseTwoColumns;
using maec_internal::ResidualShare;
using maec_internal::SketchDistances;
using maec_internal::SketchRhs;
using maec_internal::StoreSketchColumns;
using maec_internal::Work;

// A dense component: L⁺ by Cholesky, its sketch rows L⁺BᵀQᵀ and R for its
// pairs. Every rank needs R for its pairs; one rank writes the node rows.
void RunDenseTask(Work& w, const Task& task, TaskResult* res) {
  const uint32_t c = task.component, U = w.g.num_users;
  const int k = w.o.sketch_dim;
  ComponentLaplacian lap = ComponentLaplacian::Build(w.g, c);
  absl::StatusOr<Eigen::MatrixXd> p = DensePseudoInverse(lap);
  if (!p.ok()) {
    res->status = p.status();
    return;
  }
  if (int(c % Ranks(w.o)) == Rank(w.o)) {
    RowMatrix rhs;
    SketchRhs(lap, w.g, k, 0, k, w.o.seed, &rhs);
    const RowMatrix z = (*p) * rhs;
    const size_t row = size_t(w.out->sketch_dim);
    for (size_t i = 0; i < lap.size(); ++i) {
      const double inv_degree = w.o.unseen_control_variate ? 1.0 / lap.degree[i] : 0.0;
      for (int j = 0; j < k; ++j) {
        w.out->sketch[lap.nodes[i] * row + j] =
            static_cast<float>(z(i, j) - rhs(i, j) * inv_degree);
      }
    }
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

// A block of PCG columns: sketch columns, or one-sided columns e_s keeping
// L⁺_ss and L⁺_ts for every pair (s, t) inside the component.
void RunPcgTask(Work& w, BlockPcg& solver, const Task& task, TaskResult* res) {
  const uint32_t c = task.component;
  const ComponentLaplacian& lap = *w.laps[c];
  const uint32_t first = w.plan.s_is_users[c] ? 0 : w.g.component_users(c);
  RowMatrix rhs, x;
  if (task.kind == Route::kSketch) {
    SketchRhs(lap, w.g, w.o.sketch_dim, task.begin, task.end, w.o.seed, &rhs);
  } else {
    rhs.setZero(lap.size(), task.end - task.begin);
    for (uint32_t j = task.begin; j < task.end; ++j)
      rhs(first + w.plan.columns[c][j], j - task.begin) = 1.0;
  }
  res->pcg = solver.Solve(lap, rhs, w.o.solver_tolerance, w.o.solver_max_iterations, &x);
  res->columns = static_cast<int>(rhs.cols());
  if (task.kind == Route::kSketch) {
    StoreSketchColumns(w, task, lap, rhs, x);
    return;
  }
  for (uint32_t j = task.begin; j < task.end; ++j) {
    const uint32_t si = first + w.plan.columns[c][j];
    const Eigen::Index col = j - task.begin;
    w.diag[lap.nodes[si]] = x(si, col);
    w.ForPairsAt(lap.nodes[si], [&](uint64_t pi, uint32_t t) {
      if (w.g.component[t] == c) w.out->resistance[pi] = x(w.g.local_index[t], col);
    });
  }
}
// Tasks [begin, end) of the plan, spread over the threads.
void RunTasks(Work& w, size_t begin, size_t end, std::vector<TaskResult>* results) {
  results->resize(w.plan.tasks.size());
  std::vector<BlockPcg> solvers(w.o.threads);
  maec_internal::ParallelTasks(end - begin, w.o.threads, [&](int thread, size_t i) {
    const size_t ti = begin + i;
    const Task& task = w.plan.tasks[ti];
    if (task.kind == Route::kDense) {
      RunDenseTask(w, task, &(*results)[ti]);
    } else {
      RunPcgTask(w, solvers[thread], task, &(*results)[ti]);
    }
  });
}

// Per component over all ranks: right-hand sides summed, iterations and
// residual maxed, converged only if every block converged.
void ReduceSummaries(const ResistanceOptions& o, std::vector<SolveSummary>* per_component) {
  if (!Distributed(o)) return;
  const size_t n = per_component->size();
  std::vector<double> sums(n), maxes(3 * n);
  for (size_t c = 0; c < n; ++c) {
    const SolveSummary& s = (*per_component)[c];
    sums[c] = s.right_hand_sides;
    maxes[3 * c] = s.max_iterations;
    maxes[3 * c + 1] = s.max_relative_residual;
    maxes[3 * c + 2] = s.right_hand_sides > 0 && !s.converged ? 1.0 : 0.0;
  }
  o.comm->AllReduceSum(absl::MakeSpan(sums));
  o.comm->AllReduceMax(absl::MakeSpan(maxes));
  for (size_t c = 0; c < n; ++c) {
    SolveSummary& s = (*per_component)[c];
    s.right_hand_sides = static_cast<int>(sums[c]);
    s.max_iterations = static_cast<int>(maxes[3 * c]);
    s.max_relative_residual = maxes[3 * c + 1];
    s.converged = maxes[3 * c + 2] == 0.0;
  }
}

// Stage 3: one SolveSummary per PCG component plus one for all dense ones;
// the first failure (task error or non-convergence) is the answer. Every
// rank returns the same status.
absl::Status Summarise(const Work& w, const std::vector<TaskResult>& results) {
  const PositiveGraph& g = w.g;
  absl::Status task_status;
  for (const TaskResult& r : results) {
    if (!r.status.ok()) {
      task_status = r.status;
      break;
    }
  }
  if (w.o.comm) task_status = AgreeOnStatus(*w.o.comm, task_status);
  if (!task_status.ok()) return task_status;
  std::vector<SolveSummary> per_component(g.num_components);
  uint32_t largest_dense = 0, largest_dense_id = 0;
  for (size_t ti = 0; ti < w.plan.tasks.size(); ++ti) {
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
    s.right_hand_sides += results[ti].columns;
    s.max_iterations = std::max(s.max_iterations, results[ti].pcg.iterations);
    s.max_relative_residual =
        std::max(s.max_relative_residual, results[ti].pcg.max_relative_residual);
    s.converged = (first || s.converged) && results[ti].pcg.converged;
  }
  ReduceSummaries(w.o, &per_component);
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
    s.component = c;
    s.nodes = g.component_size(c);
    s.method = w.plan.route[c] == Route::kOneSided ? "pcg-one-sided" : "pcg-sketch";
    s.message = absl::StrFormat("%d right-hand sides, Jacobi block PCG, tolerance %g",
                                s.right_hand_sides, w.o.solver_tolerance);
    if (w.plan.route[c] == Route::kSketch && w.o.compute_pairs) {
      absl::StrAppendFormat(
          &s.message, "; pair sketch k = %d, %s", w.plan.pair_k,
          w.o.pair_sketch_control_variate
              ? absl::StrFormat("control variate, residual share %.4f", w.plan.residual_share)
              : std::string("no control variate"));
    }
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
// L⁺_tt = (1 − 1/n_c + Σ_{s∼t} L⁺_st) / deg(t); the sums run over every
// rank's positive pairs.
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
  if (Distributed(w.o)) w.o.comm->AllReduceSum(absl::MakeSpan(acc));
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
  ResistanceResult& out = *w.out;
  constexpr size_t kChunk = 1 << 16;
  const size_t P = w.pairs.num_pairs();
  maec_internal::ParallelTasks((P + kChunk - 1) / kChunk, w.o.threads, [&](int, size_t chunk) {
    const size_t begin = chunk * kChunk, end = std::min(P, begin + kChunk);
    if (!w.pair_z.empty()) SketchDistances(w, begin, end);
    for (size_t p = begin; p < end; ++p) {
      const uint32_t u = w.pairs.pair_user[p], v = U + w.pairs.pair_item[p], c = g.component[u];
      if (g.component[v] != c) continue;
      if (w.plan.route[c] == Route::kOneSided) {
        out.resistance[p] = w.diag[u] + w.diag[v] - 2.0 * out.resistance[p];
      }
    }
  });
}

// Does a one-sided component solve over its items (then ForPairsAt needs
// the item lists of PairIncidence)?
bool SolvesOverItems(const Plan& plan) {
  for (size_t c = 0; c < plan.route.size(); ++c) {
    if (plan.route[c] == Route::kOneSided && !plan.s_is_users[c]) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<ResistanceResult> ComputeResistance(const PairTable& pairs, const PositiveGraph& g,
                                                   const ResistanceOptions& o) {
  if (absl::Status s = o.Validate(); !s.ok()) return s;
  ResistanceResult out;
  out.sketch_dim = o.NodeRowDim();
  out.sketch.assign(g.num_nodes() * size_t(out.sketch_dim), 0.0f);
  if (o.compute_pairs) out.resistance.assign(pairs.num_pairs(), kInf);
  // Item lists only once a one-sided component solves over its items (phase 2).
  PairIncidence inc =
      o.compute_pairs ? PairIncidence::Build(pairs, /*with_items=*/false) : PairIncidence{};
  absl::StatusOr<Plan> plan = PlanComponents(pairs, g, o);
  if (!plan.ok()) return plan.status();

  Work w{pairs, g, o, *plan, &out, inc, {}, {}, {}};
  w.laps.resize(g.num_components);
  bool any_pair_sketch = false;
  for (uint32_t c = 0; c < g.num_components; ++c) {
    if (plan->route[c] == Route::kOneSided || plan->route[c] == Route::kSketch) {
      w.laps[c] = std::make_unique<ComponentLaplacian>(ComponentLaplacian::Build(g, c));
    }
    any_pair_sketch = any_pair_sketch || plan->pair_sketch[c];
  }
  if (o.compute_pairs) w.diag.assign(g.num_nodes(), 0.0);
  const auto blocks = [](int k) { return size_t(k + Work::kDistBlock - 1) / Work::kDistBlock; };
  if (any_pair_sketch)
    w.pair_z.assign(blocks(o.sketch_dim) * g.num_nodes() * Work::kDistBlock, 0.0f);

  // Phase 1: dense components and the node rows, which also size the pair sketch.
  std::vector<TaskResult> results;
  RunTasks(w, 0, plan->phase1_tasks, &results);
  if (Distributed(o)) {  // every rank wrote its columns (and its dense components' rows)
    o.comm->AllReduceSum(absl::MakeSpan(out.sketch));
    o.comm->AllReduceSum(absl::MakeSpan(w.pair_z));
  }
  NodeRowExactCoordinates(g, o, &out);  // after the reduce: every rank writes the same values
  const double share = any_pair_sketch && o.pair_sketch_control_variate ? ResidualShare(w) : 1.0;
  maec_internal::PlanSecondPhase(g, inc, o, share, &*plan);
  out.dense_components = plan->dense_components;
  out.one_sided_components = plan->one_sided_components;
  out.sketch_components = plan->sketch_components;
  out.route = plan->largest_route;
  if (o.compute_pairs && SolvesOverItems(*plan)) inc = PairIncidence::Build(pairs);
  if (out.sketch_components > 0 && o.compute_pairs) {
    out.pair_sketch_dim = plan->pair_k;
    out.residual_share = share;
  }
  // Phase 2: one-sided columns and the rest of the pair sketch.
  const bool phase2_sketch =
      out.sketch_components > 0 && o.compute_pairs && plan->pair_k > o.sketch_dim;
  if (phase2_sketch) {
    w.pair_z.resize(blocks(plan->pair_k) * g.num_nodes() * Work::kDistBlock, 0.0f);
  }
  RunTasks(w, plan->phase1_tasks, plan->tasks.size(), &results);
  if (absl::Status s = Summarise(w, results); !s.ok()) return s;
  if (Distributed(o) && phase2_sketch) ReducePhaseTwoColumns(w);
  if (!o.compute_pairs) return out;
  OtherSideDiagonal(w);
  PairResistances(w);
  return out;
}

}  // namespace graphsieve
