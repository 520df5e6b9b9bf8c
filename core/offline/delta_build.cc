// The delta build's driver (delta_build.h): base checks, read, records,
// write and publish through the full build's stages.
#include "core/offline/delta_build.h"

#include <sys/stat.h>
#include <xxhash.h>

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/maec/pair_table.h"
#include "core/offline/build_pilot.h"
#include "core/offline/build_stage.h"
#include "core/offline/build_stages.h"
#include "core/offline/delta_records.h"
#include "core/snapshot/file_util.h"
#include "core/snapshot/partitioned_snapshot_reader.h"
#include "core/snapshot/snapshot_reader.h"
#include "core/snapshot/snapshot_store.h"
#include "core/snapshot/snapshot_writer.h"
#include "core/snapshot/version_opener.h"

namespace graphsieve {
namespace {

using build_internal::LocalStage;

// The result-affecting parameters a delta must share with its base, in the
// order they are compared: the key in the manifest's parameters and the
// graphsieve-build flag that sets it. The seed is among them: a server takes
// the keep-decision seed from the version it serves (the delta's manifest), so
// another seed would change every base pair's keep decision.
using MustMatch = DeltaParameter;
// resistance, solver_* and propagation_* do not change what a delta computes
// (its touched nodes' rows are extended from the base's by --delta_sweeps
// Jacobi sweeps, its rates use the base's model), but the manifest records
// them as the version's parameters: a delta with other values would misstate
// how its rates were made, so they must match too, like every other flag of
// a delta that it does not apply itself.
constexpr MustMatch kMustMatch[] = {{"method", "method"},
                                    {"resistance", "resistance"},
                                    {"solver_tolerance", "solver_tolerance"},
                                    {"solver_max_iterations", "solver_max_iterations"},
                                    {"propagation_tolerance", "propagation_tolerance"},
                                    {"propagation_max_iterations", "propagation_max_iterations"},
                                    {"alpha", "alpha"},
                                    {"floor", "floor"},
                                    {"product_floor", "product_floor"},
                                    {"rate_rule", "rate_rule"},
                                    {"kappa", "kappa"},
                                    {"score_power", "score_power"},
                                    {"exposure_power", "exposure_power"},
                                    {"pilot_kappa", "pilot_kappa"},
                                    {"product_kappa", "product_kappa"},
                                    {"gamma", "gamma"},
                                    {"uncertainty_propagation", "uncertainty_propagation"},
                                    {"score_propagation", "score_propagation"},
                                    {"symmetric_normalisation", "symmetric"},
                                    {"correct_pilot", "correct_pilot"},
                                    // k (--sketch_dim), then the stored row width
                                    // (k, or k + 2 with the control variate).
                                    {"sketch_columns", "sketch_dim"},
                                    {"unseen_control_variate", "unseen_control_variate"},
                                    {"sketch_dim", nullptr},
                                    {"seed", "seed"},
                                    {"user_col", "user_col"},
                                    {"item_col", "item_col"},
                                    {"label_rule", "label"},
                                    {"pilot_col", "pilot_col"},
                                    {"pilot_dim", "pilot_dim"},
                                    {"pilot_epochs", "pilot_epochs"},
                                    {"pilot_folds", "pilot_folds"},
                                    {"pilot_learning_rate", "pilot_learning_rate"},
                                    {"pilot_l2", "pilot_l2"},
                                    {"pilot_negative_rate", "pilot_negative_rate"},
                                    {"id_mode", "id_mode"}};

// `v` as a command-line value: numbers and booleans as JSON writes them,
// text as is (quoted when it holds a space or is empty).
std::string FlagValue(const nlohmann::json& v) {
  if (!v.is_string()) return v.dump();
  const std::string text = FlagValueText(v);
  return text.empty() || text.find(' ') != std::string::npos ? absl::StrCat("'", text, "'") : text;
}

// A full version the delta is built over and its manifest.
struct FullBase {
  std::string version;
  ManifestSummary manifest;
};

std::string Rfc3339(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

// CURRENT, or a version id; a delta resolves to its base (deltas are
// cumulative over one full version).
absl::StatusOr<std::string> ResolveBase(const SnapshotStore& store, const std::string& base) {
  std::string v = base;
  if (base == "CURRENT") {
    absl::StatusOr<std::string> cur = store.ReadCurrent();
    if (!cur.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("--delta_of=CURRENT: ", cur.status().message()));
    }
    v = *cur;
  }
  absl::StatusOr<std::string> dir = store.PublishedVersionDir(v);
  if (!dir.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("--delta_of: base version '", v, "' is not published under ", store.root(),
                     " (", dir.status().message(), "); run a full build first"));
  }
  return v;
}

// The base's manifest parameters against this run's: the first mismatch
// named by its flag, with both values and the value to pass.
absl::Status CheckParameters(const std::string& base, const nlohmann::json& base_manifest,
                             const nlohmann::json& mine) {
  const nlohmann::json& theirs = base_manifest.at("parameters");
  for (const MustMatch& m : kMustMatch) {
    const char* key = m.key;
    if (!mine.contains(key)) continue;
    // Recorded since the exposure discount; a base without it was built with none.
    if (std::string_view(key) == "exposure_power" && !theirs.contains(key)) {
      if (mine.at(key) == 0.0) continue;
      return absl::FailedPreconditionError(
          absl::StrCat("--delta_of: base version ", base,
                       " was built without an exposure discount, this delta has --exposure_power=",
                       FlagValue(mine.at(key)),
                       "; pass --exposure_power=0 (a delta must use its base's ", "parameters)"));
    }
    if (!theirs.contains(key)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "--delta_of: base version ", base, " records no parameter '", key, "'; rebuild it"));
    }
    if (theirs.at(key) != mine.at(key) && m.flag == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("--delta_of: base version ", base, " was built with ", key, "=",
                       theirs.at(key).dump(), ", this delta has ", key, "=", mine.at(key).dump(),
                       "; a delta must use its base's parameters (rebuild the base)"));
    }
    if (theirs.at(key) != mine.at(key)) {
      const std::string flag = absl::StrCat("--", m.flag, "=");
      return absl::FailedPreconditionError(absl::StrCat(
          "--delta_of: base version ", base, " was built with ", flag, FlagValue(theirs.at(key)),
          ", this delta has ", flag, FlagValue(mine.at(key)), "; pass ", flag,
          FlagValue(theirs.at(key)), " (a delta must use its base's parameters)"));
    }
  }
  return absl::OkStatus();
}

