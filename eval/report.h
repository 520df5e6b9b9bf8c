// Summaries of an experiment over seeds, as Markdown and JSON.
//
// Thread-safety: pure functions.
#ifndef GRAPHSIEVE_EVAL_REPORT_H_
#define GRAPHSIEVE_EVAL_REPORT_H_

#include <string>
#include <vector>

#include "eval/experiment.h"

namespace graphsieve::eval {

struct Stat {
  double mean = 0.0;
  double std = 0.0;  // sample standard deviation over seeds (0 with one seed)
  int n = 0;
};
Stat Summarise(const std::vector<double>& values);

// One (model, method, alpha, floor, gamma) cell over seeds.
struct Summary {
  std::string model, method;
  double alpha = 1.0, floor = 0.0, gamma = 0.0;
  double kappa = 0.0, pilot_kappa = 0.0;  // mixture rule; 0 = floor rule
  Stat auc, log_loss, ndcg, kept;
  Stat normalised_entropy, calibration;  // on the test (eval/metrics.h)
  Stat at_floor, at_one;                 // shares of training negatives at the floor / at rate 1
  // Paired over seeds: this method's AUC minus uniform's at the same alpha
  // (same split, same uniform numbers); n = 0 when uniform was not run.
  Stat delta_auc_vs_uniform;
  Stat delta_auc_vs_full;  // minus the unsampled model's AUC
  // Deployed mode: shares of training instances rated EXACT / INFERRED /
  // DEFAULT (n = 0 when the method has no snapshot: full, uniform, kRandom).
  Stat source_exact, source_inferred, source_default;
};

// Cells in run order (full first, then the grid in the order it was run).
std::vector<Summary> SummariseRuns(const std::vector<RunResult>& runs);

struct ReportContext {
  std::string title;    // e.g. "MovieLens 100K (implicit, rating >= 4)"
  std::string command;  // the command line that produced it
  int ndcg_k = 10;
};

// A Markdown section: a one-paragraph description of the data and a table per model.
std::string FormatMarkdown(const ExperimentResult& result, const std::vector<Summary>& cells,
                           const ReportContext& context);

// Everything (data sizes, every run, every cell) as pretty-printed JSON.
std::string FormatJson(const ExperimentResult& result, const std::vector<Summary>& cells,
                       const ReportContext& context);

}  // namespace graphsieve::eval

#endif  // GRAPHSIEVE_EVAL_REPORT_H_
