// What the build job checks: its options (messages name the command-line
// flag) and, after the pipeline, the validation gates before anything is
// exported or published (docs/DESIGN.md §3).
#include <sys/stat.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "core/io/byte_source.h"
#include "core/offline/build_job.h"
#include "core/offline/build_stage.h"
#include "core/offline/build_stages.h"
#include "core/offline/export_csv.h"

namespace graphsieve {
namespace {

// The column names of `path`'s header (its first line), or empty when it is
// not a regular file (standard input, a pipe: never consumed here) or cannot
// be read.
std::vector<std::string> HeaderColumns(const std::string& path, char delimiter) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return {};
  absl::StatusOr<std::unique_ptr<ByteSource>> in = ByteSource::Open(path);
  if (!in.ok()) return {};
  std::string head;
  char buf[4096];
  while (head.find('\n') == std::string::npos && head.size() < (64u << 10)) {
    absl::StatusOr<size_t> n = (*in)->Read(buf, sizeof buf);
    if (!n.ok()) return {};
    if (*n == 0) break;
    head.append(buf, *n);
  }
  head = head.substr(0, head.find('\n'));
  if (delimiter == '\0') {  // as the reader detects it
    for (char d : {'\t', ',', '|', ';'}) {
      if (head.find(d) != std::string::npos) {
        delimiter = d;
        break;
      }
    }
  }
  std::vector<std::string> names;
  for (absl::string_view name : absl::StrSplit(head, delimiter)) {
    names.emplace_back(absl::StripAsciiWhitespace(name));
  }
  return names;
}

}  // namespace

namespace build_internal {

// A pilot-based --method without --pilot_col fits the built-in pilot; when the
// first input's header has a column that looks like a pilot score (its name
// says pilot, or score), the warning names the flag that would use it.
std::string BuiltInPilotWarning(const BuildOptions& o) {
  const LogReaderOptions& r = o.reader;
  const std::vector<std::string> names =
      !r.column_names.empty() ? r.column_names : HeaderColumns(o.inputs.front(), r.delimiter);
  std::string guess;
  for (const char* word : {"pilot", "score"}) {
    for (const std::string& name : names) {
      if (name == r.user_column || name == r.item_column || name == r.label.column) continue;
      if (guess.empty() && absl::StrContains(absl::AsciiStrToLower(name), word)) guess = name;
    }
  }
  if (guess.empty()) return "";
  return absl::StrCat("--method=", MethodName(o.pipeline.method),
                      " without --pilot_col fits the built-in pilot; to rate from the log's own "
                      "pilot score instead pass --pilot_col=",
                      guess, " (a column of ", o.inputs.front(), ")");
}

// Stages 4 and 5: the validation gates, then the optional per-pair CSV.
absl::Status GatesAndExportStage(const BuildOptions& options, const BuildObserver& obs,
                                 const PairTable& pairs, const PipelineResult& result,
                                 const ImpressionLog& log, BuildReport* report) {
  absl::Status s = LocalStage(obs, report, "gates", [&] {
    return CheckGates(pairs, result, options.pipeline.alpha, options.gate_tolerance);
  });
  if (!s.ok() || options.export_csv.empty()) return s;
  return LocalStage(obs, report, "export", [&] {
    return WriteExportCsv(options.export_csv, pairs, result, log.user_names, log.item_names);
  });
}

}  // namespace build_internal

absl::Status BuildOptions::ValidateTuneProvenance() const {
  auto bad = [](std::string msg) { return absl::InvalidArgumentError(std::move(msg)); };
  const int given = !tune_rule.empty() + !tune_date.empty() + !tune_report_digest.empty();
  if (given == 0) return absl::OkStatus();
  if (given != 3) {
    return bad(
        "--tune_rule, --tune_date and --tune_report_digest go together (graphsieve-eval tune "
        "writes all three into its flag file)");
  }
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, tune_date, &t, &err)) {
    return bad(absl::StrCat("--tune_date '", tune_date,
                            "' is not an RFC 3339 time (e.g. 2026-11-28T21:25:14Z): ", err));
  }
  if (!absl::StartsWith(tune_report_digest, "xxh3:") || tune_report_digest.size() != 21) {
    return bad(absl::StrCat("--tune_report_digest '", tune_report_digest,
                            "' is not 'xxh3:' and 16 hex digits (graphsieve-eval tune's report "
                            "digest)"));
  }
  return absl::OkStatus();
}

