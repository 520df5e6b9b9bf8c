// WriteSnapshotDir and WriteVersionDir (snapshot_writer.h): check the inputs,
// then run the stages of snapshot_writer_internal.h (the SST files and their
// ingestion in snapshot_writer_sst.cc; index.gsi and the manifest in
// snapshot_writer_manifest.cc).
#include "core/snapshot/snapshot_writer.h"

#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>

#include "absl/strings/str_cat.h"
#include "core/snapshot/file_util.h"
#include "core/snapshot/partition_split.h"
#include "core/snapshot/snapshot_store.h"
#include "core/snapshot/snapshot_writer_internal.h"

namespace graphsieve {
namespace {

using snapshot_internal::IngestIntoFreshDb;
using snapshot_internal::Report;
using snapshot_internal::SecondsSince;
using snapshot_internal::StagedFiles;
using snapshot_internal::WriteIndexFile;
using snapshot_internal::WriteManifestAndSync;
using snapshot_internal::WriteStagedFiles;

absl::Status CheckInputs(const PairTable& pairs, const PipelineResult& result) {
  const size_t n = pairs.num_pairs();
  auto mismatch = [&](const char* field, size_t got, size_t want) {
    return absl::InvalidArgumentError(
        absl::StrCat("snapshot writer: ", field, " has ", got, " entries, expected ", want));
  };
  if (pairs.pair_item.size() != n) return mismatch("pairs.pair_item", pairs.pair_item.size(), n);
  if (result.rate.size() != n) return mismatch("result.rate", result.rate.size(), n);
  const size_t nodes = pairs.num_users() + pairs.num_items();
  const NodeTable& t = result.nodes;
  if (t.ids.size() != nodes) return mismatch("result.nodes.ids", t.ids.size(), nodes);
  if (t.is_item.size() != nodes) return mismatch("result.nodes.is_item", t.is_item.size(), nodes);
  if (t.records.size() != nodes) return mismatch("result.nodes.records", t.records.size(), nodes);
  if (t.sketch_dim < 0) return absl::InvalidArgumentError("snapshot writer: negative sketch_dim");
  if (t.sketch.size() != nodes * static_cast<size_t>(t.sketch_dim)) {
    return mismatch("result.nodes.sketch", t.sketch.size(), nodes * t.sketch_dim);
  }
  if (result.model.sketch_dim != t.sketch_dim) {
    return absl::InvalidArgumentError(absl::StrCat("snapshot writer: model.sketch_dim ",
                                                   result.model.sketch_dim, " != nodes.sketch_dim ",
                                                   t.sketch_dim));
  }
  for (size_t i = 0; i < n; ++i) {
    if (pairs.pair_user[i] >= pairs.num_users() || pairs.pair_item[i] >= pairs.num_items()) {
      return absl::InvalidArgumentError(
          absl::StrCat("snapshot writer: pair ", i, " has a node index out of range"));
    }
    if (i > 0) {
      uint64_t pu = pairs.user_ids[pairs.pair_user[i - 1]], cu = pairs.user_ids[pairs.pair_user[i]];
      uint64_t pi = pairs.item_ids[pairs.pair_item[i - 1]], ci = pairs.item_ids[pairs.pair_item[i]];
      if (!(pu < cu || (pu == cu && pi < ci))) {
        return absl::InvalidArgumentError(absl::StrCat(
            "snapshot writer: pair ", i, " (", cu, ",", ci, ") is not after (", pu, ",", pi,
            "): pairs must be sorted by (user_id, item_id) without duplicates"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status SnapshotWriterOptions::Validate() const {
  if (num_partitions < 1 || partition >= num_partitions) {
    return absl::InvalidArgumentError(absl::StrCat("partition ", partition, " of ", num_partitions,
                                                   ": need 0 <= partition < num_partitions"));
  }
  if (threads < 1 || threads > 256) {
    return absl::InvalidArgumentError(absl::StrCat("threads must be in [1, 256], got ", threads));
  }
  if (pairs_per_sst_file < 1) return absl::InvalidArgumentError("pairs_per_sst_file must be >= 1");
  return absl::OkStatus();
}

absl::StatusOr<SnapshotWriteStats> WriteSnapshotDir(const std::string& dir, const PairTable& pairs,
                                                    const PipelineResult& result,
                                                    const snapshot::ManifestInfo& info,
                                                    const SnapshotWriterOptions& options) {
  absl::Status s = options.Validate();
  if (!s.ok()) return s;
  auto t0 = std::chrono::steady_clock::now();
  s = CheckInputs(pairs, result);
  if (!s.ok()) return s;
  SnapshotWriteStats stats;
  stats.seconds_check = SecondsSince(t0);
  if (pairs.num_pairs() == 0 && !options.allow_no_pairs) {
    return absl::InvalidArgumentError("snapshot writer: no pairs");
  }
  if (::mkdir(dir.c_str(), 0755) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create snapshot directory ", dir, ": ", std::strerror(errno)));
  }
  const std::string staging = absl::StrCat(dir, "/staging");
  if (::mkdir(staging.c_str(), 0755) != 0) {
    return absl::InternalError(absl::StrCat("mkdir ", staging, ": ", std::strerror(errno)));
  }
  // The serving index (one thread) is written while the other threads write
  // the pairs' SST files; seconds_index overlaps seconds_sst.
  StagedFiles staged;
  snapshot::FileDigest index_digest;
  std::function<absl::Status()> index_task;
  if (options.write_index) {
    index_task = [&] { return WriteIndexFile(dir, pairs, result, options, &stats, &index_digest); };
  }
  t0 = std::chrono::steady_clock::now();
  s = WriteStagedFiles(staging, pairs, result, info, options, index_task, &staged);
  if (!s.ok()) return s;
  stats.seconds_sst = SecondsSince(t0);

  t0 = std::chrono::steady_clock::now();
  s = IngestIntoFreshDb(absl::StrCat(dir, "/", snapshot::kDbDir), staged, options);
  if (!s.ok()) return s;
  s = snapshot::RemoveTree(staging);
  if (!s.ok()) return s;
  stats.seconds_ingest = SecondsSince(t0);

  t0 = std::chrono::steady_clock::now();
  s = WriteManifestAndSync(dir, pairs, result, info, options, index_digest, &stats);
  if (!s.ok()) return s;
  stats.seconds_checksum = SecondsSince(t0);
  Report(options, "checksum", 1.0);
  return stats;
}

absl::StatusOr<SnapshotWriteStats> WriteVersionDir(const std::string& dir, const PairTable& pairs,
                                                   const PipelineResult& result,
                                                   const snapshot::ManifestInfo& info,
                                                   const SnapshotWriterOptions& options,
                                                   uint32_t num_partitions) {
  if (num_partitions < 1 || num_partitions > 4096) {
    return absl::InvalidArgumentError(
        absl::StrCat("partitions must be in [1, 4096], got ", num_partitions));
  }
  SnapshotWriterOptions part_options = options;
  part_options.partition = 0;
  part_options.num_partitions = 1;
  if (num_partitions == 1) return WriteSnapshotDir(dir, pairs, result, info, part_options);
  if (::mkdir(dir.c_str(), 0755) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create snapshot directory ", dir, ": ", std::strerror(errno)));
  }
  SnapshotWriteStats total;
  for (uint32_t p = 0; p < num_partitions; ++p) {
    PartSlice slice = SlicePartition(pairs, result, p, num_partitions);
    if (slice.pairs.num_pairs() == 0 && !options.allow_no_pairs) {
      return absl::InvalidArgumentError(absl::StrCat("partition ", p, " of ", num_partitions,
                                                     " holds no pairs (", pairs.num_users(),
                                                     " users in all): use fewer partitions"));
    }
    part_options.partition = p;
    part_options.num_partitions = num_partitions;
    absl::StatusOr<SnapshotWriteStats> w =
        WriteSnapshotDir(absl::StrCat(dir, "/", SnapshotStore::PartDirName(p)), slice.pairs,
                         slice.result, info, part_options);
    if (!w.ok()) return w.status();
    total.db_bytes += w->db_bytes;
    total.pairs_sst_bytes += w->pairs_sst_bytes;
    total.manifest_bytes += w->manifest_bytes;
    total.files += w->files;
    total.seconds_check += w->seconds_check;
    total.seconds_sst += w->seconds_sst;
    total.seconds_digest += w->seconds_digest;
    total.seconds_fsync += w->seconds_fsync;
    total.seconds_ingest += w->seconds_ingest;
    total.seconds_checksum += w->seconds_checksum;
    total.seconds_index += w->seconds_index;
    total.index_bytes += w->index_bytes;
  }
  absl::Status s = snapshot::FsyncTree(dir);
  if (!s.ok()) return s;
  return total;
}

}  // namespace graphsieve
