#include "core/maec/resistance_options.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"

namespace graphsieve {

absl::StatusOr<ResistanceMethod> ParseResistanceMethod(std::string_view name) {
  for (ResistanceMethod m : {ResistanceMethod::kAuto, ResistanceMethod::kExact,
                             ResistanceMethod::kSketch, ResistanceMethod::kOneSided}) {
    if (name == ResistanceMethodName(m)) return m;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown resistance method '", std::string(name), "': expected auto, exact, sketch or one-sided"));
}

const char* ResistanceMethodName(ResistanceMethod m) {
  switch (m) {
    case ResistanceMethod::kAuto: return "auto";
    case ResistanceMethod::kExact: return "exact";
    case ResistanceMethod::kSketch: return "sketch";
    case ResistanceMethod::kOneSided: return "one-sided";
  }
  return "?";
}

absl::Status ResistanceOptions::Validate() const {
  if (sketch_dim < 1 || sketch_dim > 65536) {
    return absl::InvalidArgumentError(absl::StrCat("sketch_dim must be in [1, 65536], got ", sketch_dim));
  }
  if (!(solver_tolerance > 0.0 && solver_tolerance < 1.0)) {
    return absl::InvalidArgumentError(absl::StrCat("solver_tolerance must be in (0, 1), got ", solver_tolerance));
  }
  if (solver_max_iterations < 1) {
    return absl::InvalidArgumentError(absl::StrCat("solver_max_iterations must be >= 1, got ", solver_max_iterations));
  }
  if (exact_max_nodes < 0) {
    return absl::InvalidArgumentError(absl::StrCat("exact_max_nodes must be >= 0, got ", exact_max_nodes));
  }
  if (one_sided_max_solves < 0) {
    return absl::InvalidArgumentError(absl::StrCat("one_sided_max_solves must be >= 0, got ", one_sided_max_solves));
  }
  if (block_columns < 1 || block_columns > 1024) {
    return absl::InvalidArgumentError(absl::StrCat("block_columns must be in [1, 1024], got ", block_columns));
  }
  if (threads < 1) return absl::InvalidArgumentError(absl::StrCat("threads must be >= 1, got ", threads));
  return absl::OkStatus();
}

const char* RouteFor(const ResistanceOptions& o, uint32_t n, uint32_t s) {
  if (n < 2) return "none";
  switch (o.method) {
    case ResistanceMethod::kExact: return "dense";
    case ResistanceMethod::kSketch: return "sketch";
    case ResistanceMethod::kOneSided: return "one-sided";
    case ResistanceMethod::kAuto: break;
  }
  if (n <= static_cast<uint32_t>(o.exact_max_nodes)) return "dense";
  if (s <= o.one_sided_max_solves) return "one-sided";
  return "sketch";
}

}  // namespace graphsieve
