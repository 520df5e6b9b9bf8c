#include "builder/build_job.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "builder/build_stages.h"
#include "builder/export_csv.h"
#include "core/serving/node_default.h"
#include "core/snapshot/file_util.h"
#include "core/snapshot/manifest.h"
#include "core/snapshot/snapshot_store.h"
#include "core/snapshot/snapshot_writer.h"

namespace graphsieve {
namespace build_internal {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double ProcessCpuSeconds() {
  struct rusage ru;
  ::getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
         1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

// Runs one stage with observer callbacks and records its wall and CPU time.
class StageTimer {
 public:
  StageTimer(const BuildObserver& obs, BuildReport* report, std::string name)
      : obs_(obs), report_(report), name_(std::move(name)), t0_(Clock::now()),
        cpu0_(ProcessCpuSeconds()) {
    if (obs_.stage_started) obs_.stage_started(name_);
  }
  void Done() {
    const double s = Since(t0_);
    report_->timings.push_back({name_, s});
    report_->stage_cpu.push_back({name_, ProcessCpuSeconds() - cpu0_});
    if (obs_.stage_done) obs_.stage_done(name_, s);
  }

 private:
  const BuildObserver& obs_;
  BuildReport* report_;
  std::string name_;
  Clock::time_point t0_;
  double cpu0_;
};

nlohmann::json ParametersJson(const BuildOptions& o) {
  const PipelineOptions& p = o.pipeline;
  const LogReaderOptions& r = o.reader;
  nlohmann::json params = {
      {"method", MethodName(p.method)},
      {"resistance", ResistanceMethodName(p.resistance)},
      {"alpha", p.alpha},
      {"floor", p.floor},
      {"product_floor", p.product_floor},
      {"rate_rule", RateRuleName(p.rate_rule)},
      {"kappa", p.kappa},
      {"score_power", p.score_power},
      {"pilot_kappa", p.PilotKappa()},
      {"product_kappa", p.product_kappa},
      {"gamma", p.gamma},
      {"uncertainty_propagation", p.uncertainty_propagation},
      {"score_propagation", p.score_propagation},
      {"symmetric_normalisation", p.symmetric_normalisation},
      {"correct_pilot", p.correct_pilot},
      {"propagation_tolerance", p.propagation_tolerance},
      {"propagation_max_iterations", p.propagation_max_iterations},
      // Floats per stored node row (what readers check the rows against);
      // sketch_columns is k (docs/SNAPSHOT.md).
      {"sketch_dim", p.NodeRowDim()},
      {"sketch_columns", p.sketch_dim},
      {"unseen_control_variate", p.unseen_control_variate},
      {"solver_tolerance", p.solver_tolerance},
      {"solver_max_iterations", p.solver_max_iterations},
      {"exact_max_nodes", p.exact_max_nodes},
      {"seed", p.seed},
      {"threads", p.threads},
      {"user_col", r.user_column},
      {"item_col", r.item_column},
      {"label_rule", r.label.ToString()},
      {"pilot_col", r.pilot_column},
      {"delimiter", r.delimiter == '\0' ? std::string("auto") : std::string(1, r.delimiter)},
      {"id_mode", r.id_mode == IdMode::kAuto      ? "auto"
                  : r.id_mode == IdMode::kInteger ? "int"
                                                  : "string"},
      {"max_bad_rows", r.max_bad_rows},
      {"pairs_table_format", snapshot::TableFormatName(o.pairs_format)},
  };
  if (o.partitions > 1) params["partitions"] = o.partitions;
  return params;
}

std::string Rfc3339(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

// Runs `stage` (returning absl::Status) between the observer's callbacks;
// its wall time is recorded only when it succeeds.
template <typename Fn>
absl::Status TimedStage(const BuildObserver& obs, BuildReport* report, const char* name,
                        Fn&& stage) {
  StageTimer timer(obs, report, name);
  absl::Status s = stage();
  if (s.ok()) timer.Done();
  return s;
}

absl::StatusOr<std::unique_ptr<SnapshotStore>> OpenStore(const std::string& root) {
  auto st = SnapshotStore::Create({root, /*create_if_missing=*/true});
  if (!st.ok()) {
    return absl::Status(st.status().code(),
                        absl::StrCat("--snapshot_root: ", st.status().message()));
  }
  return std::move(*st);
}

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
  const double rows_per_byte = static_cast<double>(log->size()) / static_cast<double>(disk_bytes_done);
  const size_t expect =
      log->size() + static_cast<size_t>(static_cast<double>(disk_bytes_left) * rows_per_byte * 1.03);
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
    if (done_before < total_bytes) ReserveForInputsLeft(done_before, total_bytes - done_before, log);
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

// Stages 4 and 5: the validation gates, then the optional per-pair CSV.
absl::Status GatesAndExportStage(const BuildOptions& options, const BuildObserver& obs,
                                 const PairTable& pairs, const PipelineResult& result,
                                 const ImpressionLog& log, BuildReport* report) {
  absl::Status s = TimedStage(obs, report, "gates", [&] {
    return CheckGates(pairs, result, options.pipeline.alpha, options.gate_tolerance);
  });
  if (!s.ok() || options.export_csv.empty()) return s;
  return TimedStage(obs, report, "export", [&] {
    return WriteExportCsv(options.export_csv, pairs, result, log.user_names, log.item_names);
  });
}

snapshot::ManifestInfo MakeManifestInfo(const BuildOptions& options, absl::Time created,
                                        const ImpressionLog& log,
                                        const std::vector<snapshot::InputFileInfo>& inputs) {
  snapshot::ManifestInfo info;
  info.created_at = Rfc3339(created);
  info.inputs = inputs;
  info.input_digest = snapshot::InputDigest(inputs);
  info.parameters = ParametersJson(options);
  info.input_stats = {{"rows_read", log.rows_read},
                      {"bad_rows_skipped", log.bad_rows_skipped},
                      {"bytes_parsed", log.bytes_read}};
  return info;
}

// Stage 6: writes <version>.tmp (the caller holds the publish lock).
absl::Status WriteStage(const BuildOptions& options, const BuildObserver& obs,
                        const SnapshotStore& store, const PairTable& pairs,
                        const PipelineResult& result, const snapshot::ManifestInfo& info,
                        BuildReport* report) {
  return TimedStage(obs, report, "write", [&] {
    SnapshotWriterOptions wo;
    wo.pairs_format = options.pairs_format;
    wo.threads = options.pipeline.threads;
    wo.progress = [&](const std::string& stage, double f) {
      if (obs.progress) obs.progress("write: " + stage, f, 0);
    };
    auto w = WriteVersionDir(store.TempDir(info.version), pairs, result, info, wo,
                             static_cast<uint32_t>(options.partitions));
    if (!w.ok()) {
      (void)snapshot::RemoveTree(store.TempDir(info.version));
      return w.status();
    }
    report->db_bytes = w->db_bytes;
    report->db_bytes_per_pair = static_cast<double>(w->db_bytes) / pairs.num_pairs();
    report->write_timings = {{"check", w->seconds_check},   {"sst", w->seconds_sst},
                             {"ingest", w->seconds_ingest}, {"index", w->seconds_index},
                             {"digest", w->seconds_digest}, {"fsync", w->seconds_fsync}};
    return absl::OkStatus();
  });
}

// Stage 7: CURRENT flips to the new version, then retention.
absl::Status PublishStage(const BuildOptions& options, const BuildObserver& obs,
                          const SnapshotStore& store, const PublishLock& lock,
                          const std::string& version, BuildReport* report) {
  return TimedStage(obs, report, "publish", [&] {
    absl::Status s = store.Publish(lock, version);
    if (!s.ok()) return s;
    report->version = version;
    report->snapshot_dir = store.VersionDir(version);
    report->published = true;
    auto deleted = store.ApplyRetention(lock, options.keep_versions);
    if (!deleted.ok()) {
      report->warnings.push_back(absl::StrCat("retention: ", deleted.status().message()));
    } else {
      report->deleted_versions = *deleted;
    }
    return absl::OkStatus();
  });
}

// Stages 6-7 under the root's publish lock: stale temporaries removed, the
// version id chosen, the directory written, published, old versions retired.
absl::Status WriteAndPublishStage(const BuildOptions& options, const BuildObserver& obs,
                                  SnapshotStore* store, absl::Time created, const PairTable& pairs,
                                  const PipelineResult& result, const ImpressionLog& log,
                                  const std::vector<snapshot::InputFileInfo>& inputs,
                                  BuildReport* report,
                                  const std::function<absl::Status()>& before_publish) {
  auto lock = store->AcquirePublishLock(options.lock_timeout_seconds);
  if (!lock.ok()) return lock.status();
  auto removed = store->RemoveStaleTemporaries(**lock);
  if (!removed.ok()) return removed.status();
  report->removed_temporaries = *removed;

  snapshot::ManifestInfo info = MakeManifestInfo(options, created, log, inputs);
  const std::string content = info.input_digest + info.parameters.dump();
  info.version = store->NewVersionId(**lock, created, XXH3_64bits(content.data(), content.size()));
  info.timings = report->timings;
  absl::Status s = WriteStage(options, obs, *store, pairs, result, info, report);
  if (!s.ok()) return s;
  if (before_publish) {
    s = before_publish();
    if (!s.ok()) {
      (void)snapshot::RemoveTree(store->TempDir(info.version));
      return s;
    }
  }
  return PublishStage(options, obs, *store, **lock, info.version, report);
}

}  // namespace build_internal

using build_internal::GatesAndExportStage;
using build_internal::OpenStore;
using build_internal::PairTableStage;
using build_internal::PipelineStage;
using build_internal::ReadLogsStage;
using build_internal::WriteAndPublishStage;

absl::Status BuildOptions::Validate() const {
  auto bad = [](std::string msg) { return absl::InvalidArgumentError(std::move(msg)); };
  if (inputs.empty()) return bad("--input: no input file given");
  for (const std::string& f : inputs) {
    if (f.empty()) return bad("--input: empty file name in the list");
  }
  const PipelineOptions& p = pipeline;
  if (!(p.alpha > 0.0 && p.alpha <= 1.0)) {
    return bad(absl::StrCat("--alpha must be in (0, 1], got ", p.alpha));
  }
  if (p.rate_rule == RateRule::kFloor && !(p.floor > 0.0 && p.floor < p.alpha)) {
    return bad(absl::StrCat("--floor must be in (0, --alpha) = (0, ", p.alpha, "), got ", p.floor));
  }
  if (p.rate_rule == RateRule::kMixture && !(p.kappa > 0.0 && p.kappa <= 1e6)) {
    return bad(absl::StrCat("--kappa must be in (0, 1e6], got ", p.kappa));
  }
  if (!(p.gamma >= 0.0 && p.gamma < 1.0)) {
    return bad(absl::StrCat("--gamma must be in [0, 1), got ", p.gamma));
  }
  if (p.sketch_dim < 1 || p.sketch_dim > 4096) {
    return bad(absl::StrCat("--sketch_dim must be in [1, 4096], got ", p.sketch_dim));
  }
  if (p.threads < 1 || p.threads > 256) {
    return bad(absl::StrCat("--threads must be in [1, 256], got ", p.threads));
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
  absl::Status s = p.Validate();
  if (!s.ok()) return bad(absl::StrCat("pipeline options: ", s.message()));
  s = reader.Validate();
  if (!s.ok()) return bad(absl::StrCat("reader options: ", s.message()));
  return absl::OkStatus();
}

absl::Status CheckGates(const PairTable& pairs, const PipelineResult& result, double alpha,
                        double tolerance) {
  const size_t n = pairs.num_pairs();
  if (n == 0 || pairs.total_instances == 0) {
    return absl::FailedPreconditionError("gate non-empty failed: the log has no pairs");
  }
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
  if (pairs.total_negatives == 0) {
    return absl::FailedPreconditionError(
        "gate negative-mean failed: the log has no negative instances (nothing to subsample)");
  }
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += static_cast<double>(pairs.negatives[i]) * result.rate[i];
  const double mean = sum / static_cast<double>(pairs.total_negatives);
  if (!(std::fabs(mean - alpha) <= tolerance)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "gate negative-mean failed: mean rate over %d negative instances is %.9g, --alpha is "
        "%.9g (off by %.3g, allowed %.3g)",
        pairs.total_negatives, mean, alpha, std::fabs(mean - alpha), tolerance));
  }
  return absl::OkStatus();
}

nlohmann::json BuildReport::ToJson() const {
  nlohmann::json t = nlohmann::json::object();
  for (const StageTiming& s : timings) t[s.stage] = s.seconds;
  nlohmann::json c = nlohmann::json::object();
  for (const StageTiming& s : stage_cpu) c[s.stage] = s.seconds;
  nlohmann::json w = nlohmann::json::object();
  for (const StageTiming& s : write_timings) w[s.stage] = s.seconds;
  nlohmann::json j = {{"version", version},
          {"snapshot_dir", snapshot_dir},
          {"published", published},
          {"instances", instances},
          {"negative_instances", negative_instances},
          {"pairs", pairs},
          {"positive_pairs", positive_pairs},
          {"users", users},
          {"items", items},
          {"components", components},
          {"rows_read", rows_read},
          {"bad_rows_skipped", bad_rows_skipped},
          {"input_bytes", input_bytes},
          {"achieved_negative_mean_rate", achieved_negative_mean_rate},
          {"resistance_route", resistance_route},
          {"db_bytes", db_bytes},
          {"db_bytes_per_pair", db_bytes_per_pair},
          {"stage_seconds", t},
          {"stage_cpu_seconds", c},
          {"write_seconds", w},
          {"deleted_versions", deleted_versions},
          {"removed_temporaries", removed_temporaries},
          {"warnings", warnings}};
  if (!ranks.is_null()) j["ranks"] = ranks;
  return j;
}

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
