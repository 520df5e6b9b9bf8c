#include "core/maec/resistance_options.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"

namespace graphsieve {

absl::StatusOr<ResistanceMethod> ParseResistanceMethod(std::string_view name) {
  for (ResistanceMethod m : {ResistanceMethod::kAuto, ResistanceMethod::kExact,
                             ResistanceMethod::kSketch, ResistanceMethod::kOneSided}) {
    if (name == ResistanceMethodName(m)) return m;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown resistance method '", std::string(name),
                                                 "': expected auto, exact, sketch or one-sided"));
}

const char* ResistanceMethodName(ResistanceMethod m) {
  switch (m) {
    case ResistanceMethod::kAuto:
      return "auto";
    case ResistanceMethod::kExact:
      return "exact";
    case ResistanceMethod::kSketch:
      return "sketch";
    case ResistanceMethod::kOneSided:
      return "one-sided";
  }
  return "?";
}

absl::Status ResistanceOptions::Validate() const {
  if (sketch_dim < 1 || sketch_dim > 65536) {
    return absl::InvalidArgumentError(
        absl::StrCat("sketch_dim must be in [1, 65536], got ", sketch_dim));
  }
  if (!(solver_tolerance > 0.0 && solver_tolerance < 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("solver_tolerance must be in (0, 1), got ", solver_tolerance));
  }
  if (solver_max_iterations < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("solver_max_iterations must be >= 1, got ", solver_max_iterations));
  }
  if (exact_max_nodes < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("exact_max_nodes must be >= 0, got ", exact_max_nodes));
  }
  if (one_sided_max_solves < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("one_sided_max_solves must be >= 0, got ", one_sided_max_solves));
  }
  if (block_columns < 1 || block_columns > 1024) {
    return absl::InvalidArgumentError(
        absl::StrCat("block_columns must be in [1, 1024], got ", block_columns));
  }
  if (threads < 1)
    return absl::InvalidArgumentError(absl::StrCat("threads must be >= 1, got ", threads));
  if (!(pair_sketch_median_error >= 0.005 && pair_sketch_median_error < 1.0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "pair_sketch_median_error must be in [0.005, 1), got ", pair_sketch_median_error));
  }
  return absl::OkStatus();
}

int ResistanceOptions::PairSketchDim(double residual_share) const {
  if (method == ResistanceMethod::kSketch) return sketch_dim;
  // Median of |chi2_k/k - 1| ≈ 0.6745·√(2/k) of the sketched part; relative
  // to R it is scaled by the residual share: k = 2·(0.6745·ρ/e)².
  // At least one 32-column distance block; the pair sketch may use fewer
  // columns than the node rows (which are solved anyway): the distances are
  // the per-pair cost.
  const double z = 0.6745 * std::min(1.0, std::max(0.0, residual_share)) / pair_sketch_median_error;
  const int k = std::max(32, static_cast<int>(std::ceil(2.0 * z * z)));
  return (k + 31) / 32 * 32;
}

bool OneSidedIsCheaper(const ResistanceOptions& o, uint64_t s, uint64_t edges, uint64_t pairs,
                       int k) {
  // CPU seconds per distance coordinate / per solve x positive edge (~4.4 ns,
  // 5 block-PCG iterations), measured with graphsieve-bench-core on the
  // kuairec-shaped log with nodes growing: 0.8 ns (0.18) at scale 0.5 and
  // 1.8 ns (0.41) at scale 4 with k = 1,888, where the sketch's node rows no
  // longer fit in cache; the larger figure is used (docs/METHOD.md "How auto
  // picks").
  constexpr double kDistancePerSolveEdge = 0.41;
  const double extra = std::max(0, k - o.sketch_dim);
  const double one_sided = double(s) * double(edges);
  const double sketch = extra * double(edges) + double(k) * double(pairs) * kDistancePerSolveEdge;
  return one_sided <= sketch;
}

const char* RouteFor(const ResistanceOptions& o, uint32_t n, uint32_t s) {
  if (n < 2) return "none";
  switch (o.method) {
    case ResistanceMethod::kExact:
      return "dense";
    case ResistanceMethod::kSketch:
      return "sketch";
    case ResistanceMethod::kOneSided:
      return "one-sided";
    case ResistanceMethod::kAuto:
      break;
  }
  if (n <= static_cast<uint32_t>(o.exact_max_nodes)) return "dense";
  if (s <= o.one_sided_max_solves) return "one-sided";
  return "sketch";
}

}  // namespace graphsieve
