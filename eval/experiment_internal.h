// Internal to graphsieve_eval: the per-seed data and configuration types
// shared by the experiment driver (experiment.cc) and its deployed mode
// (deployed_experiment.cc). Not a public interface.
//
// Thread-safety: plain data and pure functions.
#ifndef GRAPHSIEVE_EVAL_EXPERIMENT_INTERNAL_H_
#define GRAPHSIEVE_EVAL_EXPERIMENT_INTERNAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/io/log_reader.h"
#include "core/maec/pipeline.h"
#include "eval/experiment.h"
#include "eval/model.h"

namespace graphsieve::eval::internal {

// The log with dense user/item indices (over the whole log, so every test
// user and item has a parameter, trained or not).
struct DenseLog {
  Instances all;
  uint32_t num_users = 0, num_items = 0;
  std::vector<float> truth;  // per instance: the generator's probability; empty without it
};
DenseLog Densify(const ImpressionLog& log);

void Append(const Instances& from, size_t i, Instances* to);
// Append, and the instance's truth to *truth when `dense` has it.
void AppendWithTruth(const DenseLog& dense, size_t i, Instances* to, std::vector<float>* truth);

// INVALID_ARGUMENT naming the part unless `d` has both classes.
absl::Status CheckBothClasses(const Instances& d, const std::string& name);

// Everything that depends on the seed but not on the method.
struct SeedData {
  Instances train, validation, test;
  ImpressionLog train_log;        // original ids, for the pipeline
  PairTable pairs;                // of the training part (pairs of training instances)
  std::vector<uint32_t> pair_of;  // per training instance
  uint64_t train_negatives = 0;
  // The generator's probabilities of the training and test instances (empty
  // without TrueProbabilities): the oracle methods' p and Q.
  std::vector<float> train_truth, test_truth;
  // Deployed mode: the earlier period (the builder's input, with the pilot
  // score when a method needs one) and its size.
  ImpressionLog earlier;
  uint64_t later_instances = 0;
  // Deployed mode with refresh (ExperimentOptions::refresh_every): the
  // training impressions of each refresh chunk, in chunk order, and per
  // training pair the chunk of its first training impression (the snapshot
  // that rates it: the base for chunk 0, else base + delta of the chunks
  // before). Empty without refresh.
  std::vector<ImpressionLog> chunk_logs;
  std::vector<uint32_t> pair_chunk;
};

struct Config {
  MethodSpec spec;
  double alpha = 1.0, floor = 0.0, gamma = 0.0;
  double kappa = 0.0, pilot_kappa = 0.0;  // mixture rule only
};

// The training part's pair table and pair_of. Errors: the pair table's.
absl::Status IndexTrainingPairs(int threads, SeedData* s);

// The pilot score of every instance of `train`: a model of o.pilot's kind
// (lr for kAuto) early-stopped on `validation`, trained on `train` itself
// (o.pilot_folds = 1) or cross-fitted over o.pilot_folds folds of the pairs.
// *name says which, with `part` naming `train`, for the report.
absl::StatusOr<std::vector<float>> TrainPilot(const ExperimentOptions& o, const DenseLog& dense,
                                              uint64_t seed, const Instances& train,
                                              const Instances& validation, const char* part,
                                              std::string* name);

// The pipeline options of one configuration (o.pipeline with the method's
// switches, alpha, floor, gamma and the seed).
PipelineOptions PipelineOptionsFor(const Config& c, const ExperimentOptions& o, uint64_t seed);

// The exposure-discounted scores of the investigation variants (MethodSpec::
// exposure_power, item_centred; docs/EVALUATION.md "Exposure-discounted
// rates"): pair p of item i gets score[p] / n_i^power, n_i = Σ instances of
// i's pairs, or with item_centred score[p] / m_i, m_i = Σ neg·score / Σ neg
// over i's pairs (score[p] unchanged when m_i is 0). Negative scores count as 0.
// REQUIRES: score.size() == pairs.num_pairs().
std::vector<double> ExposureDiscountedScores(const PairTable& pairs, absl::Span<const float> score,
                                             double power, bool item_centred);

// `message` (the pipeline's or the builder's, for configuration `c`) in
// graphsieve-eval's terms: the builder's "--rate-rule=mixture" becomes the
// method's mixture variant in --methods (maec -> maec-mix), since eval
// chooses the rate rule by method name.
std::string InEvalTerms(absl::string_view message, const MethodSpec& spec);

// Deployed mode (deployed_experiment.cc): the earlier period becomes
// s.earlier, the later one is split 80/10/10 into train/validation/test.
absl::StatusOr<SeedData> PrepareDeployedSeed(const ImpressionLog& log, const DenseLog& dense,
                                             absl::Span<const int64_t> timestamps,
                                             const ExperimentOptions& o, uint64_t seed,
                                             bool need_pilot, std::string* pilot_name);

// Deployed mode: builds the snapshot of s.earlier for configuration c and
// rates every training pair through the server's scorer. `sources` gets the
// per-pair source (DeployedSnapshot::kExact / kInferred / kDefault).
// *refused_by_data: the builder refused the configuration for these data.
absl::StatusOr<std::vector<float>> ComputeDeployedRates(const Config& c, const SeedData& s,
                                                        const ExperimentOptions& o, uint64_t seed,
                                                        bool* refused_by_data,
                                                        std::vector<uint8_t>* sources);

}  // namespace graphsieve::eval::internal

#endif  // GRAPHSIEVE_EVAL_EXPERIMENT_INTERNAL_H_
