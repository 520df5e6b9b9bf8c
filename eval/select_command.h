// graphsieve-eval select: the selection (eval/selection.h) over the JSON
// outputs of graphsieve-eval runs.
//
//   graphsieve-eval select ROW=FILE.json[,FILE.json...] [ROW=...]
//
// A row is one label and one target model of its files; the files of a label
// are merged by seed (the same seed gives the same split and the same uniform
// numbers, so a candidate of one file is paired with uniform of another). A
// candidate is a method with its rate settings at the smallest α of uniform;
// uniform's larger α and the unsampled run give the row's α curve, from which
// the budget saved at equal AUC and at equal log-loss are read.
//
// Thread-safety: pure function of the files.
#ifndef GRAPHSIEVE_EVAL_SELECT_COMMAND_H_
#define GRAPHSIEVE_EVAL_SELECT_COMMAND_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "eval/selection.h"

namespace graphsieve::eval {

// The Markdown report: the rows (seeds, full − uniform, the oracle's gain and
// R* where measured), per candidate and row the gain ± SE, its recovery, the
// budgets saved, ΔNE and calibration, the pass/fail per row, and the decision.
// Errors: INVALID_ARGUMENT naming the argument or file that is malformed
// (no '=', an unreadable file, JSON without runs) or a row without uniform.
absl::StatusOr<std::string> RunSelect(absl::Span<const std::string> row_args,
                                      const SelectionCriteria& criteria);

}  // namespace graphsieve::eval

#endif  // GRAPHSIEVE_EVAL_SELECT_COMMAND_H_
