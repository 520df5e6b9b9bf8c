#include "server/snapshot_source.h"

#include <memory>

#include "core/snapshot/snapshot_store.h"

namespace graphsieve {
namespace {

absl::StatusOr<std::unique_ptr<SnapshotStore>> OpenStore(const std::string& root) {
  SnapshotStoreOptions options;
  options.root = root;
  options.create_if_missing = false;
  return SnapshotStore::Create(options);
}

}  // namespace

bool SnapshotSource::IsValidVersionName(const std::string& version) {
  return SnapshotStore::IsValidVersionId(version);
}

absl::StatusOr<std::string> SnapshotSource::ReadCurrent() const {
  absl::StatusOr<std::unique_ptr<SnapshotStore>> store = OpenStore(root_);
  if (!store.ok()) return store.status();
  return (*store)->ReadCurrent();
}

std::vector<std::string> SnapshotSource::ListVersions() const {
  absl::StatusOr<std::unique_ptr<SnapshotStore>> store = OpenStore(root_);
  if (!store.ok()) return {};
  absl::StatusOr<std::vector<std::string>> versions = (*store)->ListVersions();
  if (!versions.ok()) return {};
  return *std::move(versions);
}

absl::Status SnapshotSource::Pin(const std::string& version) const {
  absl::StatusOr<std::unique_ptr<SnapshotStore>> store = OpenStore(root_);
  if (!store.ok()) return store.status();
  return (*store)->Pin(version, "pinned by graphsieve-server (PinVersion / --pin-version)");
}

absl::Status SnapshotSource::Unpin(const std::string& version) const {
  absl::StatusOr<std::unique_ptr<SnapshotStore>> store = OpenStore(root_);
  if (!store.ok()) return store.status();
  return (*store)->Unpin(version);
}

}  // namespace graphsieve
