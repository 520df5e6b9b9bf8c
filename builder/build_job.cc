#include "builder/build_job.h"

#include <sys/stat.h>
#include <xxhash.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "builder/export_csv.h"
#include "core/snapshot/file_util.h"
#include "core/snapshot/manifest.h"
#include "core/snapshot/snapshot_store.h"
#include "core/snapshot/snapshot_writer.h"

namespace graphsieve {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Runs one stage with observer callbacks and records its wall time.
class StageTimer {
 public:
  StageTimer(const BuildObserver& obs, BuildReport* report, std::string name)
      : obs_(obs), report_(report), name_(std::move(name)), t0_(Clock::now()) {
    if (obs_.stage_started) obs_.stage_started(name_);
  }
  void Done() {
    const double s = Since(t0_);
    report_->timings.push_back({name_, s});
    if (obs_.stage_done) obs_.stage_done(name_, s);
  }

 private:
  const BuildObserver& obs_;
  BuildReport* report_;
  std::string name_;
  Clock::time_point t0_;
};

nlohmann::json ParametersJson(const BuildOptions& o) {
  const PipelineOptions& p = o.pipeline;
  const LogReaderOptions& r = o.reader;
  return {
      {"method", MethodName(p.method)},
      {"resistance", ResistanceMethodName(p.resistance)},
      {"alpha", p.alpha},
      {"floor", p.floor},
      {"product_floor", p.product_floor},
      {"rate_rule", RateRuleName(p.rate_rule)},
      {"kappa", p.kappa},
      {"pilot_kappa", p.PilotKappa()},
      {"product_kappa", p.product_kappa},
      {"gamma", p.gamma},
      {"uncertainty_propagation", p.uncertainty_propagation},
      {"score_propagation", p.score_propagation},
      {"symmetric_normalisation", p.symmetric_normalisation},
      {"correct_pilot", p.correct_pilot},
      {"propagation_tolerance", p.propagation_tolerance},
      {"propagation_max_iterations", p.propagation_max_iterations},
      {"sketch_dim", p.sketch_dim},
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
}

std::string Rfc3339(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

}  // namespace

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
  return {{"version", version},
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
          {"deleted_versions", deleted_versions},
          {"removed_temporaries", removed_temporaries},
          {"warnings", warnings}};
}

absl::StatusOr<BuildReport> RunBuild(const BuildOptions& options, const BuildObserver& obs) {
  absl::Status s = options.Validate();
  if (!s.ok()) return s;
  BuildReport report;
  const absl::Time created = absl::Now();

  // The root first: a bad --snapshot_root fails before minutes of work.
  std::unique_ptr<SnapshotStore> store;
  if (!options.dry_run) {
    auto st = SnapshotStore::Create({options.snapshot_root, /*create_if_missing=*/true});
    if (!st.ok())
      return absl::Status(st.status().code(),
                          absl::StrCat("--snapshot_root: ", st.status().message()));
    store = std::move(*st);
  }

  // 1. Read the logs; digest the files in parallel.
  std::vector<snapshot::InputFileInfo> inputs(options.inputs.size());
  std::vector<absl::Status> digest_status(options.inputs.size());
  std::thread digester([&] {
    for (size_t k = 0; k < options.inputs.size(); ++k) {
      auto d = snapshot::DigestFile(options.inputs[k]);
      if (!d.ok()) {
        digest_status[k] = d.status();
        continue;
      }
      inputs[k] = {options.inputs[k], d->size_bytes, d->xxh3};
    }
  });
  uint64_t total_bytes = 0;
  for (const std::string& f : options.inputs) {
    struct stat st;
    if (::stat(f.c_str(), &st) == 0) total_bytes += static_cast<uint64_t>(st.st_size);
  }
  ImpressionLog log;
  {
    StageTimer timer(obs, &report, "read");
    uint64_t done_before = 0;
    for (const std::string& f : options.inputs) {
      LogReaderOptions ro = options.reader;
      ro.progress = [&](uint64_t bytes, uint64_t rows) {
        if (obs.progress && total_bytes > 0) {
          obs.progress("read", std::min(0.99, double(done_before + bytes) / total_bytes),
                       log.rows_read + rows);
        }
      };
      s = ReadImpressionLog(f, ro, &log);
      if (!s.ok()) {
        digester.join();
        return absl::Status(s.code(), absl::StrCat("--input ", f, ": ", s.message()));
      }
      struct stat st;
      if (::stat(f.c_str(), &st) == 0) done_before += static_cast<uint64_t>(st.st_size);
    }
    digester.join();
    for (size_t k = 0; k < inputs.size(); ++k) {
      if (!digest_status[k].ok()) {
        return absl::Status(digest_status[k].code(),
                            absl::StrCat("--input: ", digest_status[k].message()));
      }
      report.input_bytes += inputs[k].size_bytes;
    }
    timer.Done();
  }
  report.rows_read = log.rows_read;
  report.bad_rows_skipped = log.bad_rows_skipped;
  if (log.size() == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("gate non-empty failed: the input has no usable rows (", log.rows_read,
                     " rows read, ", log.bad_rows_skipped, " skipped)"));
  }

