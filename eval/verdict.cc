#include "eval/verdict.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string_view>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/io/byte_source.h"
#include "core/io/fast_parse.h"
#include "core/io/field_parser.h"
#include "core/io/line_splitter.h"

namespace graphsieve::eval {
namespace {

using io_internal::Av;
using io_internal::ShownColumns;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// First α, scanning up, where `values` rises through 0 (log-linear between
// grid points); the smallest α when it is already >= 0 there.
std::optional<double> Crossing(absl::Span<const double> alphas, const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  if (values[0] >= 0.0) return alphas[0];
  for (size_t i = 1; i < values.size(); ++i) {
    if (values[i] < 0.0) continue;
    const double t = -values[i - 1] / (values[i] - values[i - 1]);
    const double a0 = std::log(alphas[i - 1]), a1 = std::log(alphas[i]);
    return std::exp(a0 + t * (a1 - a0));
  }
  return std::nullopt;
}

std::string AlphaText(const std::optional<double>& a, const BudgetMatch& b) {
  if (!a.has_value()) return absl::StrFormat("> %g", b.largest_alpha);
  if (*a <= b.smallest_alpha) return absl::StrFormat("<= %g", b.smallest_alpha);
  return absl::StrFormat("%.3f", *a);
}

std::string SavedText(const std::optional<double>& a, const BudgetMatch& b, double alpha) {
  if (!a.has_value()) return absl::StrFormat("> %.0f%%", 100 * BudgetSaved(alpha, b.largest_alpha));
  if (*a <= b.smallest_alpha) {
    return absl::StrFormat("<= %.0f%%", 100 * BudgetSaved(alpha, b.smallest_alpha));
  }
  return absl::StrFormat("%.0f%%", 100 * BudgetSaved(alpha, *a));
}

// A time: a whole number >= 0, as an integer or a number with no fraction up
// to 2^53 (where doubles stop being exact), e.g. epoch seconds. Errors as the
// log reader's: "<file>:<line>: column '<column>': ...".
absl::StatusOr<int64_t> ParseTime(const io_internal::FieldParser& fields, std::string_view field,
                                  const std::string& column) {
  const std::string_view text = io_internal::TrimField(field);
  uint64_t whole = 0;
  if (io_internal::FastParseUint(text, &whole) &&
      whole <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return static_cast<int64_t>(whole);
  }
  double v = 0.0;
  if (absl::Status s = fields.ParseNumber(text, column, &v); !s.ok()) return s;  // not a number
  constexpr double kMaxExact = 9007199254740992.0;                               // 2^53
  if (v < 0.0 || v != std::floor(v)) {
    return fields.RowError(column, absl::StrCat("time '", io_internal::Shown(text),
                                                "' is not a whole number >= 0 (a time column "
                                                "holds e.g. epoch seconds)"));
  }
  if (v > kMaxExact) {
    return fields.RowError(column,
                           absl::StrCat("time '", io_internal::Shown(text),
                                        "' is out of range (at most 2^53 as a decimal, ",
                                        std::numeric_limits<int64_t>::max(), " as an integer)"));
  }
  return static_cast<int64_t>(v);
}

}  // namespace

std::map<uint64_t, double> AucBySeed(const std::vector<RunResult>& runs, const std::string& model,
                                     const std::string& method, double alpha) {
  std::map<uint64_t, double> out;
  for (const RunResult& r : runs) {
    if (r.model != model) continue;
    const bool match =
        alpha >= 1.0 ? r.method == "full" : r.method == method && std::abs(r.alpha - alpha) < 1e-9;
    if (match) out[r.seed] = r.auc;
  }
  return out;
}

std::vector<double> PairedDifferences(const std::map<uint64_t, double>& a,
                                      const std::map<uint64_t, double>& b) {
  std::vector<double> out;
  for (const auto& [seed, v] : a) {
    if (auto it = b.find(seed); it != b.end()) out.push_back(v - it->second);
  }
  return out;
}

double StudentT975(int df) {
  static constexpr double kT[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                  2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                  2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                  2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  if (df < 1) return kNaN;
  return df <= 30 ? kT[df - 1] : 1.96;
}

PairedInterval IntervalOf(absl::Span<const double> diffs) {
  PairedInterval out;
  out.n = static_cast<int>(diffs.size());
  if (diffs.empty()) return {kNaN, kNaN, kNaN, kNaN, 0};
  for (double d : diffs) out.mean += d;
  out.mean /= out.n;
  if (out.n < 2) {
    out.se = out.low = out.high = kNaN;
    return out;
  }
  double ss = 0.0;
  for (double d : diffs) ss += (d - out.mean) * (d - out.mean);
  out.se = std::sqrt(ss / (out.n - 1) / out.n);
  const double half = StudentT975(out.n - 1) * out.se;
  out.low = out.mean - half;
  out.high = out.mean + half;
  return out;
}

BudgetMatch MatchAlpha(absl::Span<const double> alphas,
                       const std::vector<std::vector<double>>& diffs_per_alpha) {
  BudgetMatch out;
  if (alphas.empty()) return out;
  out.smallest_alpha = alphas.front();
  out.largest_alpha = alphas.back();
  std::vector<double> mean, upper, lower;
  for (const std::vector<double>& d : diffs_per_alpha) {
    const PairedInterval i = IntervalOf(d);
    mean.push_back(i.mean);
    upper.push_back(i.high);
    lower.push_back(i.low);
  }
  out.alpha = Crossing(alphas, mean);
  out.low = Crossing(alphas, upper);   // the upper bound reaches 0 first (smallest α)
  out.high = Crossing(alphas, lower);  // the lower bound last
  return out;
}

double BudgetSaved(double target_alpha, double alpha) { return 1.0 - target_alpha / alpha; }

Recommendation Recommend(const PairedInterval& gain) {
  if (gain.n >= 2 && gain.low > 0.0) return Recommendation::kDeploy;
  if (gain.n >= 2 && gain.high < 0.0) return Recommendation::kKeepUniform;
  return Recommendation::kNoGain;
}

int ExitCode(Recommendation r) {
  switch (r) {
    case Recommendation::kDeploy:
      return 0;
    case Recommendation::kNoGain:
      return 3;
    case Recommendation::kKeepUniform:
      return 4;
  }
  return 3;
}

absl::StatusOr<VerdictReport> RunVerdict(const ImpressionLog& log,
                                         absl::Span<const int64_t> timestamps,
                                         const VerdictOptions& options, const std::string& mode) {
  absl::StatusOr<ModelKind> kind = ParseModelKind(options.model);
  if (!kind.ok())
    return absl::InvalidArgumentError(absl::StrCat("--model: ", kind.status().message()));
  ExperimentOptions o = options.experiment;
  o.models = {*kind};
  o.mode = timestamps.empty() ? EvalMode::kRandom : EvalMode::kDeployed;
  o.pilot = PilotSource::kNone;
  // The builder's rule: mixture κ (default 1, as graphsieve-build), γ 0.5.
  o.kappas = {options.kappa};
  o.gammas = {0.5};
  o.pilot_kappas.clear();
  // 1. The default rule and uniform at alpha (the paired gain).
  o.methods = {"uniform", "maec-prop-mix"};
  o.alphas = {options.alpha};
  o.include_full = false;
  absl::StatusOr<ExperimentResult> compared = RunExperiment(log, o, timestamps);
  if (!compared.ok()) return compared.status();
  // 2. Uniform at the larger alphas and unsampled (the curve the budget is read from).
  o.methods = {"uniform"};
  o.alphas = options.budget_alphas;
  o.include_full = true;
  absl::StatusOr<ExperimentResult> curve = RunExperiment(log, o, timestamps);
  if (!curve.ok()) return curve.status();

  std::vector<RunResult> runs = compared->runs;
  runs.insert(runs.end(), curve->runs.begin(), curve->runs.end());
  const std::string model = options.model;
  const std::map<uint64_t, double> target = AucBySeed(runs, model, "maec-prop-mix", options.alpha);
  const std::map<uint64_t, double> uniform = AucBySeed(runs, model, "uniform", options.alpha);
  // The gain's standard error needs two paired seeds; fewer (one seed asked
  // for, or the rule refused on the others) has no interval to judge by.
  if (const size_t paired = PairedDifferences(target, uniform).size(); paired < 2) {
    std::string why = absl::StrCat("the default rule and uniform were compared on ", paired, " of ",
                                   o.seeds, " seeds; the gain's interval needs at least 2");
    if (!compared->skipped.empty()) absl::StrAppend(&why, " (", compared->skipped.front(), ")");
    return absl::FailedPreconditionError(why);
  }
  VerdictReport r;
  r.mode = mode;
  r.kappa = options.kappa;
  r.exposure_power = o.pipeline.exposure_power;
  r.instances = compared->instances;
  r.positives = compared->positives;
  r.seeds = static_cast<int>(target.size());
  r.alpha = options.alpha;
  r.gain = IntervalOf(PairedDifferences(target, uniform));
  r.full_vs_uniform = IntervalOf(PairedDifferences(AucBySeed(runs, model, "full", 1.0), uniform));
  std::vector<double> grid = {options.alpha};
  grid.insert(grid.end(), options.budget_alphas.begin(), options.budget_alphas.end());
  grid.push_back(1.0);
  std::vector<std::vector<double>> diffs;
  for (double a : grid)
    diffs.push_back(PairedDifferences(AucBySeed(runs, model, "uniform", a), target));
  r.budget = MatchAlpha(grid, diffs);
  r.recommendation = Recommend(r.gain);
  return r;
}

absl::StatusOr<std::vector<int64_t>> ReadTimeColumn(const std::string& path,
                                                    const std::string& column,
                                                    const LogReaderOptions& options) {
  using io_internal::FieldParser;
  using io_internal::Shown;
  using io_internal::TrimField;
  if (options.format != LogFormat::kDelimited) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": a time column (--time-col) needs a delimited log with one impression per row"));
  }
  if (path == "-") {
    return absl::InvalidArgumentError(
        "--time-col reads the log a second time, which standard input cannot be: give a file");
  }
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<ByteSource>> source = ByteSource::Open(path);
  if (!source.ok()) return source.status();
  LineReader lines(source->get(), options);
  const FieldParser fields(path, options, lines);
  // Line errors (a line too long) name file:line as the main reader's do.
  auto next = [&](std::string_view* line) -> absl::StatusOr<bool> {
    absl::StatusOr<bool> got = lines.Next(line);
    if (!got.ok() && absl::IsInvalidArgument(got.status())) {
      return fields.RowError("", got.status().message());
    }
    return got;
  };
  std::string_view first;
  absl::StatusOr<bool> got = next(&first);
  while (got.ok() && *got && first.empty()) got = next(&first);  // leading blank lines
  if (!got.ok()) return got.status();
  if (!*got) return absl::InvalidArgumentError(absl::StrCat(path, ": empty file"));
  if (absl::StartsWith(Av(first), "\xEF\xBB\xBF")) first.remove_prefix(3);  // UTF-8 BOM
  const bool headerless = !options.column_names.empty();
  char delimiter = options.delimiter;
  if (delimiter == '\0')
    delimiter = io_internal::DetectDelimiter(first, options.column_names.size());
  if (delimiter == '\0') {
    return absl::InvalidArgumentError(absl::StrCat(path, ":1: cannot detect the delimiter from '",
                                                   Shown(first), "'; set it with --delimiter"));
  }
  LineSplitter splitter(delimiter);
  std::vector<std::string_view> row;
  std::vector<std::string> names = options.column_names;
  if (!headerless) {
    const size_t n = splitter.Split(first, &row);
    if (splitter.error() != nullptr) return fields.RowError("", splitter.error());
    for (size_t i = 0; i < n; ++i) names.emplace_back(TrimField(row[i]));
  }
  const auto found = std::find(names.begin(), names.end(), column);  // the first, as the reader
  if (found == names.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ":1: no time column '", column, "' (--time-col) in the ",
        headerless ? "given column names" : "header", "; columns are: ", ShownColumns(names)));
  }
  const size_t index = static_cast<size_t>(found - names.begin());
  std::vector<int64_t> out;
  auto parse_row = [&](std::string_view line) -> absl::Status {
    const size_t n = splitter.Split(line, &row);
    if (splitter.error() != nullptr) return fields.RowError("", splitter.error());
    if (n != names.size()) {
      return fields.RowError("",
                             absl::StrCat("expected ", names.size(), " fields (as in the ",
                                          headerless ? "column names" : "header", "), found ", n));
    }
    absl::StatusOr<int64_t> t = ParseTime(fields, row[index], column);
    if (!t.ok()) return t.status();
    out.push_back(*t);
    return absl::OkStatus();
  };
  if (headerless) {
    if (absl::Status s = parse_row(first); !s.ok()) return s;
  }
  std::string_view line;
  while (true) {
    got = next(&line);
    if (!got.ok()) return got.status();
    if (!*got) break;
    if (line.empty()) continue;
    if (absl::Status s = parse_row(line); !s.ok()) return s;
  }
  return out;
}

