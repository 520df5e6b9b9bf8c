// graphsieve-gen's library: a deterministic generator of realistic impression
// logs (docs/DATA.md, "The generator").
//
// Model. Users and items get power-law (Zipf) activity / popularity weights
// a_u, b_j on a seeded random rank order. A (user, item) pair is impressed
// with probability min(1, c·a_u·b_j), c calibrated so that the expected
// number of pairs matches the target; an impressed pair is shown again with a
// geometric number of repeats. Each instance is clicked with the probability
// of a latent-factor click model,
//   p = sigmoid(mu + bias_u + bias_j + <f_u, f_j>),
// mu calibrated so the mean of p over instances is `positive_rate`. The
// optional pilot score is that probability deliberately corrupted:
//   sigmoid(mu + pilot_slope·(logit − mu) + pilot_shift + pilot_noise_stddev·N(0,1)),
// i.e. a noisy ranking, too flat (slope < 1) and shifted (miscalibrated).
// Rows come out user by user (as KuaiRec's big_matrix.csv), each user's
// instances shuffled.
//
// Exposure (which pairs are impressed). kPopularity: the above, independent
// of preference. kPreference: a logging policy that depends on the user's
// preference, as in real recommender logs. User u gets the same number n_u of
// distinct pairs as the popularity draw gives; round((1 - exploration)·n_u) of
// them are the user's top items under a previous model's score
//   policy_slope·(bias_u + bias_j + <f_u, f_j>) + policy_noise_stddev·N(0,1)
// (a noisy, flatter copy of the truth) and the rest are the user's
// popularity-drawn items not already shown (exploration). mu is calibrated
// over the exposed pairs, so the positive rate stays `positive_rate`.
//
// Churn (off by default; docs/DATA.md "Churn"). With churn_days = D > 0 the
// log spans D days and every row gets a timestamp (seconds since the log's
// start). new_users_per_day·D users arrive and new_items_per_day·D items are
// published during the log, evenly spread over it (the highest indices; ids
// are independent of activity and popularity); the others exist from the
// start. A pair can only be impressed while both exist: its exposure weight is
// the share of the log during which both exist, each instant weighted by the
// item's freshness 2^(-age / item_half_life_days) (1 without aging; items
// that exist at the start were published during the D days before it), and it
// is impressed with probability min(1, c·a_u·b_j·w_uj) (c calibrated on a
// seeded sample of pairs), each of its instances at a time drawn from that
// weight. Under kPreference the policy ranks by its score + log w_uj. So a
// later part of the log holds users and items the earlier part never saw, and
// old items fade out.
//
// Determinism: every random number comes from a counter-based generator keyed
// by (seed, stream, user), so the same options give the same bytes on every
// run and machine with the same libm (exp/log/cos of glibc).
//
// Thread-safety: the functions are reentrant; each call owns its state.
#ifndef GRAPHSIEVE_GEN_GENERATOR_H_
#define GRAPHSIEVE_GEN_GENERATOR_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/io/log_reader.h"

namespace graphsieve {

enum class Exposure { kPopularity, kPreference };
absl::StatusOr<Exposure> ParseExposure(std::string_view name);  // "popularity" | "preference"
const char* ExposureName(Exposure exposure);

struct GeneratorOptions {
  int64_t num_users = 5765;                // distinct users
  int64_t num_items = 10679;               // distinct items
  int64_t num_instances = 12000000;        // target number of rows (met within ~1%)
  double positive_rate = 1.0 / 35.0;       // target mean click probability over instances
  double repeat_rate = 0.0256;             // mean extra impressions per pair (instances/pairs - 1)
  double user_zipf_exponent = 0.6;         // activity weight of the user of rank r: (r+1)^-exponent
  double item_zipf_exponent = 0.9;         // popularity weight of the item of rank r
  int latent_dim = 8;                      // dimension of the user/item factors
  double user_bias_stddev = 0.6;           // spread of the user click bias (logit units)
  double item_bias_stddev = 0.8;           // spread of the item click bias (logit units)
  double factor_stddev = 0.6;              // per-coordinate spread of the factors
  double popularity_click_coupling = 0.2;  // logit bonus per stddev of an item's log-popularity
  Exposure exposure = Exposure::kPopularity;  // which pairs are impressed (see above)
  double exploration = 0.2;          // kPreference: share of a user's pairs drawn by popularity
  double policy_slope = 0.7;         // kPreference: the previous model's score = slope·true score
  double policy_noise_stddev = 1.0;  // kPreference: + this much N(0,1) noise per pair
  bool pilot = false;                // write a pilot_score column
  double pilot_slope = 0.7;  // pilot logit = mu + slope·(true logit − mu) + shift + noise
  double pilot_shift = 0.5;  // logit units; > 0 over-predicts clicks
  double pilot_noise_stddev = 0.8;
  bool truth = false;  // write the true click probability as column true_prob
  // Churn (see above); churn_days = 0 is off and leaves every byte as before.
  int churn_days = 0;              // days the log spans; > 0 adds the timestamp column
  double new_users_per_day = 0;    // users arriving per day of the log (needs churn_days)
  double new_items_per_day = 0;    // items published per day of the log (needs churn_days)
  double item_half_life_days = 0;  // an item's exposure halves per this age; 0 = no aging
  bool gzip = false;               // gzip the output (deterministic header, mtime 0)
  int gzip_level = 1;              // 1 (fast) .. 9 (small)
  uint64_t seed = 1;
  int threads = 1;  // workers generating and formatting users; the output is the same for any value
  // Called about every 1% of users and at the end; may be empty.
  std::function<void(int64_t users_done, int64_t rows_written)> progress;

