// Block preconditioned conjugate gradient for the Laplacian of one connected
// component: solves L X = Π B for a block of right-hand sides at once, where Π
// removes each column's mean (L's null space is the constant vector). The
// block is a row-major Eigen matrix (n x b) so that one sparse-times-dense
// product (SpMM) serves all b columns; each column keeps its own step sizes
// and its own convergence test, so the answer equals b separate PCG solves.
// Preconditioner: Jacobi (the node degrees). Solutions are returned with zero
// column means, i.e. X = L⁺ B.
//
// Thread-safety: a BlockPcg is one thread's scratch; the ComponentLaplacian it
// reads may be shared by many BlockPcg objects.
#ifndef GRAPHSIEVE_CORE_MAEC_BLOCK_PCG_H_
#define GRAPHSIEVE_CORE_MAEC_BLOCK_PCG_H_

#include <Eigen/Dense>
#include <vector>

#include "core/maec/graph.h"

namespace graphsieve {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

struct BlockPcgResult {
  int iterations = 0;                // iterations until every column met the tolerance
  double max_relative_residual = 0;  // max_j ‖r_j‖ / ‖b_j‖ of the reduced system (CG recurrence)
  bool converged = false;
};

class BlockPcg {
 public:
  BlockPcg() = default;
  // REQUIRES: rhs.rows() == lap.size() and lap describes a connected graph.
  // `x` is resized to rhs's shape. Columns whose projected rhs is zero get 0.
  BlockPcgResult Solve(const ComponentLaplacian& lap, const RowMatrix& rhs, double tolerance,
                       int max_iterations, RowMatrix* x);

 private:
  RowMatrix r_, z_, p_, ap_, t_, xk_, pb_;  // scratch, reused across calls
  std::vector<double> diag_, inv_degree_;
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MAEC_BLOCK_PCG_H_
