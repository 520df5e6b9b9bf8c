// Synthetic PairTable + PipelineResult for snapshot tests (no pipeline run):
// random sparse uint64 ids (including ids >= 2^63 to exercise unsigned
// big-endian key order), pairs sorted by (user_id, item_id), random rates.
#ifndef GRAPHSIEVE_TESTS_SNAPSHOT_SYNTHETIC_H_
#define GRAPHSIEVE_TESTS_SNAPSHOT_SYNTHETIC_H_

#include <algorithm>
#include <random>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/maec/pipeline.h"
#include "core/snapshot/manifest.h"
#include "core/snapshot/snapshot_store.h"
#include "core/snapshot/snapshot_writer.h"

namespace graphsieve {
namespace testing_util {

struct Synthetic {
  PairTable pairs;
  PipelineResult result;
  snapshot::ManifestInfo info;
};

inline std::vector<uint64_t> RandomIds(std::mt19937_64& rng, size_t n) {
  std::set<uint64_t> ids;
  while (ids.size() < n) ids.insert(rng() | (ids.size() % 3 == 0 ? (uint64_t{1} << 63) : 0));
  return {ids.begin(), ids.end()};
}

inline Synthetic MakeSynthetic(size_t users, size_t items, size_t pairs_per_user, uint64_t seed,
                               int sketch_dim = 4) {
  std::mt19937_64 rng(seed);
  Synthetic s;
  PairTable& t = s.pairs;
  t.user_ids = RandomIds(rng, users);
  t.item_ids = RandomIds(rng, items);
  std::uniform_real_distribution<float> unit(0.001f, 1.0f);
  for (uint32_t u = 0; u < users; ++u) {
    std::set<uint32_t> chosen;
    while (chosen.size() < std::min(pairs_per_user, items)) chosen.insert(rng() % items);
    for (uint32_t i : chosen) {
      t.pair_user.push_back(u);
      t.pair_item.push_back(i);
      const uint8_t label = rng() % 5 == 0;
      t.label.push_back(label);
      t.instances.push_back(1 + rng() % 3);
      t.negatives.push_back(label ? 0 : t.instances.back());
      t.total_instances += t.instances.back();
      t.total_negatives += t.negatives.back();
      s.result.rate.push_back(label ? 1.0f : unit(rng));
      s.result.geff.push_back(unit(rng));
      s.result.hardness.push_back(unit(rng));
      s.result.score.push_back(unit(rng));
      s.result.positive_pairs += label;
    }
  }
  NodeTable& n = s.result.nodes;
  n.sketch_dim = sketch_dim;
  for (size_t k = 0; k < users + items; ++k) {
    const bool item = k >= users;
    n.ids.push_back(item ? t.item_ids[k - users] : t.user_ids[k]);
    n.is_item.push_back(item);
    NodeRecord r;
    r.component = static_cast<uint32_t>(k % 7);
    r.degree = static_cast<uint32_t>(k + 1);
    r.sum_uncertainty = unit(rng);
    r.sum_score = unit(rng);
    r.mean_rate = unit(rng);
    n.records.push_back(r);
    for (int d = 0; d < sketch_dim; ++d) n.sketch.push_back(unit(rng) - 0.5f);
  }
  s.result.model.sketch_dim = sketch_dim;
  s.result.model.rho = 1.5;
  s.result.model.alpha = 0.2;
  s.result.achieved_negative_mean_rate = 0.2;
  s.result.num_components = 7;
  SolveSummary solve;
  solve.method = "pcg";
  solve.converged = true;
  s.result.solves.push_back(solve);
  s.info.created_at = "2026-11-25T22:45:01Z";
  s.info.inputs.push_back({"synthetic.csv", 123, 0xabcdef});
  s.info.input_digest = snapshot::InputDigest(s.info.inputs);
  s.info.parameters = {{"method", "maec"}, {"resistance", "sketch"}, {"alpha", 0.2},
                       {"floor", 0.01},    {"gamma", 0.5},           {"sketch_dim", sketch_dim},
                       {"seed", 42}};
  return s;
}

// Writes `s` as a new version under `root` (created if missing) and publishes
// it; returns the version, also set in s.info.version. `content_hash` goes
// into the version name (SnapshotStore::NewVersionId).
inline absl::StatusOr<std::string> PublishSynthetic(const std::string& root, Synthetic& s,
                                                    const SnapshotWriterOptions& options = {},
                                                    uint64_t content_hash = 1) {
  absl::StatusOr<std::unique_ptr<SnapshotStore>> store =
      SnapshotStore::Create({root, /*create_if_missing=*/true});
  if (!store.ok()) return store.status();
  auto lock = (*store)->AcquirePublishLock(0);
  if (!lock.ok()) return lock.status();
  s.info.version = (*store)->NewVersionId(**lock, absl::Now(), content_hash);
  auto stats =
      WriteSnapshotDir((*store)->TempDir(s.info.version), s.pairs, s.result, s.info, options);
  if (!stats.ok()) return stats.status();
  absl::Status published = (*store)->Publish(**lock, s.info.version);
  if (!published.ok()) return published;
  return s.info.version;
}

}  // namespace testing_util
}  // namespace graphsieve

#endif  // GRAPHSIEVE_TESTS_SNAPSHOT_SYNTHETIC_H_
