// The generator's random model (internal to graphsieve_gen): counter-based
// random numbers, Zipf weights, the latent-factor click model and the
// calibration of the pair scale c and the global logit mu (generator.h).
//
// Thread-safety: a ClickModel is immutable after Create(); GenerateUser() is
// const and may be called from several threads with their own output vectors.
#ifndef GRAPHSIEVE_GEN_CLICK_MODEL_H_
#define GRAPHSIEVE_GEN_CLICK_MODEL_H_

#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "gen/generator.h"

namespace graphsieve {
namespace gen_internal {

// splitmix64: a counter-based generator; Rng(seed, stream, index) streams are
// independent and the same on every platform (no std:: distributions).
class Rng {
 public:
  Rng(uint64_t seed, uint64_t stream, uint64_t index)
      : state_(Mix(seed ^ Mix(stream * 0xD1B54A32D192ED03ull ^ Mix(index)))) {}
  static uint64_t Mix(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t Next() {
    state_ += 0x9E3779B97F4A7C15ull;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) from the top 53 bits.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n). REQUIRES: n > 0.
  uint64_t Below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
  }
  // Standard normal (Box-Muller, one value per call).
  double Normal() {
    const double u1 = 1.0 - Uniform();  // (0, 1]
    const double u2 = Uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  uint64_t state_;
};

inline double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// One generated row before formatting.
struct Instance {
  uint32_t item;
  uint8_t label;
  float probability;          // true click probability
  float pilot;                // pilot score (0 when options.pilot is false)
  uint32_t time_seconds = 0;  // since the log's start (0 without churn)
};

class ClickModel {
 public:
  // Draws the weights and factors and calibrates c and mu.
  // REQUIRES: options.Validate() is OK.
  static absl::StatusOr<ClickModel> Create(const GeneratorOptions& options);

  // Replaces `*out` with user u's instances in output order.
  // REQUIRES: 0 <= u < num_users.
  void GenerateUser(int64_t u, std::vector<Instance>* out) const;

  // Instance `index` of the randomly exposed test draw (generator.h,
  // WriteRandomExposureTest): a user and an item drawn uniformly, independent
  // of options.exposure, labelled by the same click model. Deterministic in
  // (seed, index).
  void TestImpression(uint64_t index, int64_t* user, Instance* out) const;

  // Churn (generator.h): the share of the log during which user u and item j
  // both exist, weighted by the item's freshness; 1 without churn.
  double ExposureWeight(int64_t u, int64_t j) const;

  double mu() const { return mu_; }
  double pair_scale() const { return c_; }

 private:
  explicit ClickModel(const GeneratorOptions& options) : options_(options) {}
  double Score(int64_t u, int64_t j) const;  // logit without mu
  // kPreference: user u's distinct impressed items (generator.h, "Exposure").
  void PreferenceItems(int64_t u, std::vector<uint32_t>* items) const;
  // Emits `count` instances of pair (u, j) into *out.
  void EmitPair(int64_t u, int64_t j, int count, Rng* labels, Rng* pilot,
                std::vector<Instance>* out) const;
  void GeneratePopularityUser(int64_t u, std::vector<Instance>* out) const;
  void GeneratePreferenceUser(int64_t u, std::vector<Instance>* out) const;
  // Churn: arrival days of the users, publication days of the items.
  void DrawChurn();
  // Churn: a time (seconds since the log's start) for an instance of (u, j),
  // drawn from the pair's exposure weight over the log.
  uint32_t DrawTime(int64_t u, int64_t j, Rng* rng) const;
  // Churn: sets the times of the last `count` instances of *out.
  void DrawTimes(int64_t u, int64_t j, int count, Rng* rng, std::vector<Instance>* out) const;
  // Churn: the window [*start, churn_days) of (u, j) in days.
  double WindowStart(int64_t u, int64_t j) const;
  void CalibratePairScale();
  void CalibrateChurnPairScale();
  void CalibrateMu();

  GeneratorOptions options_;
  std::vector<double> user_weight_, item_weight_;  // Zipf weights a_u, b_j
  std::vector<float> user_bias_, item_bias_;
  std::vector<float> user_factors_, item_factors_;  // row-major, latent_dim per row
  double c_ = 0;
  double mu_ = 0;
  double repeat_q_ = 0;  // P(another repeat)
  // Churn (empty / 0 when off): days since the log's start; < 0 = before it.
  std::vector<double> user_arrival_, item_birth_;
  double decay_per_day_ = 0;  // ln 2 / item_half_life_days; 0 = no aging
};

}  // namespace gen_internal
}  // namespace graphsieve

#endif  // GRAPHSIEVE_GEN_CLICK_MODEL_H_
