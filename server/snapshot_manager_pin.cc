// SnapshotManager, part 2: the versions a request or an operator names —
// Find (a request asking for a version by name), the held previous version
// and its store hold, and Pin / rollback with the store's retention pin
// (docs/DESIGN.md §4, "The held version"; docs/SERVER.md). Polling, loading
// and swapping live in snapshot_manager.cc; the class is snapshot_manager.h.
#include "server/snapshot_manager.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/snapshot/memory_index.h"
#include "core/snapshot/snapshot_store.h"
#include "server/log.h"

namespace graphsieve {

absl::StatusOr<std::shared_ptr<const ServingSnapshot>> SnapshotManager::Find(
    const std::string& version, bool* held) const {
  *held = false;
  absl::MutexLock lock(&mu_);
  if (active_ == nullptr) {
    return absl::UnavailableError("no snapshot loaded yet; retry once the server is ready");
  }
  if (version.empty() || active_->version == version) return active_;
  const bool holding = previous_ != nullptr && absl::Now() < previous_until_;
  if (holding && previous_->version == version) {
    *held = true;
    held_reads_.fetch_add(1, std::memory_order_relaxed);
    return previous_;
  }
  return absl::NotFoundError(
      absl::StrCat("snapshot_version '", version, "' is not held by this server: it serves '",
                   active_->version, "'",
                   holding ? absl::StrCat(" and still holds '", previous_->version, "'")
                           : std::string(" and holds no previous version")));
}

void SnapshotManager::ReleaseExpiredHold() {
  std::shared_ptr<const ServingSnapshot> released;
  {
    absl::MutexLock lock(&mu_);
    if (previous_ == nullptr || absl::Now() < previous_until_) return;
    released = std::move(previous_);
    previous_ = nullptr;
  }
  SyncStoreHold(released->version, "", absl::InfinitePast());
}

void SnapshotManager::TrimHeld() {
  if (held_reads_.exchange(0, std::memory_order_relaxed) != 0) return;  // still in use
  std::shared_ptr<const ServingSnapshot> held;
  {
    absl::MutexLock lock(&mu_);
    held = previous_;
  }
  if (held != nullptr && held->reader->memory_index() != nullptr) {
    held->reader->memory_index()->ReleaseResidentPages();
  }
}

void SnapshotManager::DropHeld(const std::string& version) {
  std::shared_ptr<const ServingSnapshot> released;
  {
    absl::MutexLock lock(&mu_);
    if (previous_ == nullptr || previous_->version != version) return;
    released = std::move(previous_);
    previous_ = nullptr;
  }
  SyncStoreHold(released->version, "", absl::InfinitePast());
}

std::vector<std::shared_ptr<const ServingSnapshot>> SnapshotManager::HoldPrevious(
    std::shared_ptr<const ServingSnapshot> old) {
  std::vector<std::shared_ptr<const ServingSnapshot>> release;
  if (previous_ != nullptr) release.push_back(std::move(previous_));
  previous_ = nullptr;
  if (old == nullptr) return release;
  const MemoryIndex* index = old->reader->memory_index();
  const bool cheap = index == nullptr || index->mapped();
  if (options_.hold_previous_seconds > 0 && cheap) {
    previous_ = std::move(old);
    previous_until_ = absl::Now() + absl::Seconds(options_.hold_previous_seconds);
  } else {
    release.push_back(std::move(old));
  }
  return release;
}

void SnapshotManager::SyncStoreHold(const std::string& released, const std::string& held,
                                    absl::Time until) {
  if (options_.holder.empty() || released == held) return;
  absl::StatusOr<std::unique_ptr<SnapshotStore>> store =
      SnapshotStore::Create({options_.root, /*create_if_missing=*/false});
  if (!store.ok()) return;
  if (!released.empty()) {
    absl::Status st = (*store)->Release(released, options_.holder);
    if (!st.ok()) ServerLog(absl::StrCat("store hold release: ", st.ToString()));
  }
  if (!held.empty()) {
    absl::Status st = (*store)->Hold(held, options_.holder, until);
    if (!st.ok() && !absl::IsNotFound(st)) {
      ServerLog(absl::StrCat("store hold of ", held,
                             " failed (retention may delete it): ", st.ToString()));
    }
  }
}

absl::Status SnapshotManager::Pin(const std::string& version, bool reject_active) {
  if (!version.empty() && !SnapshotSource::IsValidVersionName(version)) {
    return absl::InvalidArgumentError(
        absl::StrCat("version: '", version, "' is not a version directory name"));
  }
  absl::MutexLock load_lock(&load_mu_);
  // Only the version: holding the snapshot itself would keep it loaded (and
  // its mapped index resident) through the swap below.
  std::string before;
  if (std::shared_ptr<const ServingSnapshot> active = Current()) before = active->version;
  std::string target = version;
  if (target.empty() && reject_active) {
    // Unpin and roll back: there must be something else to serve.
    absl::StatusOr<std::string> current = source_.ReadCurrent();
    bool usable = current.ok() && (before.empty() || *current != before);
    if (usable) {
      absl::MutexLock lock(&mu_);
      usable = !rejected_.contains(*current);
    }
    if (!usable) {
      return absl::FailedPreconditionError(
          "reject_active with an empty version: CURRENT names the active or a rejected "
          "version, so nothing else could serve; pin the version to roll back to instead");
    }
    target = *current;
  }
  const bool reload = !target.empty() && (before.empty() || before != target);
  if (reload) {
    absl::Status st = LoadAndSwap(target, version.empty() ? "adopted after rollback" : "pinned");
    if (!st.ok()) {
      absl::MutexLock lock(&mu_);
      rejected_.erase(target);  // an operator's explicit request is not remembered as a failure
      return st;
    }
  }
  std::shared_ptr<const ServingSnapshot> now;
  std::string previous_pin;
  {
    absl::MutexLock lock(&mu_);
    previous_pin = pinned_;
    pinned_ = version;
    if (!target.empty()) rejected_.erase(target);  // explicitly chosen: no longer rejected
    if (reject_active && !before.empty() && before != target) rejected_[before] = "rolled back";
    now = active_;
  }
  if (reject_active && !before.empty() && before != target) DropHeld(before);  // never served again
  // Without a poll thread (interval <= 0) a hold made by this swap still has
  // to be closed when it ends: a thread does that and ends (Run).
  if (reload) StartThread(/*poll=*/false);
  SyncStorePin(previous_pin, version);
  RefreshEventRecord event;
  event.version = now ? now->version : "";
  event.at = absl::Now();
  event.ok = true;
  event.message =
      absl::StrCat(version.empty() ? "unpinned" : "pinned " + version,
                   reject_active && !before.empty() ? ", rolled back from " + before : "");
  ServerLog(event.message);
  Record(std::move(event), now);
  return absl::OkStatus();
}

void SnapshotManager::SyncStorePin(const std::string& previous, const std::string& next) {
  if (previous == next) return;
  if (!previous.empty()) {
    absl::Status st = source_.Unpin(previous);
    if (!st.ok() && !absl::IsNotFound(st)) ServerLog(absl::StrCat("store unpin: ", st.ToString()));
  }
  if (!next.empty()) {
    absl::Status st = source_.Pin(next);
    if (!st.ok()) {
      ServerLog(absl::StrCat("store pin of ", next,
                             " failed (retention may delete it): ", st.ToString()));
    }
  }
}

}  // namespace graphsieve
