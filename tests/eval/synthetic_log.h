// A small seeded impression log with latent user/item structure, a rare
// positive class and an imperfect pilot score, for the evaluation's tests.
#ifndef GRAPHSIEVE_TESTS_EVAL_SYNTHETIC_LOG_H_
#define GRAPHSIEVE_TESTS_EVAL_SYNTHETIC_LOG_H_

#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>

#include "core/io/log_reader.h"
#include "eval/random.h"

namespace graphsieve::eval::testing {

inline ImpressionLog SyntheticLog(uint32_t users, uint32_t items, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<double> pu(users * 2), qi(items * 2), bu(users), bi(items);
  for (double& x : pu) x = rng.Normal();
  for (double& x : qi) x = rng.Normal();
  for (double& x : bu) x = 0.5 * rng.Normal();
  for (double& x : bi) x = 0.8 * rng.Normal();
  ImpressionLog log;
  for (uint32_t u = 0; u < users; ++u) {
    for (uint32_t v = 0; v < items; ++v) {
      if (rng.Uniform() < 0.3) continue;  // not every pair is shown
      const double g = -2.5 + bu[u] + bi[v] + pu[2 * u] * qi[2 * v] + pu[2 * u + 1] * qi[2 * v + 1];
      const double p = 1.0 / (1.0 + std::exp(-g));
      log.user_ids.push_back(1000 + u);
      log.item_ids.push_back(50000 + v);
      log.labels.push_back(rng.Uniform() < p ? 1 : 0);
      // Imperfect pilot: the true probability blurred by noise.
      log.pilot_scores.push_back(
          static_cast<float>(1.0 / (1.0 + std::exp(-(g + 0.8 * rng.Normal())))));
    }
  }
  return log;
}

// Writes the log as CSV user_id,item_id,label,pilot_score.
inline bool WriteCsv(const ImpressionLog& log, const std::string& path) {
  std::ofstream out(path);
  out << "user_id,item_id,label,pilot_score\n";
  for (size_t i = 0; i < log.size(); ++i) {
    out << log.user_ids[i] << ',' << log.item_ids[i] << ',' << int{log.labels[i]} << ','
        << log.pilot_scores[i] << '\n';
  }
  return static_cast<bool>(out);
}

}  // namespace graphsieve::eval::testing

#endif  // GRAPHSIEVE_TESTS_EVAL_SYNTHETIC_LOG_H_
