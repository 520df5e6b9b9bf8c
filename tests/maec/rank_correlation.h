// Spearman rank correlation (average ranks for ties), shared by the MA-EC
// tests and graphsieve-bench-core's accuracy table.
#ifndef GRAPHSIEVE_TESTS_MAEC_RANK_CORRELATION_H_
#define GRAPHSIEVE_TESTS_MAEC_RANK_CORRELATION_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace graphsieve::testing {

inline std::vector<double> Ranks(const std::vector<double>& x) {
  std::vector<size_t> idx(x.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return x[a] < x[b]; });
  std::vector<double> r(x.size());
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j + 1 < idx.size() && x[idx[j + 1]] == x[idx[i]]) ++j;
    for (size_t k = i; k <= j; ++k) r[idx[k]] = 0.5 * (i + j);
    i = j + 1;
  }
  return r;
}

inline double Spearman(const std::vector<double>& a, const std::vector<double>& b) {
  const std::vector<double> ra = Ranks(a), rb = Ranks(b);
  const double n = static_cast<double>(a.size());
  double ma = 0, mb = 0;
  for (size_t i = 0; i < a.size(); ++i) ma += ra[i] / n, mb += rb[i] / n;
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    sab += (ra[i] - ma) * (rb[i] - mb);
    saa += (ra[i] - ma) * (ra[i] - ma);
    sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  return sab / std::sqrt(saa * sbb);
}

}  // namespace graphsieve::testing

#endif  // GRAPHSIEVE_TESTS_MAEC_RANK_CORRELATION_H_