  // Message names the broken constraint and its flag ("the number of items
  // (--items) must be >= 1").
  absl::Status Validate() const;
  // About how much memory the generator holds for its users and items (the
  // rows are streamed): an upper estimate, to refuse a size the machine
  // cannot hold before allocating it.
  uint64_t MemoryBytes() const;
  // About how many bytes of text the log's rows take (before --gzip).
  uint64_t TextBytes() const;
};

// "kuairec" (5,765 users, 10,679 items, ~12M instances), "small" (kuairec at
// scale 0.01) or "tiny" (60 users, 100 items, 2,000 instances). `scale`
// multiplies the instances and sqrt(scale) the users and items, so the
// density of the user-item matrix stays that of the preset. `nodes_scale` > 0
// multiplies the preset's users and items by nodes_scale instead (for scaling
// runs whose nodes grow with the impressions: nodes_scale = scale keeps
// instances per node constant); 0 = off. `users_scale` > 0 multiplies the
// preset's users alone by users_scale, the items keeping their factor (with
// users_scale = scale: users grow with the impressions, items as their square
// root, the uneven growth of docs/SCALING.md); 0 = off.
absl::StatusOr<GeneratorOptions> GeneratorPreset(std::string_view name, double scale,
                                                 double nodes_scale = 0, double users_scale = 0);

// What was generated (exact counts, computed while writing).
struct GeneratorStats {
  int64_t users = 0;  // users with at least one instance
  int64_t items = 0;  // items with at least one instance
  int64_t pairs = 0;  // distinct (user, item) pairs
  int64_t instances = 0;
  int64_t positive_instances = 0;
  int64_t positive_pairs = 0;  // pairs with at least one positive instance
  uint64_t bytes_written = 0;  // uncompressed CSV bytes (header included)
  double mu = 0;               // the calibrated global logit
  double pair_scale = 0;       // the calibrated c
};

// Writes the CSV (header user_id,item_id,label[,pilot_score][,true_prob][,timestamp]) to
// `path` ("-" = standard output). A file is written to "<path>.tmp" and
// renamed, so a failed run leaves no partial file behind.
absl::StatusOr<GeneratorStats> WriteGeneratedLog(const GeneratorOptions& options,
                                                 const std::string& path);

// The same rows in memory (ids are the integers written to the file).
// `true_probabilities`, if not null, receives each instance's click
// probability; `timestamps`, if not null, each instance's timestamp (seconds;
// all 0 without churn).
absl::StatusOr<ImpressionLog> GenerateImpressionLog(
    const GeneratorOptions& options, GeneratorStats* stats = nullptr,
    std::vector<float>* true_probabilities = nullptr, std::vector<int64_t>* timestamps = nullptr);

// The unbiased test of a generated log: `num_instances` impressions with
// random exposure (each a user and an item drawn uniformly, independent of
// options.exposure and of the log's draws), labelled by the same click model
// as the log of `options`. Written as CSV with the log's columns (header
// user_id,item_id,label[,pilot_score][,true_prob]) to `path` via
// "<path>.tmp" and a rename; the same options, seed and count give the same
// bytes. Errors: INVALID_ARGUMENT for bad options or num_instances < 1, the
// file's errors naming it.
absl::StatusOr<GeneratorStats> WriteRandomExposureTest(const GeneratorOptions& options,
                                                       int64_t num_instances,
                                                       const std::string& path);

// The same rows in memory; `true_probabilities` as in GenerateImpressionLog.
absl::StatusOr<ImpressionLog> GenerateRandomExposureTest(
    const GeneratorOptions& options, int64_t num_instances,
    std::vector<float>* true_probabilities = nullptr);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_GEN_GENERATOR_H_