  // 2. Pair table; the per-instance columns are no longer needed after it.
  PairTable pairs;
  {
    StageTimer timer(obs, &report, "pair_table");
    auto p = BuildPairTable(log, options.pipeline.threads);
    if (!p.ok()) return p.status();
    pairs = std::move(*p);
    timer.Done();
  }
  std::vector<uint64_t>().swap(log.user_ids);
  std::vector<uint64_t>().swap(log.item_ids);
  std::vector<uint8_t>().swap(log.labels);
  std::vector<float>().swap(log.pilot_scores);

  // 3. The pipeline.
  PipelineResult result;
  {
    StageTimer timer(obs, &report, "pipeline");
    PipelineOptions po = options.pipeline;
    po.progress = [&](const std::string& stage, double fraction) {
      if (obs.progress) obs.progress("pipeline: " + stage, fraction, 0);
    };
    auto r = RunPipeline(pairs, po);
    if (!r.ok()) return r.status();
    result = std::move(*r);
    timer.Done();
  }
  report.instances = pairs.total_instances;
  report.negative_instances = pairs.total_negatives;
  report.pairs = pairs.num_pairs();
  report.positive_pairs = result.positive_pairs;
  report.users = pairs.num_users();
  report.items = pairs.num_items();
  report.components = result.num_components;
  report.achieved_negative_mean_rate = result.achieved_negative_mean_rate;
  report.resistance_route = result.resistance_route;
  if (!result.uncertainty_converged || !result.score_converged) {
    report.warnings.push_back(absl::StrCat(
        "propagation stopped at --propagation_max_iterations (uncertainty ",
        result.uncertainty_iterations, ", score ", result.score_iterations, " iterations)"));
  }

  // 4. Gates.
  {
    StageTimer timer(obs, &report, "gates");
    s = CheckGates(pairs, result, options.pipeline.alpha, options.gate_tolerance);
    if (!s.ok()) return s;
    timer.Done();
  }

  // 5. Export.
  if (!options.export_csv.empty()) {
    StageTimer timer(obs, &report, "export");
    s = WriteExportCsv(options.export_csv, pairs, result, log.user_names, log.item_names);
    if (!s.ok()) return s;
    timer.Done();
  }
  if (options.dry_run) return report;

  // 6. Write <version>.tmp under the publish lock, then publish + retention.
  auto lock = store->AcquirePublishLock(options.lock_timeout_seconds);
  if (!lock.ok()) return lock.status();
  auto removed = store->RemoveStaleTemporaries(**lock);
  if (!removed.ok()) return removed.status();
  report.removed_temporaries = *removed;

  snapshot::ManifestInfo info;
  info.created_at = Rfc3339(created);
  info.inputs = inputs;
  info.input_digest = snapshot::InputDigest(inputs);
  info.parameters = ParametersJson(options);
  info.input_stats = {{"rows_read", log.rows_read},
                      {"bad_rows_skipped", log.bad_rows_skipped},
                      {"bytes_parsed", log.bytes_read}};
  const std::string content = info.input_digest + info.parameters.dump();
  info.version = store->NewVersionId(**lock, created, XXH3_64bits(content.data(), content.size()));
  info.timings = report.timings;
  {
    StageTimer timer(obs, &report, "write");
    SnapshotWriterOptions wo;
    wo.pairs_format = options.pairs_format;
    wo.threads = options.pipeline.threads;
    wo.progress = [&](const std::string& stage, double f) {
      if (obs.progress) obs.progress("write: " + stage, f, 0);
    };
    auto w = WriteSnapshotDir(store->TempDir(info.version), pairs, result, info, wo);
    if (!w.ok()) {
      (void)snapshot::RemoveTree(store->TempDir(info.version));
      return w.status();
    }
    report.db_bytes = w->db_bytes;
    report.db_bytes_per_pair = static_cast<double>(w->db_bytes) / pairs.num_pairs();
    timer.Done();
  }
  {
    StageTimer timer(obs, &report, "publish");
    s = store->Publish(**lock, info.version);
    if (!s.ok()) return s;
    report.version = info.version;
    report.snapshot_dir = store->VersionDir(info.version);
    report.published = true;
    auto deleted = store->ApplyRetention(**lock, options.keep_versions);
    if (!deleted.ok()) {
      report.warnings.push_back(absl::StrCat("retention: ", deleted.status().message()));
    } else {
      report.deleted_versions = *deleted;
    }
    timer.Done();
  }
  return report;
}

}  // namespace graphsieve
