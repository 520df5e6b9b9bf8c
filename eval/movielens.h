// MovieLens ratings as implicit-feedback impressions (the paper's setting):
// every user x item pair of the users and items that appear in the ratings is
// one impression; it is positive when the user rated the item at or above a
// threshold, negative otherwise (unrated pairs included). For ml-100k this is
// 943 x 1682 = 1,586,126 impressions built in memory.
//
// Thread-safety: pure function.
#ifndef GRAPHSIEVE_EVAL_MOVIELENS_H_
#define GRAPHSIEVE_EVAL_MOVIELENS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/io/log_reader.h"

namespace graphsieve::eval {

struct MovieLensOptions {
  double positive_min_rating = 4.0;       // rating >= this is a positive impression; in [1, 5]
  uint64_t max_impressions = 50'000'000;  // refuse cross products larger than this (memory guard)
  absl::Status Validate() const;
};

// Reads `<dir>/u.data` (tab-separated user, item, rating, timestamp; no header)
// and returns the cross product in (user, item) order. With `timestamps`, it
// also receives per impression the rating's Unix time, or -1 for an unrated
// pair (the timestamp field is then required). Errors: NOT_FOUND naming
// the file, INVALID_ARGUMENT "<file>:<line>: <problem>" for a malformed line,
// an empty file, or a cross product above max_impressions.
absl::StatusOr<ImpressionLog> ReadMovieLensImplicit(const std::string& dir,
                                                    const MovieLensOptions& options,
                                                    std::vector<int64_t>* timestamps = nullptr);

}  // namespace graphsieve::eval

#endif  // GRAPHSIEVE_EVAL_MOVIELENS_H_
