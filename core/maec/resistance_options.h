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

enum class ResistanceMethod { kAuto, kExact, kSketch, kOneSided };

// "auto", "exact", "sketch", "one-sided". Errors: INVALID_ARGUMENT listing them.
absl::StatusOr<ResistanceMethod> ParseResistanceMethod(std::string_view name);
const char* ResistanceMethodName(ResistanceMethod m);

struct ResistanceOptions {
  ResistanceMethod method = ResistanceMethod::kAuto;
  int sketch_dim = 64;                  // k of the node sketch rows (and of the sketch route)
  double solver_tolerance = 1e-6;       // relative residual of every PCG column
  int solver_max_iterations = 1000;
  int exact_max_nodes = 1000;           // kAuto: dense for components up to this many nodes
  int64_t one_sided_max_solves = 20000; // kAuto: one-sided while the smaller side is at most this
  int block_columns = 32;               // right-hand sides per PCG block (one-sided)
  bool compute_pairs = true;            // false: node sketch rows only
  uint64_t seed = 42;
  int threads = 2;
  // INVALID_ARGUMENT naming the field that is out of range.
  absl::Status Validate() const;
};

// The route kAuto (or a forced method) uses for a component of n nodes whose
// smaller side has s nodes: "none" (n < 2), "dense", "one-sided" or "sketch".
const char* RouteFor(const ResistanceOptions& options, uint32_t n, uint32_t s);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MAEC_RESISTANCE_OPTIONS_H_