std::string FormatVerdict(const VerdictReport& r) {
  std::string out = absl::StrFormat(
      "graphsieve verdict: %d instances (%d positive), %s, %d seeds, target model trained on the "
      "kept negatives with the log-odds correction; 95%% intervals (Student t over seeds).\n",
      r.instances, r.positives, r.mode, r.seeds);
  absl::StrAppendFormat(&out,
                        "  rule judged: maec-prop-mix, kappa %g, gamma 0.5, exposure_power %g "
                        "(graphsieve-build --kappa=%g --exposure_power=%g)\n",
                        r.kappa, r.exposure_power, r.kappa, r.exposure_power);
  absl::StrAppendFormat(&out,
                        "  gain over uniform at alpha %g:  dAUC %+.4f +- %.4f (SE), interval "
                        "%+.4f .. %+.4f\n",
                        r.alpha, r.gain.mean, r.gain.se, r.gain.low, r.gain.high);
  absl::StrAppendFormat(
      &out, "  budget saved at equal AUC:     uniform needs alpha %s (interval %s .. %s) to match",
      AlphaText(r.budget.alpha, r.budget), AlphaText(r.budget.low, r.budget),
      AlphaText(r.budget.high, r.budget));
  absl::StrAppendFormat(&out, "; the default keeps %s fewer negatives (interval %s .. %s)\n",
                        SavedText(r.budget.alpha, r.budget, r.alpha),
                        SavedText(r.budget.low, r.budget, r.alpha),
                        SavedText(r.budget.high, r.budget, r.alpha));
  absl::StrAppendFormat(&out,
                        "  (unsampled vs uniform at alpha %g: dAUC %+.4f +- %.4f: what uniform "
                        "subsampling costs)\n",
                        r.alpha, r.full_vs_uniform.mean, r.full_vs_uniform.se);
  switch (r.recommendation) {
    case Recommendation::kDeploy:
      absl::StrAppend(&out,
                      "recommendation: DEPLOY - graphsieve's rates beat uniform sampling on this "
                      "log (exit 0)\n");
      break;
    case Recommendation::kNoGain:
      absl::StrAppend(&out,
                      "recommendation: NO MEASURABLE GAIN - uniform sampling is as good at this "
                      "precision; keep uniform or rerun with more --seeds (exit 3)\n");
      break;
    case Recommendation::kKeepUniform:
      absl::StrAppend(&out,
                      "recommendation: KEEP UNIFORM - graphsieve's rates lose to uniform sampling "
                      "on this log (exit 4)\n");
      break;
  }
  return out;
}

}  // namespace graphsieve::eval
