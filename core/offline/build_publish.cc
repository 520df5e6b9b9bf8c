// The build job's write and publish stages (docs/DESIGN.md §3,
// docs/SNAPSHOT.md): under the snapshot root's publish lock, <version>.tmp is
// written, CURRENT flips to it, retention retires old versions.
#include <xxhash.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/offline/build_stage.h"
#include "core/offline/build_stages.h"
#include "core/snapshot/file_util.h"
#include "core/snapshot/manifest.h"
#include "core/snapshot/snapshot_store.h"
#include "core/snapshot/snapshot_writer.h"

namespace graphsieve {
namespace build_internal {

absl::StatusOr<std::unique_ptr<SnapshotStore>> OpenStore(const std::string& root) {
  if (absl::Status s = SnapshotStore::CheckWritableRoot(root); !s.ok()) {
    return absl::Status(
        s.code(),
        absl::StrCat("--snapshot_root: ", s.message(), "; ",
                     s.code() == absl::StatusCode::kInvalidArgument
                         ? "name a directory for the published versions (created if missing)"
                         : "pass a directory this process may write, or fix its permissions "
                           "(--dry_run publishes nothing and needs none)"));
  }
  auto st = SnapshotStore::Create({root, /*create_if_missing=*/true});
  if (!st.ok()) {
    return absl::Status(st.status().code(),
                        absl::StrCat("--snapshot_root: ", st.status().message()));
  }
  return std::move(*st);
}

absl::StatusOr<std::unique_ptr<SnapshotStore>> OpenExistingStore(const std::string& root) {
  auto st = SnapshotStore::Create({root, /*create_if_missing=*/false});
  if (!st.ok()) {
    return absl::Status(st.status().code(),
                        absl::StrCat("--snapshot_root: ", st.status().message()));
  }
  return std::move(*st);
}

// Stage 6: writes <version>.tmp (the caller holds the publish lock).
absl::Status WriteStage(const BuildOptions& options, const BuildObserver& obs,
                        const SnapshotStore& store, const PairTable& pairs,
                        const PipelineResult& result, const snapshot::ManifestInfo& info,
                        BuildReport* report) {
  return LocalStage(obs, report, "write", [&] {
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
  return LocalStage(obs, report, "publish", [&] {
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
}  // namespace graphsieve
