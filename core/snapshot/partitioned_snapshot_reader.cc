#include "core/snapshot/partitioned_snapshot_reader.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/io/partition.h"
#include "core/snapshot/file_util.h"
#include "core/snapshot/manifest.h"
#include "core/snapshot/snapshot_store.h"

namespace graphsieve {

const SnapshotReader& PartitionedSnapshotReader::PartOfUser(uint64_t user) const {
  return *parts_[PartitionOfUser(user, num_parts())];
}

absl::Status PartitionedSnapshotReader::LookupPairs(absl::Span<const uint64_t> users,
                                                    absl::Span<const uint64_t> items,
                                                    absl::Span<bool> found,
                                                    absl::Span<float> rates) const {
  std::vector<std::vector<size_t>> of_part(parts_.size());
  for (size_t i = 0; i < users.size(); ++i) {
    of_part[PartitionOfUser(users[i], num_parts())].push_back(i);
  }
  std::vector<uint64_t> pu, pi;
  std::vector<float> pr;
  for (size_t p = 0; p < parts_.size(); ++p) {
    const std::vector<size_t>& idx = of_part[p];
    if (idx.empty()) continue;
    pu.resize(idx.size());
    pi.resize(idx.size());
    pr.resize(idx.size());
    std::unique_ptr<bool[]> pf(new bool[idx.size()]);
    for (size_t k = 0; k < idx.size(); ++k) pu[k] = users[idx[k]], pi[k] = items[idx[k]];
    absl::Status s =
        parts_[p]->LookupPairs(pu, pi, absl::MakeSpan(pf.get(), idx.size()), absl::MakeSpan(pr));
    if (!s.ok()) return s;
    for (size_t k = 0; k < idx.size(); ++k) found[idx[k]] = pf[k], rates[idx[k]] = pr[k];
  }
  return absl::OkStatus();
}

bool PartitionedSnapshotReader::FindNode(bool is_item, uint64_t id, NodeView* view) const {
  return (is_item ? *parts_[0] : PartOfUser(id)).FindNode(is_item, id, view);
}

bool PartitionedSnapshotReader::LookupUser(uint64_t id, NodeRecord* record,
                                           absl::Span<float> sketch) const {
  return PartOfUser(id).LookupUser(id, record, sketch);
}

bool PartitionedSnapshotReader::LookupItem(uint64_t id, NodeRecord* record,
                                           absl::Span<float> sketch) const {
  return parts_[0]->LookupItem(id, record, sketch);
}

absl::Status PartitionedSnapshotReader::ForEachPair(
    const std::function<void(uint64_t user, uint64_t item, float rate)>& fn) const {
  for (const auto& part : parts_) {
    absl::Status s = part->ForEachPair(fn);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<ManifestSummary> ReadPublishedManifest(const SnapshotStore& store,
                                                      const std::string& version) {
  absl::StatusOr<std::string> dir = store.PublishedPartDir(version, 0);
  if (!dir.ok()) return dir.status();
  const std::string path = absl::StrCat(*dir, "/", snapshot::kManifestFile);
  absl::StatusOr<std::string> text = snapshot::ReadFileToString(path);
  if (!text.ok()) return absl::DataLossError(absl::StrCat(path, ": ", text.status().message()));
  absl::StatusOr<snapshot::ParsedManifest> parsed = snapshot::ParseManifest(*text, path);
  if (!parsed.ok()) return parsed.status();
  if (parsed->summary.version != version) {
    return absl::DataLossError(absl::StrCat(path, ": names version '", parsed->summary.version,
                                            "', directory is '", version, "'"));
  }
  return std::move(parsed->summary);
}

}  // namespace graphsieve
