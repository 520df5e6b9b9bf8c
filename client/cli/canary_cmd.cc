// graphsieve canary: the same pairs answered by a baseline and a candidate
// (two servers, or two snapshot directories offline), compared.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/cli/commands.h"
#include "client/cli/flags.h"
#include "client/delimited_stream.h"
#include "client/snapshot_rates.h"
#include "core/serving/canary_stats.h"

namespace graphsieve {
namespace {

struct ComparedPairs {
  std::vector<uint64_t> users, items;
  std::vector<uint8_t> negative;  // empty = labels unknown
  std::string description;
};

absl::StatusOr<ComparedPairs> PairsFromFile(const std::string& path, const LogReaderOptions& o) {
  absl::StatusOr<std::unique_ptr<DelimitedStream>> in = DelimitedStream::Open(path, o);
  if (!in.ok()) return in.status();
  DelimitedStream& s = **in;
  absl::StatusOr<size_t> uc = s.Column(o.user_column, "--user-col (or --user-column)");
  if (!uc.ok()) return uc.status();
  absl::StatusOr<size_t> ic = s.Column(o.item_column, "--item-col (or --item-column)");
  if (!ic.ok()) return ic.status();
  const int lc = s.FindColumn(o.label.column);
  ComparedPairs out;
  while (true) {
    absl::StatusOr<bool> more = s.Next();
    if (!more.ok()) return more.status();
    if (!*more) break;
    absl::StatusOr<uint64_t> u = ParseId(s.fields()[*uc], o.id_mode);
    if (!u.ok())
      return absl::InvalidArgumentError(
          absl::StrCat(s.Where(), "column '", o.user_column, "': ", u.status().message()));
    absl::StatusOr<uint64_t> i = ParseId(s.fields()[*ic], o.id_mode);
    if (!i.ok())
      return absl::InvalidArgumentError(
          absl::StrCat(s.Where(), "column '", o.item_column, "': ", i.status().message()));
    out.users.push_back(*u);
    out.items.push_back(*i);
    if (lc >= 0) {
      absl::StatusOr<bool> label = EvaluateLabel(o.label, s.fields()[lc]);
      if (!label.ok())
        return absl::InvalidArgumentError(absl::StrCat(s.Where(), label.status().message()));
      out.negative.push_back(*label ? 0 : 1);
    }
  }
  if (out.users.empty())
    return absl::InvalidArgumentError(absl::StrCat("--input ", path, ": no pairs"));
  out.description = absl::StrCat("pairs from ", path, lc >= 0 ? " (labelled)" : "");
  return out;
}

absl::StatusOr<ComparedPairs> SampleFromLog(const std::string& path, const LogReaderOptions& o,
                                            int64_t n, uint64_t seed) {
  if (n < 1) return absl::InvalidArgumentError(absl::StrCat("--sample must be >= 1, got ", n));
  ImpressionLog log;
  if (absl::Status s = ReadImpressionLog(path, o, &log); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("--sample-from: ", s.message()));
  }
  if (log.size() == 0)
    return absl::InvalidArgumentError(absl::StrCat("--sample-from ", path, ": no instances"));
  std::vector<size_t> index(log.size());
  for (size_t i = 0; i < index.size(); ++i) index[i] = i;
  const size_t k = std::min<size_t>(static_cast<size_t>(n), index.size());
  std::mt19937_64 rng(seed);  // a partial Fisher-Yates shuffle: uniform without replacement
  for (size_t i = 0; i < k && k < index.size(); ++i)
    std::swap(index[i], index[i + rng() % (index.size() - i)]);
  index.resize(k);
  std::sort(index.begin(), index.end());
  ComparedPairs out;
  for (size_t i : index) {
    out.users.push_back(log.user_ids[i]);
    out.items.push_back(log.item_ids[i]);
    out.negative.push_back(log.labels[i] ? 0 : 1);
  }
  out.description = k == log.size() ? absl::StrCat("all ", k, " instances of ", path)
                                    : absl::StrCat(k, " of ", log.size(), " instances of ", path,
                                                   " sampled uniformly, seed ", seed);
  return out;
}

absl::Status FromServer(const std::string& target, const char* flag, const ComparedPairs& pairs,
                        std::vector<float>* rates, std::vector<int>* sources,
                        std::string* version) {
  absl::StatusOr<std::unique_ptr<SamplingRateClient>> client = ClientFromFlags(target, flag);
  if (!client.ok()) return client.status();
  absl::StatusOr<RateBatch> batch = (*client)->GetRates(pairs.users, pairs.items);
  if (!batch.ok())
    return absl::Status(batch.status().code(),
                        absl::StrCat("--", flag, ": ", batch.status().message()));
  if (batch->snapshot_versions.size() != 1) {
    return absl::UnavailableError(
        absl::StrCat("--", flag, " ", target, " swapped snapshots during the canary (",
                     absl::StrJoin(batch->snapshot_versions, ", "), "); rerun it"));
  }
  *version = batch->snapshot_versions.front();
  *rates = std::move(batch->rates);
  sources->assign(batch->sources.begin(), batch->sources.end());
  return absl::OkStatus();
}

absl::Status FromSnapshot(const SnapshotRates& snapshot, const ComparedPairs& pairs,
                          std::vector<float>* rates, std::vector<int>* sources) {
  rates->resize(pairs.users.size());
  sources->resize(pairs.users.size());
  return snapshot.Score(pairs.users, pairs.items, absl::MakeSpan(*rates), absl::MakeSpan(*sources));
}

// Each step on stderr as it ends, with its time, so a comparison of large
// snapshots shows where it stands; stdout keeps the report alone.
class Steps {
 public:
  void Done(const std::string& what) {
    const auto now = std::chrono::steady_clock::now();
    std::fprintf(stderr, "canary: %s (%.1f s)\n", what.c_str(),
                 std::chrono::duration<double>(now - last_).count());
    last_ = now;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// Every pair stored in either snapshot, sorted: the union of the two sorted
// lists in one pass.
absl::StatusOr<ComparedPairs> StoredPairs(const SnapshotRates& a, const SnapshotRates& b) {
  std::vector<std::pair<uint64_t, uint64_t>> in_a, in_b;
  absl::Status status_b;
  std::thread scan_b([&] { status_b = b.AppendStoredPairs(&in_b); });  // both scans at once
  absl::Status status_a = a.AppendStoredPairs(&in_a);
  scan_b.join();
  if (!status_a.ok()) return status_a;
  if (!status_b.ok()) return status_b;
  ComparedPairs out;
  out.users.reserve(std::max(in_a.size(), in_b.size()));
  out.items.reserve(std::max(in_a.size(), in_b.size()));
  auto add = [&out](const std::pair<uint64_t, uint64_t>& p) {
    out.users.push_back(p.first);
    out.items.push_back(p.second);
  };
  size_t i = 0, j = 0;
  while (i < in_a.size() || j < in_b.size()) {
    if (j == in_b.size() || (i < in_a.size() && in_a[i] < in_b[j])) {
      add(in_a[i++]);
    } else if (i == in_a.size() || in_b[j] < in_a[i]) {
      add(in_b[j++]);
    } else {  // in both
      add(in_a[i++]);
      ++j;
    }
  }
  out.description = "every pair stored in either snapshot";
  if (out.users.empty()) return absl::InvalidArgumentError("both snapshots store no pairs");
  return out;
}

int Run() {
  const std::string baseline = absl::GetFlag(FLAGS_baseline),
                    candidate = absl::GetFlag(FLAGS_candidate);
  const std::string base_snap = absl::GetFlag(FLAGS_baseline_snapshot),
                    cand_snap = absl::GetFlag(FLAGS_candidate_snapshot);
  const bool online = !baseline.empty() || !candidate.empty();
  const bool offline = !base_snap.empty() || !cand_snap.empty();
  if (online == offline) {
    return Fail("canary",
                absl::InvalidArgumentError(
                    "give either --baseline and --candidate (servers) or --baseline-snapshot and "
                    "--candidate-snapshot (snapshot directories)"));
  }
  if (online && (baseline.empty() || candidate.empty())) {
    return Fail("canary", absl::InvalidArgumentError(
                              "both --baseline and --candidate HOST:PORT are required"));
  }
  if (offline && (base_snap.empty() || cand_snap.empty())) {
    return Fail("canary", absl::InvalidArgumentError(
                              "both --baseline-snapshot and --candidate-snapshot are required"));
  }
  absl::StatusOr<std::string> pairs_input = PairsInputFromFlags(/*default_is_stdin=*/false);
  if (!pairs_input.ok()) return Fail("canary", pairs_input.status());
  const std::string pairs_path = *pairs_input, sample_path = absl::GetFlag(FLAGS_sample_from);
  if (!pairs_path.empty() && !sample_path.empty()) {
    return Fail("canary",
                absl::InvalidArgumentError("give --input (--pairs) or --sample-from, not both"));
  }
  if (online && pairs_path.empty() && sample_path.empty()) {
    return Fail("canary",
                absl::InvalidArgumentError("servers need the pairs to compare: --input FILE (or "
                                           "--pairs FILE) or --sample-from LOG"));
  }
  CanaryThresholds thresholds;
  thresholds.delta_threshold = absl::GetFlag(FLAGS_delta_threshold);
  thresholds.max_mean_delta = absl::GetFlag(FLAGS_max_mean_delta);
  thresholds.max_p99_delta = absl::GetFlag(FLAGS_max_p99_delta);
  thresholds.max_ks = absl::GetFlag(FLAGS_max_ks);
  thresholds.max_fraction_over = absl::GetFlag(FLAGS_max_fraction_over);
  if (std::string e = thresholds.Validate(); !e.empty())
    return Fail("canary", absl::InvalidArgumentError(e));
  // Validate checks --delta-threshold only; a NaN limit would pass every check.
  for (const auto& [flag, value] :
       {std::pair{"--max-mean-delta", thresholds.max_mean_delta},
        std::pair{"--max-p99-delta", thresholds.max_p99_delta},
        std::pair{"--max-ks", thresholds.max_ks},
        std::pair{"--max-fraction-over", thresholds.max_fraction_over}}) {
    if (std::isnan(value)) {
      return Fail("canary", absl::InvalidArgumentError(absl::StrCat(
                                flag, " is NaN; give a number (a negative one turns it off)")));
    }
  }
  if (online && FlagGiven("default_policy")) {
    return Fail("canary",
                absl::InvalidArgumentError(
                    "--default-policy applies to snapshots compared offline "
                    "(--baseline-snapshot/--candidate-snapshot); servers apply their own"));
  }
  absl::StatusOr<LogReaderOptions> log_options = LogOptionsFromFlags();
  if (!log_options.ok()) return Fail("canary", log_options.status());

  Steps steps;
  std::unique_ptr<SnapshotRates> base_rates, cand_rates;
  if (offline) {
    absl::StatusOr<DefaultPolicy> policy =
        DefaultPolicy::Parse(absl::GetFlag(FLAGS_default_policy));
    // Parse's messages already name --default-policy.
    if (!policy.ok()) return Fail("canary", policy.status());
    absl::StatusOr<std::unique_ptr<SnapshotRates>> b =
        SnapshotRates::Open(base_snap, "baseline-snapshot", *policy);
    if (!b.ok()) return Fail("canary", b.status());
    steps.Done(absl::StrCat("opened and verified the baseline, version ", (*b)->version()));
    absl::StatusOr<std::unique_ptr<SnapshotRates>> c =
        SnapshotRates::Open(cand_snap, "candidate-snapshot", *policy);
    if (!c.ok()) return Fail("canary", c.status());
    steps.Done(absl::StrCat("opened and verified the candidate, version ", (*c)->version()));
    base_rates = *std::move(b);
    cand_rates = *std::move(c);
  }
  absl::StatusOr<ComparedPairs> pairs =
      !pairs_path.empty()    ? PairsFromFile(pairs_path, *log_options)
      : !sample_path.empty() ? SampleFromLog(sample_path, *log_options, absl::GetFlag(FLAGS_sample),
                                             absl::GetFlag(FLAGS_seed))
                             : StoredPairs(*base_rates, *cand_rates);
  if (!pairs.ok()) return Fail("canary", pairs.status());
  steps.Done(absl::StrCat(pairs->users.size(), " pairs to compare: ", pairs->description));

  CanaryInput input;
  CanaryReport report;
  report.pairs_description = pairs->description;
  if (online) {
    report.baseline_name = baseline;
    report.candidate_name = candidate;
    if (absl::Status s = FromServer(baseline, "baseline", *pairs, &input.baseline_rates,
                                    &input.baseline_sources, &report.baseline_version);
        !s.ok())
      return Fail("canary", s);
    steps.Done("the baseline server answered");
    if (absl::Status s = FromServer(candidate, "candidate", *pairs, &input.candidate_rates,
                                    &input.candidate_sources, &report.candidate_version);
        !s.ok())
      return Fail("canary", s);
    steps.Done("the candidate server answered");
  } else {
    report.baseline_name = base_snap;
    report.candidate_name = cand_snap;
    report.baseline_version = base_rates->version();
    report.candidate_version = cand_rates->version();
    absl::Status cand_scored;
    std::thread score_cand([&] {  // both sides at once
      cand_scored =
          FromSnapshot(*cand_rates, *pairs, &input.candidate_rates, &input.candidate_sources);
    });
    const absl::Status base_scored =
        FromSnapshot(*base_rates, *pairs, &input.baseline_rates, &input.baseline_sources);
    score_cand.join();
    if (!base_scored.ok()) return Fail("canary", base_scored);
    if (!cand_scored.ok()) return Fail("canary", cand_scored);
    steps.Done("scored the pairs on both snapshots");
  }
  input.negative = std::move(pairs->negative);
  CompareRates(input, thresholds, &report);
  steps.Done("compared the rates");
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << CanaryReportToJson(report).dump(2) << '\n';
  } else {
    std::cout << FormatCanaryTable(report);
  }
  return report.pass() ? kExitOk : kExitBeyondThresholds;
}

}  // namespace

int RunCanary() { return Run(); }

}  // namespace graphsieve