absl::Status BuildOptions::Validate() const {
  auto bad = [](std::string msg) { return absl::InvalidArgumentError(std::move(msg)); };
  if (inputs.empty()) return bad("--input: no input file given");
  for (const std::string& f : inputs) {
    if (f.empty()) return bad("--input: empty file name in the list");
  }
  // What the snapshot stores: one row of about sketch_dim floats per node, so
  // the build's range is narrower than the method's (checked first, so that
  // both ends of it are reported as one range).
  if (pipeline.sketch_dim < 1 || pipeline.sketch_dim > kMaxSketchDim) {
    return bad(absl::StrCat("--sketch_dim must be in [1, ", kMaxSketchDim, "], got ",
                            pipeline.sketch_dim));
  }
  // The method's options are checked once, by PipelineOptions::Validate;
  // its field names are the flags' names.
  if (absl::Status s = pipeline.Validate(); !s.ok()) return bad(absl::StrCat("--", s.message()));
  if (NeedsPilot(pipeline.method) && reader.pilot_column.empty()) {  // the built-in pilot
    if (absl::Status s = pilot.Validate(); !s.ok()) return s;
  }
  const PipelineOptions& p = pipeline;
  // Checked whatever the rate rule (an unused NaN is still a typo to report).
  for (auto [name, value] : {std::pair{"--floor", p.floor}, {"--product_floor", p.product_floor}}) {
    if (!(value >= 0.0 && value <= 1.0)) {
      return bad(absl::StrCat(name, " must be in [0, 1], got ", value));
    }
  }
  if (!(p.propagation_tolerance > 0.0 && std::isfinite(p.propagation_tolerance))) {
    return bad(absl::StrCat("--propagation_tolerance must be a finite number > 0, got ",
                            p.propagation_tolerance));
  }
  if (!(lock_timeout_seconds >= 0.0 && std::isfinite(lock_timeout_seconds))) {
    return bad(absl::StrCat("--lock_timeout_seconds must be a finite number >= 0, got ",
                            lock_timeout_seconds));
  }
  if (reader.max_bad_rows < 0) {
    return bad(absl::StrCat("--max_bad_rows must be >= 0, got ", reader.max_bad_rows));
  }
  if (keep_versions < 1) return bad(absl::StrCat("--keep must be >= 1, got ", keep_versions));
  if (partitions < 1 || partitions > 4096) {
    return bad(absl::StrCat("--partitions must be in [1, 4096], got ", partitions));
  }
  if (snapshot_root.empty() && !dry_run) {
    return bad("--snapshot_root is required (or pass --dry_run)");
  }
  if (!(gate_tolerance > 0)) return bad("gate tolerance must be > 0");
  if (absl::Status s = ValidateTuneProvenance(); !s.ok()) return s;
  if (absl::Status s = reader.Validate(); !s.ok()) {
    return bad(absl::StrCat("reader options: ", s.message()));
  }
  return absl::OkStatus();
}

namespace build_internal {

absl::Status CheckRateRangeGate(const PairTable& pairs, const PipelineResult& result) {
  const size_t n = pairs.num_pairs();
  if (result.rate.size() != n) {
    return absl::FailedPreconditionError(
        absl::StrCat("gate non-empty failed: ", result.rate.size(), " rates for ", n, " pairs"));
  }
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < n; ++i) {
    const float r = result.rate[i];
    if (!(std::isfinite(r) && r > 0.0f && r <= 1.0f)) {
      if (bad++ == 0) first = i;
    }
  }
  if (bad > 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("gate rate-range failed: ", bad, " of ", n,
                     " rates are NaN/inf or outside (0, 1]; first: pair ", first, " (user ",
                     pairs.user_ids[pairs.pair_user[first]], ", item ",
                     pairs.item_ids[pairs.pair_item[first]], ") rate ", result.rate[first]));
  }
  for (const SolveSummary& s : result.solves) {
    if (!s.converged) {
      return absl::FailedPreconditionError(absl::StrCat(
          "gate solver-converged failed: component ", s.component, " (", s.nodes, " nodes, ",
          s.method, ") stopped after ", s.max_iterations, " iterations at relative residual ",
          s.max_relative_residual, ": ", s.message));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckGatesOverRanks(Communicator& comm, const PairTable& pairs,
                                 const PipelineResult& result, double alpha, double tolerance,
                                 uint64_t totals[3]) {
  totals[0] = pairs.num_pairs(), totals[1] = pairs.total_instances,
  totals[2] = pairs.total_negatives;
  double weighted = 0;  // Σ negatives · rate, for the mean over every rank's negatives
  const absl::Status local = CheckRateRangeGate(pairs, result);
  if (local.ok()) {
    for (size_t i = 0; i < pairs.num_pairs(); ++i) {
      weighted += static_cast<double>(pairs.negatives[i]) * result.rate[i];
    }
  }
  comm.AllReduceSum(absl::MakeSpan(totals, 3));
  comm.AllReduceSum(absl::MakeSpan(&weighted, 1));
  if (totals[0] == 0 || totals[1] == 0) {
    return absl::FailedPreconditionError("gate non-empty failed: the log has no pairs");
  }
  if (absl::Status s = AgreeOnStatus(comm, local); !s.ok()) return s;
  if (totals[2] == 0) {
    return absl::FailedPreconditionError(
        "gate negative-mean failed: the log has no negative instances (nothing to subsample)");
  }
  const double mean = weighted / static_cast<double>(totals[2]);
  if (!(std::fabs(mean - alpha) <= tolerance)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "gate negative-mean failed: mean rate over %d negative instances is %.9g, --alpha is "
        "%.9g (off by %.3g, allowed %.3g)",
        totals[2], mean, alpha, std::fabs(mean - alpha), tolerance));
  }
  return absl::OkStatus();
}

}  // namespace build_internal

absl::Status CheckGates(const PairTable& pairs, const PipelineResult& result, double alpha,
                        double tolerance) {
  SingleProcessCommunicator one;
  uint64_t totals[3];
  return build_internal::CheckGatesOverRanks(one, pairs, result, alpha, tolerance, totals);
}

}  // namespace graphsieve
