// The refresher's Source: what <root>/CURRENT names, which versions are on
// disk, and retention pins — a thin layer over the snapshot store
// (core/snapshot/snapshot_store.h), which owns the directory layout.
//
// Thread-safety: stateless apart from the root path; safe from any thread.
#ifndef GRAPHSIEVE_SERVER_SNAPSHOT_SOURCE_H_
#define GRAPHSIEVE_SERVER_SNAPSHOT_SOURCE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace graphsieve {

class SnapshotSource {
 public:
  explicit SnapshotSource(std::string root) : root_(std::move(root)) {}

  // The version CURRENT names. NOT_FOUND when nothing is published yet (or the
  // root is missing); DATA_LOSS when CURRENT is malformed or names a missing version.
  absl::StatusOr<std::string> ReadCurrent() const;

  // Complete versions on disk, oldest first (empty when unreadable).
  std::vector<std::string> ListVersions() const;

  // Marks `version` as pinned in the store so retention never deletes the
  // version this server serves pinned; Unpin undoes it. Best effort: errors are
  // returned for logging (a read-only mount cannot hold pins).
  absl::Status Pin(const std::string& version) const;
  absl::Status Unpin(const std::string& version) const;

  // A store version id ("YYYYMMDDTHHMMSSZ-<8 hex>[-n]").
  static bool IsValidVersionName(const std::string& version);

  const std::string& root() const { return root_; }

 private:
  const std::string root_;  // constant after construction
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_SERVER_SNAPSHOT_SOURCE_H_
