#include "core/maec/block_pcg.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace graphsieve {
namespace maec_kernels {

// The kernels are compiled twice (AVX2+FMA and baseline) and picked at load
// time, so one binary runs everywhere and uses the wide units where present.
// Not under ThreadSanitizer: g++ instruments the ifunc resolver, which runs
// during relocation before the TSan runtime is up, and every program linking
// these kernels crashed at start (docs/RELIABILITY.md, "ThreadSanitizer").
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define GRAPHSIEVE_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define GRAPHSIEVE_CLONES
#endif

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

// t_e = (Σ_{k∼e} x_k) / d_e for the eliminated rows, then
// y_k = d_k x_k − Σ_{e∼k} t_e for the kept rows (y = S x).
GRAPHSIEVE_CLONES void SchurTimes(const uint64_t* row_ptr, const uint32_t* cols,
                                  const double* degree, uint32_t k0, uint32_t nk, uint32_t e0,
                                  uint32_t ne, int b, const double* x, double* t, double* y) {
  for (uint32_t e = 0; e < ne; ++e) {
    double* te = t + size_t{e} * b;
    for (int j = 0; j < b; ++j) te[j] = 0.0;
    for (uint64_t q = row_ptr[e0 + e]; q < row_ptr[e0 + e + 1]; ++q) {
      const double* xk = x + size_t{cols[q] - k0} * b;
      for (int j = 0; j < b; ++j) te[j] += xk[j];
    }
    const double inv = 1.0 / degree[e0 + e];
    for (int j = 0; j < b; ++j) te[j] *= inv;
  }
  for (uint32_t k = 0; k < nk; ++k) {
    double* yk = y + size_t{k} * b;
    const double* xk = x + size_t{k} * b;
    const double d = degree[k0 + k];
    for (int j = 0; j < b; ++j) yk[j] = d * xk[j];
    for (uint64_t q = row_ptr[k0 + k]; q < row_ptr[k0 + k + 1]; ++q) {
      const double* te = t + size_t{cols[q] - e0} * b;
      for (int j = 0; j < b; ++j) yk[j] -= te[j];
    }
  }
}

// out_r = (base_r + Σ_{c∼r} src_c · scale_c) · row_scale_r for rows r in
// [r0, r0 + nr); neighbour c reads src row (c − src0). scale / row_scale may
// be null (= 1). Serves the reduced rhs and the back-substitution.
GRAPHSIEVE_CLONES void GatherRows(const uint64_t* row_ptr, const uint32_t* cols, uint32_t r0,
                                  uint32_t nr, uint32_t src0, int b, const double* base,
                                  const double* src, const double* inv_degree, bool scale_src,
                                  double* out) {
  for (uint32_t r = 0; r < nr; ++r) {
    double* o = out + size_t{r} * b;
    const double* bs = base + size_t{r0 + r} * b;
    for (int j = 0; j < b; ++j) o[j] = bs[j];
    for (uint64_t q = row_ptr[r0 + r]; q < row_ptr[r0 + r + 1]; ++q) {
      const double* sc = src + size_t{cols[q] - src0} * b;
      const double w = scale_src ? inv_degree[cols[q]] : 1.0;
      for (int j = 0; j < b; ++j) o[j] += w * sc[j];
    }
    if (!scale_src) {
      const double w = inv_degree[r0 + r];
      for (int j = 0; j < b; ++j) o[j] *= w;
    }
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

BlockPcgResult BlockPcg::Solve(const ComponentLaplacian& lap, const RowMatrix& rhs,
                               double tolerance, int max_iterations, RowMatrix* x) {
  namespace kr = maec_kernels;
  const size_t n = lap.size();
  const int b = static_cast<int>(rhs.cols());
  // Kept side K (the smaller) and eliminated side E, as local row ranges.
  const uint32_t nu = lap.num_users, ni = static_cast<uint32_t>(n) - nu;
  const bool keep_users = nu <= ni;
  const uint32_t k0 = keep_users ? 0 : nu, nk = keep_users ? nu : ni;
  const uint32_t e0 = keep_users ? nu : 0, ne = keep_users ? ni : nu;
  BlockPcgResult result;
  std::vector<double> mean(b), rz(b), rz_new(b), rr(b), bnorm2(b), pap(b), alpha(b), beta(b);

  // Π b, then the reduced right-hand side b_K + A D_E⁻¹ b_E.
  RowMatrix& pb = pb_;  // Π b, kept for the back-substitution
  pb = rhs;
  ColumnMeans(pb, mean.data());
  for (size_t i = 0; i < n; ++i) {
    for (int j = 0; j < b; ++j) pb(i, j) -= mean[j];
  }
  inv_degree_.resize(n);
  for (size_t i = 0; i < n; ++i) inv_degree_[i] = 1.0 / lap.degree[i];
  r_.resize(nk, b);
  kr::GatherRows(lap.row_ptr.data(), lap.cols.data(), k0, nk, 0, b, pb.data(), pb.data(),
                 inv_degree_.data(),
                 /*scale_src=*/true, r_.data());
  // diag(S) for the Jacobi preconditioner.
  diag_.resize(nk);
  for (uint32_t k = 0; k < nk; ++k) {
    double d = lap.degree[k0 + k];
    for (uint64_t q = lap.row_ptr[k0 + k]; q < lap.row_ptr[k0 + k + 1]; ++q)
      d -= 1.0 / lap.degree[lap.cols[q]];
    diag_[k] = d > 0.0 ? d : lap.degree[k0 + k];
  }
  xk_.setZero(nk, b);
  z_.resize(nk, b);
  p_.resize(nk, b);
  ap_.resize(nk, b);
  t_.resize(ne, b);
  ColumnMeans(r_, mean.data());
  kr::ProjectPrecondition(mean.data(), diag_.data(), nk, b, r_.data(), z_.data(), rz.data(),
                          bnorm2.data());
  p_ = z_;
  rr = bnorm2;
  auto all_converged = [&](const std::vector<double>& r2) {
    for (int j = 0; j < b; ++j) {
      if (r2[j] > tolerance * tolerance * bnorm2[j]) return false;
    }
    return true;
  };
  bool done = all_converged(bnorm2);  // only when every reduced rhs is 0
  int it = 0;
  while (!done && it < max_iterations) {
    ++it;
    kr::SchurTimes(lap.row_ptr.data(), lap.cols.data(), lap.degree.data(), k0, nk, e0, ne, b,
                   p_.data(), t_.data(), ap_.data());
    kr::ColumnDots(p_.data(), ap_.data(), nk, b, pap.data());
    for (int j = 0; j < b; ++j) alpha[j] = pap[j] > 0.0 ? rz[j] / pap[j] : 0.0;
    kr::UpdateXR(alpha.data(), p_.data(), ap_.data(), nk, b, xk_.data(), r_.data(), mean.data());
    for (int j = 0; j < b; ++j) mean[j] /= static_cast<double>(nk);
    kr::ProjectPrecondition(mean.data(), diag_.data(), nk, b, r_.data(), z_.data(), rz_new.data(),
                            rr.data());
    if (all_converged(rr)) {
      done = true;
      break;
    }
    for (int j = 0; j < b; ++j) {
      beta[j] = rz[j] > 0.0 ? rz_new[j] / rz[j] : 0.0;
      rz[j] = rz_new[j];
    }
    kr::UpdateP(beta.data(), z_.data(), nk, b, p_.data());
  }
  // Back-substitution x_E = D_E⁻¹ (b_E + Aᵀ x_K), then zero column means.
  x->resize(n, b);
  x->middleRows(k0, nk) = xk_;
  kr::GatherRows(lap.row_ptr.data(), lap.cols.data(), e0, ne, k0, b, pb_.data(), xk_.data(),
                 inv_degree_.data(),
                 /*scale_src=*/false, x->data() + size_t{e0} * b);
  ColumnMeans(*x, mean.data());
  for (size_t i = 0; i < n; ++i) {
    for (int j = 0; j < b; ++j) (*x)(i, j) -= mean[j];
  }
  // Reported residual: the CG recurrence residual of the reduced system,
  // max_j ‖r_j‖ / ‖b_S,j‖ (the E rows are solved exactly). Recomputing it
  // from scratch would cost one more operator application per block; the
  // tests compare the solutions with dense references instead.
  for (int j = 0; j < b; ++j) {
    if (bnorm2[j] > 0.0) {
      result.max_relative_residual =
          std::max(result.max_relative_residual, std::sqrt(rr[j] / bnorm2[j]));
    }
  }
  result.iterations = it;
  result.converged = done;
  return result;
}

}  // namespace graphsieve
