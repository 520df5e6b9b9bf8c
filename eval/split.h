// Seeded train/validation/test split by instance (the evaluation's 80/10/10).
//
// Thread-safety: pure functions.
#ifndef GRAPHSIEVE_EVAL_SPLIT_H_
#define GRAPHSIEVE_EVAL_SPLIT_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace graphsieve::eval {

enum class Part : uint8_t { kTrain = 0, kValidation = 1, kTest = 2 };

struct SplitOptions {
  double train_fraction = 0.8;       // share of instances in the training part
  double validation_fraction = 0.1;  // share in the validation part; the rest is the test part
  uint64_t seed = 1;                 // same seed + same n -> same split
  absl::Status Validate() const;
};

// Assigns each of `n` instances to a part: a seeded Fisher-Yates permutation,
// the first floor(train_fraction*n) positions train, the next
// floor(validation_fraction*n) validation, the rest test. Exact counts, no
// dependence on the data. Errors: INVALID_ARGUMENT for bad options or n == 0.
absl::StatusOr<std::vector<Part>> SplitByInstance(size_t n, const SplitOptions& options);

}  // namespace graphsieve::eval

#endif  // GRAPHSIEVE_EVAL_SPLIT_H_
