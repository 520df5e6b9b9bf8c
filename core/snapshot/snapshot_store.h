// The directory of published snapshot versions (docs/DESIGN.md §3), and the one
// place that knows its layout (readers, the server and the CLI ask it):
//
//   <root>/CURRENT               "<version>\n": the active version
//   <root>/<version>/            a complete, immutable version (MANIFEST.json + db/ +
//                                index.gsi), or of a partitioned one, part-<I>/ each
//                                holding that layout for its part
//   <root>/<version>.tmp/        a version being written (never read; removed by the
//                                next publisher)
//   <root>/pins/<version>        a pin: the version is never deleted by retention;
//                                the file holds a free-text note (who/why)
//   <root>/holds/<version>@<holder>  a hold: a server keeps serving the version it
//                                served before its last swap (pinned requests,
//                                docs/CLIENTS.md "Partitioned deployments"); the
//                                file holds the unix time it expires at, and
//                                retention keeps the version until then
//   <root>/LOCK                  flock(2) held by the one publisher at a time
//
// Version ids are "YYYYMMDDTHHMMSSZ-<8 hex>" (UTC creation time, then 8 hex
// digits of a hash of input digest + parameters). NewVersionId advances the
// time by whole seconds when needed so that a new id sorts after every
// existing one: byte order of ids is publication order. (A "-<n>" suffix is
// accepted by IsValidVersionId for ids made by hand.)
//
// Publishing: the builder takes the writer lock, removes stale *.tmp dirs,
// writes <version>.tmp/ (snapshot_writer.h) with everything fsync'ed, then
// Publish(): rename to <version>/, fsync <root>, write CURRENT.tmp, fsync,
// rename over CURRENT, fsync <root>. A crash at any point leaves CURRENT naming
// the previous complete version.
//
// Retention keeps the newest N versions and always the CURRENT one, every
// pinned one and every one with an unexpired hold. Pin/Unpin need no lock: retention hides a victim
// by renaming it to <version>.deleting, re-checks its pin, and restores it if a pin appeared; Pin
// checks the version still exists after creating its pin file.
//
// Thread-safety: a SnapshotStore holds no mutable state; its methods are safe
// to call from many threads and processes (the file system is the state).
#ifndef GRAPHSIEVE_CORE_SNAPSHOT_SNAPSHOT_STORE_H_
#define GRAPHSIEVE_CORE_SNAPSHOT_SNAPSHOT_STORE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace graphsieve {

struct SnapshotStoreOptions {
  std::string root;                // directory holding CURRENT and the versions
  bool create_if_missing = false;  // builder: mkdir -p root (and pins/)
  absl::Status Validate() const;
};

// Holding one means this process is the only publisher under the root.
// Released when destroyed.
class PublishLock {
 public:
  explicit PublishLock(int fd) : fd_(fd) {}
  ~PublishLock();
  PublishLock(const PublishLock&) = delete;
  PublishLock& operator=(const PublishLock&) = delete;

 private:
  int fd_;
};

class SnapshotStore {
 public:
  // Errors: INVALID_ARGUMENT (options), NOT_FOUND (root missing and
  // !create_if_missing), or the mkdir failure naming the directory.
  static absl::StatusOr<std::unique_ptr<SnapshotStore>> Create(const SnapshotStoreOptions& options);

  // Whether a publisher could write under `root`, checked before any work and
  // without creating anything: an existing directory this process may write
  // (and its publish lock file, when one exists), or a missing path whose
  // nearest existing ancestor is such a directory (Create makes the rest).
  // Errors name the path at fault: INVALID_ARGUMENT when it is not a
  // directory, FAILED_PRECONDITION when this process may not write it.
  static absl::Status CheckWritableRoot(const std::string& root);

  const std::string& root() const { return root_; }
  std::string VersionDir(absl::string_view version) const;
  std::string TempDir(absl::string_view version) const;

  // The directory of a published version. INVALID_ARGUMENT when `version` is
  // not a version id; NOT_FOUND when no such version is published.
  absl::StatusOr<std::string> PublishedVersionDir(absl::string_view version) const;

