#include "core/offline/dist_parts.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/io/partition.h"
#include "core/model/node_default_fit.h"
#include "core/offline/build_stage.h"
#include "core/offline/build_stages.h"
#include "core/snapshot/file_util.h"
#include "core/snapshot/partition_split.h"
#include "core/snapshot/snapshot_writer.h"
#include "nlohmann/json.hpp"
#include "xxhash.h"

namespace graphsieve {
namespace dist_internal {
namespace {

using build_internal::Stage;

// Per-node counts and the positive-rate DEFAULT fit (AttachNodeDefault of
// core/model/node_default_fit.h) over every rank's pairs: each rank counts its
// own pairs, the counts are all-reduced (a user's pairs are all on one rank,
// an item's are spread), then every rank fits the same model from the same
// records. The all-reduce runs whatever the local status, so no rank waits
// alone.
absl::Status AttachNodeDefaultOverRanks(Communicator& comm, const PairTable& pairs,
                                        PipelineResult* result) {
  NodeTable& nodes = result->nodes;
  absl::Status local = CountNodeImpressions(pairs, &nodes);
  double n = local.ok() ? static_cast<double>(nodes.records.size()) : -1.0;
  double n_min = n;
  comm.AllReduceMax(absl::MakeSpan(&n, 1));
  comm.AllReduceMin(absl::MakeSpan(&n_min, 1));
  if (local.ok() && n != n_min) {
    local = absl::InternalError("the ranks' node tables differ in size");
  }
  const size_t count = n == n_min && n > 0 ? static_cast<size_t>(n) : 0;
  std::vector<uint64_t> counts(2 * count, 0);
  for (size_t k = 0; k < count; ++k) {
    counts[2 * k] = nodes.records[k].positives;
    counts[2 * k + 1] = nodes.records[k].impressions;
  }
  comm.AllReduceSum(absl::MakeSpan(counts));
  absl::Status s = AgreeOnStatus(comm, local);
  if (!s.ok()) return s;
  constexpr uint64_t kMax = 0xffffffffu;
  for (size_t k = 0; k < count; ++k) {
    nodes.records[k].positives = static_cast<uint32_t>(std::min(counts[2 * k], kMax));
    nodes.records[k].impressions = static_cast<uint32_t>(std::min(counts[2 * k + 1], kMax));
  }
  return FitNodeDefault(nodes, NodeDefaultOptions(), &result->model);
}

// Rank 0's manifest information, as JSON for the other ranks.
std::string InfoToJson(const snapshot::ManifestInfo& info) {
  nlohmann::json inputs = nlohmann::json::array(), timings = nlohmann::json::array();
  for (const auto& in : info.inputs) inputs.push_back({in.path, in.size_bytes, in.xxh3});
  for (const auto& t : info.timings) timings.push_back({t.stage, t.seconds});
  return nlohmann::json{{"version", info.version},
                        {"created_at", info.created_at},
                        {"inputs", inputs},
                        {"input_digest", info.input_digest},
                        {"parameters", info.parameters},
                        {"input_stats", info.input_stats},
                        {"timings", timings},
                        {"tune", info.tune}}
      .dump();
}

snapshot::ManifestInfo InfoFromJson(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text);
  snapshot::ManifestInfo info;
  info.version = j.at("version").get<std::string>();
  info.created_at = j.at("created_at").get<std::string>();
  for (const auto& in : j.at("inputs")) {
    info.inputs.push_back(
        {in.at(0).get<std::string>(), in.at(1).get<uint64_t>(), in.at(2).get<uint64_t>()});
  }
  info.input_digest = j.at("input_digest").get<std::string>();
  info.parameters = j.at("parameters");
  info.input_stats = j.at("input_stats");
  info.tune = j.value("tune", nlohmann::json());
  for (const auto& t : j.at("timings")) {
    info.timings.push_back({t.at(0).get<std::string>(), t.at(1).get<double>()});
  }
  return info;
}

// Rank 0: under the publish lock, stale temporaries removed, the version id
// chosen and <version>.tmp created for every rank's parts.
absl::Status PrepareOnRoot(const BuildOptions& options, SnapshotStore* store, absl::Time created,
                           const ImpressionLog& names,
                           const std::vector<snapshot::InputFileInfo>& inputs, BuildReport* report,
                           std::unique_ptr<PublishLock>* lock, snapshot::ManifestInfo* info) {
  auto l = store->AcquirePublishLock(options.lock_timeout_seconds);
  if (!l.ok()) return l.status();
  *lock = std::move(*l);
  auto removed = store->RemoveStaleTemporaries(**lock);
  if (!removed.ok()) return removed.status();
  report->removed_temporaries = *removed;
  *info = build_internal::MakeManifestInfo(options, created, names, inputs);
  const std::string content = info->input_digest + info->parameters.dump();
  info->version = store->NewVersionId(**lock, created, XXH3_64bits(content.data(), content.size()));
  info->timings = report->timings;
  const std::string tmp = store->TempDir(info->version);
  if (::mkdir(tmp.c_str(), 0755) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create snapshot directory ", tmp, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

// SlicePartition's part, moved out of `pairs` and `result`: their per-pair
// columns are compacted in place to the part's pairs (the same order and
// values) and handed over, so the part is never held twice. The nodes and
// the version's constants come from SlicePartition over no pairs.
PartSlice TakePartition(PairTable* pairs, PipelineResult* result, uint32_t partition,
                        uint32_t num_partitions) {
  const size_t users = pairs->num_users();
  std::vector<uint32_t> new_index(users, UINT32_MAX);
  uint32_t part_users = 0;
  for (size_t u = 0; u < users; ++u) {
    if (PartitionOfUser(pairs->user_ids[u], num_partitions) == partition)
      new_index[u] = part_users++;
  }
  PairTable& t = *pairs;
  PipelineResult& r = *result;
  const size_t n = t.num_pairs();
  uint64_t instances = 0, negatives = 0;
  uint32_t positives = 0;
  size_t k = 0;
  auto keep = [&](auto& column, size_t from) {
    if (from < column.size()) column[k] = column[from];
  };
  for (size_t i = 0; i < n; ++i) {
    const uint32_t u = new_index[t.pair_user[i]];
    if (u == UINT32_MAX) continue;
    t.pair_user[k] = u;
    for (auto* c : {&t.pair_item, &t.instances, &t.negatives}) keep(*c, i);
    keep(t.label, i);
    keep(t.pilot_mean, i);
    for (auto* c : {&r.geff, &r.hardness, &r.uncertainty, &r.propagated_score, &r.score, &r.rate})
      keep(*c, i);
    instances += t.instances[k], negatives += t.negatives[k], positives += t.label[k] != 0;
    ++k;
  }
  auto cut = [&](auto& column) {
    if (!column.empty()) column.resize(k);
  };
  PartSlice out;
  PairTable& op = out.pairs;
  PipelineResult columns;  // the per-pair columns, set aside while the shell is sliced
  for (auto* c : {&t.pair_user, &t.pair_item, &t.instances, &t.negatives}) cut(*c);
  cut(t.label);
  cut(t.pilot_mean);
  for (auto* c : {&r.geff, &r.hardness, &r.uncertainty, &r.propagated_score, &r.score, &r.rate})
    cut(*c);
  columns.geff = std::move(r.geff), columns.hardness = std::move(r.hardness);
  columns.uncertainty = std::move(r.uncertainty);
  columns.propagated_score = std::move(r.propagated_score);
  columns.score = std::move(r.score), columns.rate = std::move(r.rate);
  r.geff.clear(), r.hardness.clear(), r.uncertainty.clear(), r.propagated_score.clear();
  r.score.clear(), r.rate.clear();
  PairTable shell;
  shell.user_ids = t.user_ids;
  shell.item_ids = t.item_ids;
  out = SlicePartition(shell, r, partition, num_partitions);
  op.pair_user = std::move(t.pair_user), op.pair_item = std::move(t.pair_item);
  op.label = std::move(t.label), op.instances = std::move(t.instances);
  op.negatives = std::move(t.negatives), op.pilot_mean = std::move(t.pilot_mean);
  op.total_instances = instances, op.total_negatives = negatives;
  PipelineResult& o = out.result;
  o.positive_pairs = positives;
  o.geff = std::move(columns.geff), o.hardness = std::move(columns.hardness);
  o.uncertainty = std::move(columns.uncertainty);
  o.propagated_score = std::move(columns.propagated_score);
  o.score = std::move(columns.score), o.rate = std::move(columns.rate);
  return out;
}

// This rank's parts p ≡ rank (mod N) into `tmp`/part-<p>/; the last one is
// moved out of `pairs` and `result` (TakePartition).
absl::Status WriteMyParts(const BuildOptions& options, const Communicator& comm,
                          const std::string& tmp, PairTable* pairs, PipelineResult* result,
                          const snapshot::ManifestInfo& info, uint64_t* db_bytes) {
  const uint32_t parts = static_cast<uint32_t>(options.partitions);
  SnapshotWriterOptions wo;
  wo.pairs_format = options.pairs_format;
  wo.threads = options.pipeline.threads;
  wo.num_partitions = parts;
  for (uint32_t p = static_cast<uint32_t>(comm.rank()); p < parts;
       p += static_cast<uint32_t>(comm.size())) {
    const uint32_t all_users = static_cast<uint32_t>(pairs->num_users());
    const bool last = p + static_cast<uint32_t>(comm.size()) >= parts;
    const PartSlice slice =
        last ? TakePartition(pairs, result, p, parts) : SlicePartition(*pairs, *result, p, parts);
    if (slice.pairs.num_pairs() == 0) {
      return absl::InvalidArgumentError(absl::StrCat("partition ", p, " of ", parts,
                                                     " holds no pairs (", all_users,
                                                     " users in all): use fewer partitions"));
    }
    wo.partition = p;
    auto w = WriteSnapshotDir(absl::StrCat(tmp, "/", SnapshotStore::PartDirName(p)), slice.pairs,
                              slice.result, info, wo);
    if (!w.ok()) return w.status();
    *db_bytes += w->db_bytes;
  }
  return absl::OkStatus();
}

}  // namespace

bool RanksWriteParts(const BuildOptions& options, const Communicator& comm) {
  return comm.size() > 1 && options.partitions > 1 && options.partitions % comm.size() == 0 &&
         options.export_csv.empty() && !options.dry_run;
}

absl::Status WritePartsOnEveryRank(const BuildOptions& options, const BuildObserver& obs,
                                   Communicator& comm, SnapshotStore* store, absl::Time created,
                                   PairTable* pairs, PipelineResult* result,
                                   const ImpressionLog& names,
                                   const std::vector<snapshot::InputFileInfo>& inputs,
                                   BuildReport* report) {
  const bool root = comm.rank() == 0;
  uint64_t totals[3] = {0, 0, 0};  // pairs, instances, negative instances over every rank
  absl::Status s = Stage(comm, obs, report, "gates", [&] {
    absl::Status attached = AttachNodeDefaultOverRanks(comm, *pairs, result);
    if (!attached.ok()) return attached;  // the same status on every rank
    return build_internal::CheckGatesOverRanks(comm, *pairs, *result, options.pipeline.alpha,
                                               options.gate_tolerance, totals);
  });
  if (!s.ok()) return s;
  build_internal::RecordPipelineResult(*pairs, *result, report);
  report->pairs = totals[0], report->instances = totals[1], report->negative_instances = totals[2];

  std::unique_ptr<PublishLock> lock;
  snapshot::ManifestInfo info;
  s = AgreeOnStatus(
      comm, root ? PrepareOnRoot(options, store, created, names, inputs, report, &lock, &info)
                 : absl::OkStatus());
  if (!s.ok()) return s;
  const std::vector<std::string> all = comm.AllGather(root ? InfoToJson(info) : std::string());
  if (!root) info = InfoFromJson(all[0]);
  const std::string tmp = comm.AllGather(root ? store->TempDir(info.version) : std::string())[0];
  uint64_t db_bytes = 0;
  s = Stage(comm, obs, report, "write",
            [&] { return WriteMyParts(options, comm, tmp, pairs, result, info, &db_bytes); });
  comm.AllReduceSum(absl::MakeSpan(&db_bytes, 1));
  if (s.ok() && root) {  // every rank wrote its parts: the version is complete
    s = snapshot::FsyncTree(tmp);
    if (s.ok()) s = build_internal::PublishStage(options, obs, *store, *lock, info.version, report);
    report->db_bytes = db_bytes;
    report->db_bytes_per_pair = static_cast<double>(db_bytes) / static_cast<double>(totals[0]);
  }
  if (!s.ok() && root) (void)snapshot::RemoveTree(tmp);
  return AgreeOnStatus(comm, s);
}

}  // namespace dist_internal
}  // namespace graphsieve
