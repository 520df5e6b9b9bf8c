// Reports of the solver and of the pipeline's stages, as the manifest
// stores them (docs/SNAPSHOT.md).
//
// Thread-safety: plain values.
#ifndef GRAPHSIEVE_CORE_RECORDS_SOLVE_SUMMARY_H_
#define GRAPHSIEVE_CORE_RECORDS_SOLVE_SUMMARY_H_

#include <cstdint>
#include <string>

namespace graphsieve {

// One Laplacian solve (or a block of them) of one component (ceres-style summary).
struct SolveSummary {
  uint32_t component = 0;
  uint32_t nodes = 0;
  std::string method;  // "dense", "pcg-one-sided", "pcg-sketch"
  int right_hand_sides = 0;
  int max_iterations = 0;  // over the block
  double max_relative_residual = 0.0;
  bool converged = false;
  std::string message;
};

// Wall time of one pipeline stage.
struct StageTiming {
  std::string stage;
  double seconds = 0.0;
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_RECORDS_SOLVE_SUMMARY_H_
