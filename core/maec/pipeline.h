// The MA-EC pipeline (DESIGN §2): impression log → pair table → positive graph
// → effective conductance → hardness → propagation → rates, plus the per-node
// data that scores pairs the builder never saw (unseen.h).
//
// DRAFT CONTRACT shared by builder/, server/ (via unseen.h) and eval/. The core
// owner may add fields; renaming or removing one must be done together with
// the users of it.
//
// Thread-safety: RunPipeline is a pure function of its inputs (and the seed);
// it uses up to Options::threads threads internally.
#ifndef GRAPHSIEVE_CORE_MAEC_PIPELINE_H_
#define GRAPHSIEVE_CORE_MAEC_PIPELINE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/io/log_reader.h"
#include "core/maec/unseen.h"

namespace graphsieve {

// Duplicate (user, item) instances collapsed into one pair (DESIGN §2.1).
// Users are indexed 0..U-1 and items 0..I-1 in ascending id order; pairs are
// sorted by (user_id, item_id), which is also the snapshot's key order.
struct PairTable {
  std::vector<uint64_t> user_ids;      // index -> original id
  std::vector<uint64_t> item_ids;
  std::vector<uint32_t> pair_user;     // per pair: user index
  std::vector<uint32_t> pair_item;     // per pair: item index
  std::vector<uint8_t> label;          // 1 if any instance of the pair is positive
  std::vector<uint32_t> instances;     // instances of the pair
  std::vector<uint32_t> negatives;     // negative instances of the pair
  std::vector<float> pilot_mean;       // mean pilot score; empty without a pilot column
  uint64_t total_instances = 0;
  uint64_t total_negatives = 0;
  size_t num_pairs() const { return pair_user.size(); }
  size_t num_users() const { return user_ids.size(); }
  size_t num_items() const { return item_ids.size(); }
};

absl::StatusOr<PairTable> BuildPairTable(const ImpressionLog& log, int threads);

enum class Method { kMaec, kUniform, kOpt, kMax, kMean, kProduct };
enum class ResistanceMethod { kAuto, kExact, kSketch, kOneSided };

absl::StatusOr<Method> ParseMethod(std::string_view name);
absl::StatusOr<ResistanceMethod> ParseResistanceMethod(std::string_view name);
const char* MethodName(Method m);
const char* ResistanceMethodName(ResistanceMethod m);

struct PipelineOptions {
  Method method = Method::kMaec;
  double alpha = 0.2;                  // target mean rate over negative instances
  double floor = 0.01;                 // rate floor ϱ; must be < alpha
  double product_floor = 0.01;         // floor of the product ensemble
  double gamma = 0.5;                  // propagation weight γ in [0, 1)
  bool uncertainty_propagation = true; // DESIGN §2.5
  bool score_propagation = true;       // DESIGN §2.6
  bool symmetric_normalisation = false;// D^-1/2 A D^-1/2 instead of the edge rule
  bool correct_pilot = false;          // apply §2.5-6 to the pilot score before combining
  double propagation_tolerance = 1e-6; // max |Δ| between iterations
  int propagation_max_iterations = 100;
  ResistanceMethod resistance = ResistanceMethod::kAuto;
  int sketch_dim = 64;                 // k for the sketch (and the node rows kept for unseen pairs)
  double solver_tolerance = 1e-6;      // relative residual of every CG solve
  int solver_max_iterations = 1000;
  int exact_max_nodes = 1000;          // kAuto: dense exact up to this component size
  int64_t one_sided_max_solves = 20000; // kAuto: one-sided exact while a component's smaller side is at most this (else sketch)
  int block_columns = 32;              // right-hand sides per PCG block (one-sided route)
  uint64_t seed = 42;
  int threads = 2;
  std::function<void(const std::string& stage, double fraction)> progress;  // may be empty
  absl::Status Validate() const;
};

// One Laplacian solve (or a block of them) of one component (ceres-style summary).
struct SolveSummary {
  uint32_t component = 0;
  uint32_t nodes = 0;
  std::string method;                  // "dense", "pcg"
  int right_hand_sides = 0;
  int max_iterations = 0;              // over the block
  double max_relative_residual = 0.0;
  bool converged = false;
  std::string message;
};

struct StageTiming {
  std::string stage;
  double seconds = 0.0;
};

// The graph half of the pipeline (positive graph, effective conductance,
// hardness, node sketch rows). It does not depend on the method, α or the
// floor, so an evaluation that compares methods computes it once and calls
// RunPipelineWithConductance per method.
struct ConductanceResult {
  std::vector<float> geff;             // per pair
  std::vector<float> hardness;         // per pair: geff - label (counterfactual for positives), >= 0
  std::vector<uint32_t> component;     // per node
  int sketch_dim = 0;
  std::vector<float> sketch;           // per node rows (NodeTable::sketch)
  uint32_t num_components = 0;
  uint32_t positive_pairs = 0;
  std::string resistance_route;        // route of the largest component: dense | one-sided | sketch
  std::vector<SolveSummary> solves;
  std::vector<StageTiming> timings;
};

// REQUIRES: options.Validate().ok(). Errors as RunPipeline's solver errors.
absl::StatusOr<ConductanceResult> ComputeConductance(const PairTable& pairs,
                                                     const PipelineOptions& options);

struct PipelineResult {
  // Per pair, same order as PairTable.
  std::vector<float> geff;             // effective conductance over the positive graph
  std::vector<float> hardness;         // geff - direct conductance
  std::vector<float> uncertainty;      // propagated uncertainty B̂ of the MA-EC prediction
  std::vector<float> score;            // final (propagated) score the rate was made from
  std::vector<float> rate;             // sampling rate in (0, 1]
  // Per node: users 0..U-1 then items U..U+I-1 (unseen.h).
  NodeTable nodes;
  UnseenModel model;                   // constants needed to score unseen pairs
  double achieved_negative_mean_rate = 0.0;
  uint32_t num_components = 0;
  uint32_t positive_pairs = 0;
  std::vector<SolveSummary> solves;
  int uncertainty_iterations = 0;
  int score_iterations = 0;
  bool uncertainty_converged = true;   // false: stopped at propagation_max_iterations
  bool score_converged = true;
  std::string resistance_route;        // route of the largest component
  double rho = 0.0;                    // final rate scale (also in model)
  std::vector<StageTiming> timings;
};

// REQUIRES: options.Validate().ok(). Errors: INVALID_ARGUMENT for impossible
// alpha/floor combinations (the message says which values work),
// FAILED_PRECONDITION when a solve did not converge (names the component),
// and when the pilot score is needed but absent.
absl::StatusOr<PipelineResult> RunPipeline(const PairTable& pairs, const PipelineOptions& options);

// The method half: propagation, rates and node records from a conductance
// computed by ComputeConductance(pairs, ...) with the same graph options.
absl::StatusOr<PipelineResult> RunPipelineWithConductance(const PairTable& pairs,
                                                          const ConductanceResult& conductance,
                                                          const PipelineOptions& options);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MAEC_PIPELINE_H_
