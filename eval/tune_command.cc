#include "eval/tune_command.h"

#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/io/output_file.h"
#include "eval/unbiased.h"
#include "eval/verdict.h"
#include "nlohmann/json.hpp"

namespace graphsieve::eval {

absl::Status RunTuneCommand(const TuneCommand& c, int* exit_code) {
  auto say = [&c](const std::string& line) {
    if (c.tune.experiment.progress) std::cerr << "tune: " << line << std::endl;
  };
  ImpressionLog log;
  if (absl::Status s = ReadImpressionLog(c.input, c.reader, &log); !s.ok()) return s;
  std::vector<int64_t> timestamps;
  std::string mode = absl::StrFormat(
      "deployed mode (no --time-col: a seeded %.0f%% of the impressions builds the snapshot that "
      "rates the rest)",
      100 * (1 - c.tune.experiment.later_fraction));
  if (!c.time_col.empty()) {
    absl::StatusOr<std::vector<int64_t>> times = ReadTimeColumn(c.input, c.time_col, c.reader);
    if (!times.ok()) return times.status();
    if (times->size() != log.size()) {
      return absl::InvalidArgumentError(absl::StrCat(c.input, ": ", times->size(),
                                                     " times in column '", c.time_col, "' for ",
                                                     log.size(), " rows"));
    }
    timestamps = *std::move(times);
    mode = absl::StrFormat(
        "deployed mode (time column '%s': a snapshot of the earlier %.0f%% rates the later %.0f%%)",
        c.time_col, 100 * (1 - c.tune.experiment.later_fraction),
        100 * c.tune.experiment.later_fraction);
  }
  const uint64_t read = log.size();
  const uint64_t users_before = [&] {
    absl::flat_hash_set<uint64_t> u(log.user_ids.begin(), log.user_ids.end());
    return u.size();
  }();
  std::string subsample;
  if (const uint64_t kept =
          SubsampleUsers(c.tune.max_instances, c.tune.experiment.first_seed, &log, &timestamps);
      kept > 0) {
    subsample = absl::StrFormat(
        "**Subsampled**: %d of the log's %d users (a seeded draw), %d of its %d impressions "
        "(--max_instances %d).",
        kept, users_before, log.size(), read, c.tune.max_instances);
    say(subsample);
  }
  absl::StatusOr<UnbiasedTest> unbiased;
  if (!c.test_path.empty()) {
    ImpressionLog test_log;
    if (absl::Status s = ReadImpressionLog(c.test_path, c.test_reader, &test_log); !s.ok()) {
      return s;
    }
    unbiased = MapUnbiasedTest(log, test_log, absl::StrCat("--test ", c.test_path));
    if (!unbiased.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          unbiased.status().message(), "; its users and items must be ones the --input log ",
          subsample.empty() ? "shows" : "shows (after the user subsample of --max_instances)"));
    }
  }
  TuneOptions t = c.tune;
  if (t.experiment.progress) {
    const int per_seed = 1 + static_cast<int>(TuneCandidates(t.kappas, t.with_pilot).size()) + 4;
    auto done = std::make_shared<int>(0);
    const int total = t.experiment.seeds * per_seed;
    t.experiment.progress = [done, total](const std::string& line) {
      std::cerr << "tune: [" << ++*done << "/~" << total << "] " << line << std::endl;
    };
  }
  absl::StatusOr<TuneReport> report =
      RunTune(log, timestamps, c.test_path.empty() ? nullptr : &unbiased->test, t, c.input, mode);
  if (!report.ok()) return report.status();
  report->instances = read;
  report->used_instances = log.size();
  report->users = users_before;
  report->subsample = subsample;
  if (!c.test_path.empty()) {
    report->test = absl::StrCat("randomly exposed impressions from --test ", c.test_path, " (",
                                unbiased->test.size(), " used; ", unbiased->dropped_unknown,
                                " of users or items absent from the log dropped)");
  } else {
    report->test = "the later period's held-out 10% (shares the log's exposure)";
  }
  const std::string json = FormatTuneJson(*report);
  const std::string digest = ReportDigest(json);
  const std::string date = absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone());
  const std::string dir = c.output_dir;
  const std::string flags = FormatFlagFile(*report, date, digest);
  // A JSON merge patch that puts the flag file into a ConfigMap's "rule.flags" key
  // (kubectl patch configmap NAME --type=merge --patch-file=...; deploy/k8s/tune-cronjob.yaml).
  const std::string patch = nlohmann::json{{"data", {{"rule.flags", flags}}}}.dump() + "\n";
  for (const auto& [name, text] : {std::pair<const char*, std::string>{"tune.json", json},
                                   {"tune.md", FormatTuneMarkdown(*report)},
                                   {"tune-curve.svg", FormatTuneSvg(*report)},
                                   {"rule.flags", flags},
                                   {"rule.flags.patch.json", patch}}) {
    const std::string path = absl::StrCat(dir, "/", name);
    absl::StatusOr<OutputFile> out = OutputFile::Resolve(path, "--output_dir");
    if (!out.ok()) return out.status();
    if (absl::Status s = out->WriteAll(text, "--output_dir"); !s.ok()) return s;
  }
  std::cout << FormatTuneMarkdown(*report);
  std::cout << absl::StrFormat(
      "\nwrote %s/rule.flags (graphsieve-build --flagfile=%s/rule.flags), "
      "tune.md, tune.json (digest %s), tune-curve.svg\n",
      dir, dir, digest);
  *exit_code = c.exit_zero_on_answer ? 0 : TuneExitCode(*report);
  return absl::OkStatus();
}

}  // namespace graphsieve::eval
