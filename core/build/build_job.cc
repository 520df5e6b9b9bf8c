#include "core/build/build_job.h"

#include <sys/stat.h>

#include <algorithm>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/build/build_stage_timer.h"
#include "core/build/build_stages.h"
#include "core/serving/node_default.h"
#include "core/snapshot/file_util.h"
#include "core/snapshot/manifest.h"
#include "core/snapshot/snapshot_store.h"

namespace graphsieve {
namespace build_internal {

uint64_t FileSizeOrZero(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

// Digests the input files (size + XXH3-64, for the manifest) on a thread of
// its own while the logs are parsed. Join() before reading the results.
class InputDigester {
 public:
  explicit InputDigester(const std::vector<std::string>& files)
      : files_(files), infos_(files.size()), status_(files.size()), thread_([this] { Run(); }) {}
  ~InputDigester() { Join(); }
  void Join() {
    if (thread_.joinable()) thread_.join();
  }
  // REQUIRES: Join() was called. The first failed digest, naming the flag.
  absl::Status status() const {
    for (const absl::Status& s : status_) {
      if (!s.ok()) return absl::Status(s.code(), absl::StrCat("--input: ", s.message()));
    }
    return absl::OkStatus();
  }
  std::vector<snapshot::InputFileInfo>& infos() { return infos_; }

 private:
  void Run() {
    for (size_t k = 0; k < files_.size(); ++k) {
      auto d = snapshot::DigestFile(files_[k]);
      if (!d.ok()) {
        status_[k] = d.status();
        continue;
      }
      infos_[k] = {files_[k], d->size_bytes, d->xxh3};
    }
  }
  const std::vector<std::string>& files_;
  std::vector<snapshot::InputFileInfo> infos_;
  std::vector<absl::Status> status_;
  std::thread thread_;
};

void ReserveForInputsLeft(uint64_t disk_bytes_done, uint64_t disk_bytes_left, ImpressionLog* log) {
  if (disk_bytes_done == 0 || disk_bytes_left == 0 || log->size() == 0) return;
  const double rows_per_byte =
      static_cast<double>(log->size()) / static_cast<double>(disk_bytes_done);
  const size_t expect = log->size() + static_cast<size_t>(static_cast<double>(disk_bytes_left) *
                                                          rows_per_byte * 1.03);
  if (expect <= log->user_ids.capacity()) return;
  log->user_ids.reserve(expect);
  log->item_ids.reserve(expect);
  log->labels.reserve(expect);
  if (!log->pilot_scores.empty()) log->pilot_scores.reserve(expect);
}

// Parses every --input into `log` in order, reporting progress by bytes.
absl::Status ParseLogs(const BuildOptions& options, const BuildObserver& obs, ImpressionLog* log) {
  uint64_t total_bytes = 0;
  for (const std::string& f : options.inputs) total_bytes += FileSizeOrZero(f);
  uint64_t done_before = 0;
  for (const std::string& f : options.inputs) {
    LogReaderOptions ro = options.reader;
    ro.progress = [&](uint64_t bytes, uint64_t rows) {
      if (obs.progress && total_bytes > 0) {
        obs.progress("read", std::min(0.99, double(done_before + bytes) / total_bytes),
                     log->rows_read + rows);
      }
    };
    absl::Status s = ReadImpressionLog(f, ro, log);
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat("--input ", f, ": ", s.message()));
    done_before += FileSizeOrZero(f);
    if (done_before < total_bytes)
      ReserveForInputsLeft(done_before, total_bytes - done_before, log);
  }
  return absl::OkStatus();
}

// Stage 1: read the logs; digest the files in parallel.
absl::Status ReadLogsStage(const BuildOptions& options, const BuildObserver& obs,
                           BuildReport* report, ImpressionLog* log,
                           std::vector<snapshot::InputFileInfo>* inputs) {
  absl::Status s = TimedStage(obs, report, "read", [&] {
    InputDigester digester(options.inputs);
    absl::Status parsed = ParseLogs(options, obs, log);
    digester.Join();
    if (!parsed.ok()) return parsed;
    absl::Status digested = digester.status();
    if (!digested.ok()) return digested;
    for (const snapshot::InputFileInfo& in : digester.infos()) report->input_bytes += in.size_bytes;
    *inputs = std::move(digester.infos());
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  report->rows_read = log->rows_read;
  report->bad_rows_skipped = log->bad_rows_skipped;
  if (log->size() == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("gate non-empty failed: the input has no usable rows (", log->rows_read,
                     " rows read, ", log->bad_rows_skipped, " skipped)"));
  }
  return absl::OkStatus();
}

// Stage 2: the pair table; the per-instance columns are released after it.
absl::Status PairTableStage(const BuildOptions& options, const BuildObserver& obs,
                            BuildReport* report, ImpressionLog* log, PairTable* pairs) {
  absl::Status s = TimedStage(obs, report, "pair_table", [&] {
    auto p = BuildPairTable(*log, options.pipeline.threads);
    if (!p.ok()) return p.status();
    *pairs = std::move(*p);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  std::vector<uint64_t>().swap(log->user_ids);
  std::vector<uint64_t>().swap(log->item_ids);
  std::vector<uint8_t>().swap(log->labels);
  std::vector<float>().swap(log->pilot_scores);
  return absl::OkStatus();
}

void RecordPipelineResult(const PairTable& pairs, const PipelineResult& result,
                          BuildReport* report) {
  report->instances = pairs.total_instances;
  report->negative_instances = pairs.total_negatives;
  report->pairs = pairs.num_pairs();
  report->positive_pairs = result.positive_pairs;
  report->users = pairs.num_users();
  report->items = pairs.num_items();
  report->components = result.num_components;
  report->achieved_negative_mean_rate = result.achieved_negative_mean_rate;
  report->resistance_route = result.resistance_route;
  if (!result.uncertainty_converged || !result.score_converged) {
    report->warnings.push_back(absl::StrCat(
        "propagation stopped at --propagation_max_iterations (uncertainty ",
        result.uncertainty_iterations, ", score ", result.score_iterations, " iterations)"));
  }
}

// Stage 3: the MA-EC pipeline (docs/DESIGN.md §2).
absl::Status PipelineStage(const BuildOptions& options, const BuildObserver& obs,
                           const PairTable& pairs, BuildReport* report, PipelineResult* result) {
  absl::Status s = TimedStage(obs, report, "pipeline", [&] {
    PipelineOptions po = options.pipeline;
    po.progress = [&](const std::string& stage, double fraction) {
      if (obs.progress) obs.progress("pipeline: " + stage, fraction, 0);
    };
    auto r = RunPipeline(pairs, po);
    if (!r.ok()) return r.status();
    *result = std::move(*r);
    // Per-node counts and the positive-rate DEFAULT fit (core/serving/node_default.h).
    return AttachNodeDefault(pairs, NodeDefaultOptions(), result);
  });
  if (!s.ok()) return s;
  RecordPipelineResult(pairs, *result, report);
  return absl::OkStatus();
}

}  // namespace build_internal

using build_internal::GatesAndExportStage;
using build_internal::OpenStore;
using build_internal::PairTableStage;
using build_internal::PipelineStage;
using build_internal::ReadLogsStage;
using build_internal::WriteAndPublishStage;

absl::StatusOr<BuildReport> RunBuild(const BuildOptions& options, const BuildObserver& obs) {
  absl::Status s = options.Validate();
  if (!s.ok()) return s;
  BuildReport report;
  const absl::Time created = absl::Now();

  // The root first: a bad --snapshot_root fails before minutes of work.
  std::unique_ptr<SnapshotStore> store;
  if (!options.dry_run) {
    auto st = OpenStore(options.snapshot_root);
    if (!st.ok()) return st.status();
    store = std::move(*st);
  }
  ImpressionLog log;
  std::vector<snapshot::InputFileInfo> inputs;
  s = ReadLogsStage(options, obs, &report, &log, &inputs);
  if (!s.ok()) return s;
  PairTable pairs;
  s = PairTableStage(options, obs, &report, &log, &pairs);
  if (!s.ok()) return s;
  PipelineResult result;
  s = PipelineStage(options, obs, pairs, &report, &result);
  if (!s.ok()) return s;
  s = GatesAndExportStage(options, obs, pairs, result, log, &report);
  if (!s.ok()) return s;
  if (options.dry_run) return report;
  s = WriteAndPublishStage(options, obs, store.get(), created, pairs, result, log, inputs, &report,
                           /*before_publish=*/nullptr);
  if (!s.ok()) return s;
  return report;
}

}  // namespace graphsieve
