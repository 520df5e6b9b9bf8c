#include "eval/split.h"

#include <cmath>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "eval/random.h"

namespace graphsieve::eval {

double SplitMix64::Normal() {
  double u1 = Uniform();
  while (u1 <= 0.0) u1 = Uniform();
  const double u2 = Uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

absl::Status SplitOptions::Validate() const {
  if (!(train_fraction > 0.0 && train_fraction < 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("train_fraction must be in (0, 1), got ", train_fraction));
  }
  if (!(validation_fraction > 0.0 && validation_fraction < 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("validation_fraction must be in (0, 1), got ", validation_fraction));
  }
  if (train_fraction + validation_fraction >= 1.0) {
    return absl::InvalidArgumentError(
        absl::StrCat("train_fraction + validation_fraction must be < 1 to leave a test part, got ",
                     train_fraction + validation_fraction));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Part>> SplitByInstance(size_t n, const SplitOptions& options) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  if (n == 0) return absl::InvalidArgumentError("cannot split an empty log (0 instances)");
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  SplitMix64 rng(Mix64(options.seed) ^ 0x5b1175ULL);
  for (size_t i = n - 1; i > 0; --i) {
    const size_t j = rng.Below(i + 1);
    std::swap(order[i], order[j]);
  }
  const size_t n_train = static_cast<size_t>(std::floor(options.train_fraction * n));
  const size_t n_val = static_cast<size_t>(std::floor(options.validation_fraction * n));
  std::vector<Part> parts(n, Part::kTest);
  for (size_t k = 0; k < n_train; ++k) parts[order[k]] = Part::kTrain;
  for (size_t k = n_train; k < n_train + n_val && k < n; ++k) parts[order[k]] = Part::kValidation;
  return parts;
}

}  // namespace graphsieve::eval
