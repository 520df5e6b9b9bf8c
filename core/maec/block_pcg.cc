#include "core/maec/block_pcg.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace graphsieve {
namespace maec_kernels {

// The kernels are compiled twice (AVX2+FMA and baseline) and picked at load
// time, so one binary runs everywhere and uses the wide units where present.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define GRAPHSIEVE_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define GRAPHSIEVE_CLONES
#endif

// y_i = d_i x_i − Σ_{j ∼ i} x_j, rows of b doubles.
GRAPHSIEVE_CLONES void SpMM(const uint64_t* row_ptr, const uint32_t* cols, const double* degree,
                            size_t n, int b, const double* x, double* y) {
  for (size_t i = 0; i < n; ++i) {
    double* yi = y + i * b;
    const double* xi = x + i * b;
    const double d = degree[i];
    for (int j = 0; j < b; ++j) yi[j] = d * xi[j];
    for (uint64_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      const double* xn = x + size_t{cols[k]} * b;
      for (int j = 0; j < b; ++j) yi[j] -= xn[j];
    }
  }
}

// out_j = Σ_i a_ij c_ij.
GRAPHSIEVE_CLONES void ColumnDots(const double* a, const double* c, size_t n, int b, double* out) {
  for (int j = 0; j < b; ++j) out[j] = 0.0;
  for (size_t i = 0; i < n; ++i) {
    for (int j = 0; j < b; ++j) out[j] += a[i * b + j] * c[i * b + j];
  }
}

// x += alpha∘p; r −= alpha∘ap; sums_j = Σ_i r_ij.
GRAPHSIEVE_CLONES void UpdateXR(const double* alpha, const double* p, const double* ap, size_t n,
                                int b, double* x, double* r, double* sums) {
  for (int j = 0; j < b; ++j) sums[j] = 0.0;
  for (size_t i = 0; i < n; ++i) {
    for (int j = 0; j < b; ++j) {
      x[i * b + j] += alpha[j] * p[i * b + j];
      const double rv = r[i * b + j] - alpha[j] * ap[i * b + j];
      r[i * b + j] = rv;
      sums[j] += rv;
    }
  }
}

// r −= mean; z = r / d; rz_j = Σ r z; rr_j = Σ r².
GRAPHSIEVE_CLONES void ProjectPrecondition(const double* mean, const double* degree, size_t n,
                                           int b, double* r, double* z, double* rz, double* rr) {
  for (int j = 0; j < b; ++j) rz[j] = rr[j] = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double inv = 1.0 / degree[i];
    for (int j = 0; j < b; ++j) {
      const double rv = r[i * b + j] - mean[j];
      r[i * b + j] = rv;
      const double zv = rv * inv;
      z[i * b + j] = zv;
      rz[j] += rv * zv;
      rr[j] += rv * rv;
    }
  }
}

// p = z + beta∘p.
GRAPHSIEVE_CLONES void UpdateP(const double* beta, const double* z, size_t n, int b, double* p) {
  for (size_t i = 0; i < n; ++i) {
    for (int j = 0; j < b; ++j) p[i * b + j] = z[i * b + j] + beta[j] * p[i * b + j];
  }
}

}  // namespace maec_kernels

namespace {

void ColumnMeans(const RowMatrix& m, double* out) {
  const int b = static_cast<int>(m.cols());
  for (int j = 0; j < b; ++j) out[j] = 0.0;
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    for (int j = 0; j < b; ++j) out[j] += m(i, j);
  }
  for (int j = 0; j < b; ++j) out[j] /= static_cast<double>(m.rows());
}

}  // namespace

void LaplacianTimes(const ComponentLaplacian& lap, const RowMatrix& x, RowMatrix* y) {
  y->resize(x.rows(), x.cols());
  maec_kernels::SpMM(lap.row_ptr.data(), lap.cols.data(), lap.degree.data(), lap.size(),
                     static_cast<int>(x.cols()), x.data(), y->data());
}

BlockPcgResult BlockPcg::Solve(const ComponentLaplacian& lap, const RowMatrix& rhs,
                               double tolerance, int max_iterations, RowMatrix* x) {
  namespace k = maec_kernels;
  const size_t n = lap.size();
  const int b = static_cast<int>(rhs.cols());
  BlockPcgResult result;
  x->setZero(n, b);
  r_ = rhs;
  z_.resize(n, b);
  p_.resize(n, b);
  ap_.resize(n, b);
  std::vector<double> mean(b), rz(b), rz_new(b), rr(b), bnorm2(b), pap(b), alpha(b), beta(b);
  ColumnMeans(r_, mean.data());
  k::ProjectPrecondition(mean.data(), lap.degree.data(), n, b, r_.data(), z_.data(), rz.data(),
                         bnorm2.data());
  p_ = z_;
  auto all_converged = [&](const std::vector<double>& r2) {
    for (int j = 0; j < b; ++j) {
      if (r2[j] > tolerance * tolerance * bnorm2[j]) return false;
    }
    return true;
  };
  bool done = all_converged(bnorm2);  // only when every projected rhs is 0
  int it = 0;
  while (!done && it < max_iterations) {
    ++it;
    k::SpMM(lap.row_ptr.data(), lap.cols.data(), lap.degree.data(), n, b, p_.data(), ap_.data());
    k::ColumnDots(p_.data(), ap_.data(), n, b, pap.data());
    for (int j = 0; j < b; ++j) alpha[j] = pap[j] > 0.0 ? rz[j] / pap[j] : 0.0;
    k::UpdateXR(alpha.data(), p_.data(), ap_.data(), n, b, x->data(), r_.data(), mean.data());
    for (int j = 0; j < b; ++j) mean[j] /= static_cast<double>(n);
    k::ProjectPrecondition(mean.data(), lap.degree.data(), n, b, r_.data(), z_.data(),
                           rz_new.data(), rr.data());
    if (all_converged(rr)) {
      done = true;
      break;
    }
    for (int j = 0; j < b; ++j) {
      beta[j] = rz[j] > 0.0 ? rz_new[j] / rz[j] : 0.0;
      rz[j] = rz_new[j];
    }
    k::UpdateP(beta.data(), z_.data(), n, b, p_.data());
  }
  // Zero column means (the L⁺ solution), then the true residual.
  ColumnMeans(*x, mean.data());
  for (size_t i = 0; i < n; ++i) {
    for (int j = 0; j < b; ++j) (*x)(i, j) -= mean[j];
  }
  LaplacianTimes(lap, *x, &ap_);
  ColumnMeans(rhs, mean.data());
  result.max_relative_residual = 0.0;
  for (int j = 0; j < b; ++j) {
    double res2 = 0.0;
    for (size_t i = 0; i < n; ++i) {
      const double d = rhs(i, j) - mean[j] - ap_(i, j);
      res2 += d * d;
    }
    if (bnorm2[j] > 0.0) {
      result.max_relative_residual = std::max(result.max_relative_residual, std::sqrt(res2 / bnorm2[j]));
    }
  }
  result.iterations = it;
  // The recurrence residual met the tolerance; allow the recomputed one a
  // little rounding slack before calling the solve failed.
  result.converged = done && result.max_relative_residual <= 10.0 * tolerance + 1e-13;
  return result;
}

}  // namespace graphsieve