// `base` (CURRENT or a version id) resolved to the full version a delta is
// built over (a delta resolves to its base) and its manifest.
absl::StatusOr<FullBase> ResolveFullBase(const SnapshotStore& store, const std::string& base) {
  absl::StatusOr<std::string> v = ResolveBase(store, base);
  if (!v.ok()) return v.status();
  for (int hop = 0; hop < 2; ++hop) {
    absl::StatusOr<ManifestSummary> m = ReadPublishedManifest(store, *v);
    if (!m.ok()) {
      return absl::Status(m.status().code(), absl::StrCat("--delta_of: base version ", *v, ": ",
                                                          m.status().message()));
    }
    if (!m->base_version.empty()) {  // a delta: its base
      if (hop == 1) break;
      v = ResolveBase(store, m->base_version);
      if (!v.ok()) return v.status();
      continue;
    }
    return FullBase{*v, *std::move(m)};
  }
  return absl::FailedPreconditionError(
      absl::StrCat("--delta_of: version ", *v, " is a delta over a delta"));
}

// The base (a delta resolves to its base), checked against this run: a full
// version, the same result-affecting parameters, and the part count
// --partitions names (0: the base's).
absl::StatusOr<std::string> CheckBase(const DeltaBuildOptions& options, const SnapshotStore& store,
                                      uint32_t* parts) {
  absl::StatusOr<FullBase> b = ResolveFullBase(store, options.base);
  if (!b.ok()) return b.status();
  const ManifestSummary& m = b->manifest;
  if (options.partitions != 0 && static_cast<uint32_t>(options.partitions) != m.num_partitions) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--partitions=", options.partitions, ": base version ", b->version, " is written in ",
        m.num_partitions, m.num_partitions == 1 ? " part" : " parts",
        "; a delta is written in its base's parts (omit --partitions)"));
  }
  const nlohmann::json j = nlohmann::json::parse(m.json);
  absl::Status s = CheckParameters(b->version, j, build_internal::ParametersJson(options.build));
  if (!s.ok()) return s;
  *parts = m.num_partitions;
  return b->version;
}

// Opens the checked base as one reader: of a partitioned base every part, a
// user's lookups routed to its part (VersionOpener::OpenAllParts). The build
// reads one version once: its own opener.
absl::StatusOr<std::shared_ptr<const SnapshotReader>> OpenBase(const DeltaBuildOptions& options,
                                                               const SnapshotStore& store,
                                                               std::string* base, uint32_t* parts) {
  absl::StatusOr<std::string> v = CheckBase(options, store, parts);
  if (!v.ok()) return v.status();
  SnapshotReaderOptions ro;
  ro.lookup = LookupMode::kMemory;
  auto reader = VersionOpener().OpenAllParts(store, *v, ro);
  if (!reader.ok()) {
    return absl::Status(reader.status().code(), absl::StrCat("--delta_of: base version ", *v, ": ",
                                                             reader.status().message()));
  }
  *base = *v;
  return reader;
}