  // The directory serving one part of a published version (docs/SNAPSHOT.md
  // "Partitioned versions"): <version>/part-<I>/ of a partitioned version,
  // <version>/ itself for an unpartitioned one (all users are its partition
  // 0). `partition` < 0: the caller serves whole versions only. Errors as
  // PublishedVersionDir, plus FAILED_PRECONDITION naming the version when it
  // is partitioned and partition < 0, or has no part `partition`.
  absl::StatusOr<std::string> PublishedPartDir(absl::string_view version, int partition) const;
  // "part-<I>".
  static std::string PartDirName(uint32_t partition);

  // "YYYYMMDDTHHMMSSZ-<8 hex>[-n]".
  static bool IsValidVersionId(absl::string_view version);
  static std::string MakeVersionId(absl::Time created, uint64_t content_hash);

  // The active version. NOT_FOUND when nothing was published yet; DATA_LOSS
  // when CURRENT does not hold a valid version id or names a missing version.
  absl::StatusOr<std::string> ReadCurrent() const;

  // Published (complete) versions, oldest first.
  absl::StatusOr<std::vector<std::string>> ListVersions() const;

  // --- Publisher side. ---
  // flock on <root>/LOCK, retried every 100 ms for up to `timeout_seconds`.
  // FAILED_PRECONDITION when another process holds it after that.
  absl::StatusOr<std::unique_ptr<PublishLock>> AcquirePublishLock(double timeout_seconds) const;
  // Removes <root>/*.tmp, *.deleting, CURRENT.tmp and pins/*.tmp left by
  // crashed runs. Returns what it removed. REQUIRES: the publish lock is held.
  absl::StatusOr<std::vector<std::string>> RemoveStaleTemporaries(const PublishLock& lock) const;
  // A new id that sorts after every version under the root:
  // MakeVersionId(created, hash), its time advanced by whole seconds if needed.
  // REQUIRES: the publish lock is held.
  std::string NewVersionId(const PublishLock& lock, absl::Time created, uint64_t hash) const;
  // TempDir(version) → VersionDir(version), then CURRENT := version.
  // REQUIRES: the publish lock is held; TempDir(version) is complete and synced.
  absl::Status Publish(const PublishLock& lock, const std::string& version) const;
  // CURRENT := an existing published version (rollback). REQUIRES: lock held.
  absl::Status SetCurrent(const PublishLock& lock, const std::string& version) const;
  // Deletes published versions beyond the newest `keep`, never CURRENT's, a
  // pinned or held one, or the base of a delta it keeps; deltas before full
  // versions (a kill between deletions leaves no delta without its base).
  // Returns the deleted versions. REQUIRES: lock held, keep >= 1.
  absl::StatusOr<std::vector<std::string>> ApplyRetention(const PublishLock& lock, int keep) const;

  // --- Pins (server PinVersion RPC, operators). ---
  // NOT_FOUND when the version is not published. Pinning twice replaces the note.
  absl::Status Pin(const std::string& version, absl::string_view note) const;
  // NOT_FOUND when the version is not pinned.
  absl::Status Unpin(const std::string& version) const;
  absl::StatusOr<std::vector<std::string>> ListPins() const;
  bool IsPinned(const std::string& version) const;

  // --- Holds (snapshot_store_holds.cc): one per (version, holder), expiring. ---
  // Writes <root>/holds/<version>@<holder> expiring at `until`; holding again
  // moves the expiry. NOT_FOUND when the version is not published (or was
  // deleted meanwhile); INVALID_ARGUMENT when `holder` is empty or has
  // characters other than [A-Za-z0-9._-].
  absl::Status Hold(const std::string& version, absl::string_view holder, absl::Time until) const;
  // Removes the hold; OK when there was none.
  absl::Status Release(const std::string& version, absl::string_view holder) const;
  // Some holder's hold on `version` expires after `now`.
  bool IsHeld(const std::string& version, absl::Time now) const;
  // Removes the expired hold files (crashed holders). Returns their names.
  absl::StatusOr<std::vector<std::string>> RemoveExpiredHolds(absl::Time now) const;

 private:
  explicit SnapshotStore(std::string root) : root_(std::move(root)) {}
  absl::Status WriteCurrent(const std::string& version) const;

  const std::string root_;  // constant after construction
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_SNAPSHOT_SNAPSHOT_STORE_H_
