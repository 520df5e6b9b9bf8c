// Options of the effective-resistance stage (resistance.h): which route serves
// the pairs and how the Laplacian solves are run.
//
// Thread-safety: plain values; the functions are pure.
#ifndef GRAPHSIEVE_CORE_MAEC_RESISTANCE_OPTIONS_H_
#define GRAPHSIEVE_CORE_MAEC_RESISTANCE_OPTIONS_H_

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace graphsieve {

class Communicator;  // core/distributed/communicator.h

enum class ResistanceMethod { kAuto, kExact, kSketch, kOneSided };

// "auto", "exact", "sketch", "one-sided". Errors: INVALID_ARGUMENT listing them.
absl::StatusOr<ResistanceMethod> ParseResistanceMethod(std::string_view name);
const char* ResistanceMethodName(ResistanceMethod m);

struct ResistanceOptions {
  ResistanceMethod method = ResistanceMethod::kAuto;
  int sketch_dim = 64;             // k of the node sketch rows (and of the sketch route)
  double solver_tolerance = 1e-6;  // relative residual of every PCG column
  int solver_max_iterations = 1000;
  int exact_max_nodes = 1000;  // kAuto: dense for components up to this many nodes
  int64_t one_sided_max_solves =
      20000;  // kAuto: one-sided at most this many solves, and only while
              // cheaper than the accuracy sketch (OneSidedIsCheaper)
  // kAuto's pair sketch (the seen pairs) uses enough columns for this median relative error of
  // R_eff: k = 2·(0.6745·ρ/e)², ρ the residual share of R the sketch estimates (measured on the
  // graph from the node-row columns; 1 without the control variate), at least 32.
  // docs/METHOD.md "How auto picks". kSketch uses sketch_dim for the pairs too.
  double pair_sketch_median_error = 0.022;
  // The pair sketch estimates only the residual R − (1/d_u + 1/d_v − 2w_uv/(d_u d_v)) of a
  // control variate y = D⁻¹b (docs/METHOD.md "Control variate"); false = the plain
  // Spielman–Srivastava distance ‖Z_u − Z_v‖² (for measurement).
  bool pair_sketch_control_variate = true;
  // The node rows kept for unseen pairs (always user–item, never a positive
  // edge) hold z'_v = z_v − (BᵀQᵀ)_v/d_v and two exact coordinates, √(1/d_v) in
  // the node's side's slot (user k, item k + 1): ‖row_u − row_v‖² = 1/d_u +
  // 1/d_v + ‖z'_u − z'_v‖², the control-variate estimate (docs/METHOD.md
  // "Unseen pairs"). false = the plain rows z_v (for measurement).
  bool unseen_control_variate = true;
  int block_columns = 32;     // right-hand sides per PCG block (one-sided)
  bool compute_pairs = true;  // false: node sketch rows only
  uint64_t seed = 42;
  int threads = 2;
  // Distributed run (docs/DESIGN.md §5), not owned; null = one process. The
  // PairTable passed to ComputeResistance then holds this rank's pairs only
  // (global user and item indices), the graph is the global one, sketch
  // columns are split across ranks and one-sided solves run over the users
  // (each rank solves for the users whose pairs it holds).
  Communicator* comm = nullptr;
  // INVALID_ARGUMENT naming the field that is out of range.
  absl::Status Validate() const;
  // Columns of the sketch that serves the seen pairs: sketch_dim for kSketch,
  // else max(32, 2·(0.6745·residual_share/pair_sketch_median_error)²) rounded
  // up to a multiple of 32 (the distance blocks). Fewer than sketch_dim: the
  // distances read the first columns of the node-row solve.
  int PairSketchDim(double residual_share) const;
  // Floats per stored node row: sketch_dim, plus 2 with unseen_control_variate.
  int NodeRowDim() const { return sketch_dim + (unseen_control_variate ? 2 : 0); }
};

// The route kAuto (or a forced method) uses for a component of n nodes whose
// smaller side has s nodes: "none" (n < 2), "dense", "one-sided" or "sketch".
const char* RouteFor(const ResistanceOptions& options, uint32_t n, uint32_t s);

// kAuto, a component RouteFor sends one-sided: is |S| solves on `edges`
// positive edges cheaper than the pair sketch of k columns (k − sketch_dim
// more solves — the node rows are solved either way — plus a k-long distance
// for each of its `pairs`)? The cost ratio of a distance coordinate to a
// solve-edge is measured (docs/METHOD.md "How auto picks").
bool OneSidedIsCheaper(const ResistanceOptions& options, uint64_t s, uint64_t edges, uint64_t pairs,
                       int k);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MAEC_RESISTANCE_OPTIONS_H_