absl::Status ReadInputs(const DeltaBuildOptions& options, ImpressionLog* log,
                        std::vector<snapshot::InputFileInfo>* inputs, absl::Time* newest) {
  *newest = absl::InfinitePast();
  for (const std::string& f : options.build.inputs) {
    LogReaderOptions ro = options.build.reader;
    // --max_bad_rows is a budget for the whole log, not per file.
    if (ro.max_bad_rows > 0) {
      ro.max_bad_rows -= std::min<int64_t>(ro.max_bad_rows, log->bad_rows_skipped);
    }
    absl::Status s = ReadImpressionLog(f, ro, log);
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat("--input ", f, ": ", s.message()));
    auto d = snapshot::DigestFile(f);
    if (!d.ok())
      return absl::Status(d.status().code(), absl::StrCat("--input: ", d.status().message()));
    inputs->push_back({f, d->size_bytes, d->xxh3});
    struct stat st;
    if (::stat(f.c_str(), &st) == 0) {
      *newest = std::max(*newest, absl::TimeFromTimespec(st.st_mtim));
    }
  }
  if (log->size() == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("gate non-empty failed: the delta's input has no usable rows (",
                     log->rows_read, " rows read)"));
  }
  return absl::OkStatus();
}

absl::Status WriteAndPublish(const DeltaBuildOptions& options, const BuildObserver& obs,
                             const SnapshotStore& store, snapshot::ManifestInfo info,
                             const DeltaRecords& d, BuildReport* br, DeltaReport* report) {
  auto lock = store.AcquirePublishLock(options.build.lock_timeout_seconds);
  if (!lock.ok()) return lock.status();
  auto removed = store.RemoveStaleTemporaries(**lock);
  if (!removed.ok()) return removed.status();
  const std::string content = info.input_digest + info.parameters.dump() + info.delta.dump();
  info.version =
      store.NewVersionId(**lock, absl::Now(), XXH3_64bits(content.data(), content.size()));
  info.timings = br->timings;
  absl::Status s = LocalStage(obs, br, "write", [&] {
    SnapshotWriterOptions wo;
    wo.pairs_format = options.build.pairs_format;
    wo.threads = options.build.pipeline.threads;
    // A part whose users logged nothing new still holds every touched item's record.
    wo.allow_no_pairs = true;
    auto w = WriteVersionDir(store.TempDir(info.version), d.pairs, d.result, info, wo,
                             report->partitions);
    if (!w.ok()) {
      (void)snapshot::RemoveTree(store.TempDir(info.version));
      return w.status();
    }
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  s = build_internal::PublishStage(options.build, obs, store, **lock, info.version, br);
  if (!s.ok()) return s;
  report->version = info.version;
  report->published = true;
  report->deleted_versions = br->deleted_versions;
  return absl::OkStatus();
}

}  // namespace

absl::Status DeltaBuildOptions::Validate() const {
  if (base.empty())
    return absl::InvalidArgumentError("--delta_of: empty (a version id or CURRENT)");
  if (base != "CURRENT" && !SnapshotStore::IsValidVersionId(base)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--delta_of: '", base, "' is neither CURRENT nor a version id"));
  }
  if (partitions < 0 || partitions > 4096) {
    return absl::InvalidArgumentError(
        absl::StrCat("--partitions must be in [1, 4096] (or 0: the base's), got ", partitions));
  }
  if (sweeps < 1)
    return absl::InvalidArgumentError(absl::StrCat("--delta_sweeps must be >= 1, got ", sweeps));
  if (build.snapshot_root.empty())
    return absl::InvalidArgumentError("--delta_of needs --snapshot_root");
  if (!build.export_csv.empty()) {
    return absl::InvalidArgumentError(
        "--export cannot be used with --delta_of: a delta stores only the pairs that changed "
        "since its base; export a full build instead (graphsieve-build --export without "
        "--delta_of), or read rates from the server (graphsieve rates)");
  }
  return build.Validate();
}

absl::Span<const DeltaParameter> DeltaMustMatchParameters() { return kMustMatch; }

std::string FlagValueText(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

absl::StatusOr<nlohmann::json> ReadDeltaBaseManifest(const std::string& snapshot_root,
                                                     const std::string& base) {
  auto store = build_internal::OpenExistingStore(snapshot_root);
  if (!store.ok()) return store.status();
  absl::StatusOr<FullBase> b = ResolveFullBase(**store, base);
  if (!b.ok()) return b.status();
  return nlohmann::json::parse(b->manifest.json);
}

absl::StatusOr<DeltaReport> RunDeltaBuild(const DeltaBuildOptions& options,
                                          const BuildObserver& obs) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  const absl::Time created = absl::Now();
  BuildReport br;
  DeltaReport report;
  std::unique_ptr<SnapshotStore> store;
  std::shared_ptr<const SnapshotReader> base;
  absl::Status s = LocalStage(obs, &br, "open", [&]() -> absl::Status {
    auto st = options.build.dry_run ? build_internal::OpenExistingStore(options.build.snapshot_root)
                                    : build_internal::OpenStore(options.build.snapshot_root);
    if (!st.ok()) return st.status();
    store = std::move(*st);
    auto b = OpenBase(options, *store, &report.base_version, &report.partitions);
    if (!b.ok()) return b.status();
    base = std::move(*b);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;

  ImpressionLog log;
  std::vector<snapshot::InputFileInfo> inputs;
  absl::Time newest;
  s = LocalStage(obs, &br, "read", [&] { return ReadInputs(options, &log, &inputs, &newest); });
  if (!s.ok()) return s;
  report.rows_read = log.rows_read;
  report.bad_rows_skipped = log.bad_rows_skipped;
  report.bad_row_examples = log.bad_row_messages;

  DeltaRecords d;
  s = LocalStage(obs, &br, "delta", [&]() -> absl::Status {
    auto fresh = BuildPairTable(log, options.build.pipeline.threads);
    if (!fresh.ok()) return fresh.status();
    const nlohmann::json params = nlohmann::json::parse(base->manifest().json).at("parameters");
    DeltaRecordOptions ro;
    ro.sweeps = options.sweeps;
    ro.sketch_columns = params.value("sketch_columns", 0);
    ro.control_variate = params.value("unseen_control_variate", false) &&
                         params.value("method", std::string()) == "maec";
    ro.pilot = build_internal::BuiltInPilotOptions(options.build);
    auto r = ComputeDeltaRecords(*base, *fresh, ro);
    if (!r.ok()) return r.status();
    d = std::move(*r);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  // The full build's rate-range gate over the delta's own pairs (the
  // negative-mean gate is the base's: a delta holds only what changed).
  s = LocalStage(obs, &br, "gates",
                 [&] { return build_internal::CheckRateRangeGate(d.pairs, d.result); });
  if (!s.ok()) return s;
  report.instances = d.pairs.total_instances;
  report.pairs = d.pairs.num_pairs();
  report.carried_pairs = d.carried_pairs;
  report.new_users = d.new_users;
  report.new_items = d.new_items;
  report.new_positive_edges = d.new_positive_edges;
  report.touched_nodes = d.result.nodes.ids.size();
  report.covers_through = Rfc3339(newest);
  if (options.build.dry_run) {  // computed and checked: nothing written, nothing published
    report.timings = br.timings;
    return report;
  }

  BuildOptions written = options.build;  // the parameters record the parts, as a full build's
  written.partitions = static_cast<int>(report.partitions);
  snapshot::ManifestInfo info = build_internal::MakeManifestInfo(written, created, log, inputs);
  info.parameters["delta_sweeps"] = options.sweeps;
  if (options.tune_from_base && options.build.tune_rule.empty()) {
    info.tune = nlohmann::json::parse(base->manifest().json).value("tune", nlohmann::json());
  }
  info.delta = {{"base_version", report.base_version},
                {"base_created_at", base->manifest().created_at},
                {"covers_from", base->manifest().created_at},
                {"covers_through", report.covers_through},
                {"time_source", "input file modification times"},
                {"new_users", d.new_users},
                {"new_items", d.new_items},
                {"new_positive_edges", d.new_positive_edges},
                {"carried_pairs", d.carried_pairs}};
  base.reset();  // the base's mapping is not needed for the write
  s = WriteAndPublish(options, obs, *store, std::move(info), d, &br, &report);
  if (!s.ok()) return s;
  report.timings = br.timings;
  return report;
}

nlohmann::json DeltaReport::ToJson() const {
  nlohmann::json t = nlohmann::json::object();
  for (const StageTiming& s : timings) t[s.stage] = s.seconds;
  return {{"version", version},
          {"base_version", base_version},
          {"published", published},
          {"rows_read", rows_read},
          {"bad_rows_skipped", bad_rows_skipped},
          {"bad_row_examples", bad_row_examples},
          {"instances", instances},
          {"pairs", pairs},
          {"carried_pairs", carried_pairs},
          {"partitions", partitions},
          {"new_users", new_users},
          {"new_items", new_items},
          {"new_positive_edges", new_positive_edges},
          {"touched_nodes", touched_nodes},
          {"covers_through", covers_through},
          {"stage_seconds", t},
          {"deleted_versions", deleted_versions}};
}

}  // namespace graphsieve
