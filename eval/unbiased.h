// The unbiased test of graphsieve-eval (--test): a file of randomly exposed
// impressions of the same users and items (graphsieve-gen --test_output, or
// a real log's random-exposure set) replaces the test part of every seed,
// so the measured quality does not share the log's exposure.
//
// Thread-safety: pure function.
#ifndef GRAPHSIEVE_EVAL_UNBIASED_H_
#define GRAPHSIEVE_EVAL_UNBIASED_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "core/io/log_reader.h"
#include "eval/model.h"

namespace graphsieve::eval {

struct UnbiasedTest {
  Instances test;                // on the dense indices of the log (internal::Densify)
  uint64_t dropped_unknown = 0;  // impressions whose user or item the log never shows
  std::vector<float> truth;      // per kept impression: test.pilot_scores' value, when read
};

// Maps `test` onto the dense user/item indices the experiment gives `log`
// (first appearance in the log, as internal::Densify). Impressions of a user
// or item absent from the log are dropped and counted (no model has
// parameters for them). Errors: INVALID_ARGUMENT when fewer than 2 remain or
// they lack a class, naming `name`.
absl::StatusOr<UnbiasedTest> MapUnbiasedTest(const ImpressionLog& log, const ImpressionLog& test,
                                             const std::string& name);

}  // namespace graphsieve::eval

#endif  // GRAPHSIEVE_EVAL_UNBIASED_H_
