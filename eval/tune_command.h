// graphsieve-eval tune as a command (docs/EVALUATION.md "Choosing the rule on
// your own log"): reads the log (and the time column, the --test file), cuts
// it to --max_instances by users, runs RunTune (eval/tune.h) and writes the
// report, the picture and the flag file into the output directory. The flags
// are parsed in eval/main.cc.
//
// Thread-safety: RunTuneCommand is a pure function of its inputs and the files.
#ifndef GRAPHSIEVE_EVAL_TUNE_COMMAND_H_
#define GRAPHSIEVE_EVAL_TUNE_COMMAND_H_

#include <string>

#include "absl/status/status.h"
#include "core/io/log_reader.h"
#include "eval/tune.h"

namespace graphsieve::eval {

struct TuneCommand {
  std::string input;      // --input
  std::string time_col;   // --time-col; empty = the periods by a seeded draw
  std::string test_path;  // --test; empty = the later period's held-out part
  LogReaderOptions reader, test_reader;
  std::string output_dir;            // rule.flags, tune.md, tune.json, tune-curve.svg, patch
  bool exit_zero_on_answer = false;  // exit 0 whenever the flag file was written
  TuneOptions tune;                  // experiment.progress set = progress lines on stderr
};

// Runs the command; *exit_code gets TuneExitCode's answer (or 0 with
// exit_zero_on_answer). Errors: reading the inputs (naming the file, line and
// column), RunTune's, writing the outputs (naming --output_dir).
absl::Status RunTuneCommand(const TuneCommand& c, int* exit_code);

}  // namespace graphsieve::eval

#endif  // GRAPHSIEVE_EVAL_TUNE_COMMAND_H_
