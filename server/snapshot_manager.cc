// SnapshotManager (snapshot_manager.h): options, the poll thread, PollOnce,
// load and swap, the refresh history and State; then Find, the held
// version's hold and Pin / rollback (docs/DESIGN.md §4).
#include "server/snapshot_manager.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "core/snapshot/layered_snapshot_reader.h"
#include "core/snapshot/memory_index.h"
#include "core/snapshot/snapshot_store.h"
#include "server/log.h"

namespace graphsieve {
namespace {

// Drops the held version's resident index pages, except those of an index
// the active version serves from too: a delta over the same base shares the
// base's, and a held delta's own index is released while the base stays.
void ReleaseHeldPages(const ServingSnapshot* held, const ServingSnapshot* active) {
  if (held == nullptr) return;
  const std::vector<const MemoryIndex*> in_use =
      active != nullptr ? ServingIndexes(*active->reader) : std::vector<const MemoryIndex*>();
  for (const MemoryIndex* index : ServingIndexes(*held->reader)) {
    if (std::find(in_use.begin(), in_use.end(), index) == in_use.end()) {
      index->ReleaseResidentPages();
    }
  }
}

// The inotify watch of a snapshot root for CURRENT: the store publishes by
// renaming CURRENT.tmp over it (IN_MOVED_TO); a hand-written CURRENT shows as
// IN_CREATE / IN_CLOSE_WRITE. Used by the poll thread only.
class CurrentWatch {
 public:
  explicit CurrentWatch(std::string root) : root_(std::move(root)) {
    fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd_ < 0) error_ = absl::StrCat("inotify_init1: ", std::strerror(errno));
  }
  ~CurrentWatch() {
    if (fd_ >= 0) ::close(fd_);
  }
  CurrentWatch(const CurrentWatch&) = delete;
  CurrentWatch& operator=(const CurrentWatch&) = delete;

  int fd() const { return fd_; }
  bool armed() const { return wd_ >= 0; }
  // Watches the root unless it already does: "" or why not (no inotify, the
  // root is missing yet, the watch limit is reached).
  std::string Arm() {
    if (fd_ < 0) return error_;
    if (wd_ >= 0) return "";
    wd_ = ::inotify_add_watch(fd_, root_.c_str(),
                              IN_MOVED_TO | IN_CLOSE_WRITE | IN_CREATE | IN_ONLYDIR);
    if (wd_ < 0) return absl::StrCat("inotify_add_watch ", root_, ": ", std::strerror(errno));
    return "";
  }
  // Reads every queued event; true when one names CURRENT or events were lost.
  // A removed root (IN_IGNORED) disarms the watch; Arm adds it again.
  bool Drain() {
    alignas(struct inotify_event) char buf[8192];
    bool changed = false;
    for (;;) {
      const ssize_t n = ::read(fd_, buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return changed;  // EAGAIN: nothing more queued
      for (ssize_t off = 0; off < n;) {
        const auto* ev = reinterpret_cast<const struct inotify_event*>(buf + off);
        if ((ev->mask & IN_Q_OVERFLOW) != 0) changed = true;
        if ((ev->mask & IN_IGNORED) != 0) wd_ = -1;
        if (ev->len > 0 && std::strcmp(ev->name, kCurrentName) == 0) changed = true;
        off += static_cast<ssize_t>(sizeof(struct inotify_event) + ev->len);
      }
    }
  }

 private:
  static constexpr char kCurrentName[] = "CURRENT";  // core/snapshot/snapshot_store.h's layout
  const std::string root_;
  int fd_ = -1;
  int wd_ = -1;
  std::string error_;
};

}  // namespace

absl::Status SnapshotManagerOptions::Validate() const {
  if (root.empty()) return absl::InvalidArgumentError("snapshot root is empty");
  if (history_size < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("history_size must be >= 1, got ", history_size));
  }
  if (!(hold_previous_seconds >= 0) || !std::isfinite(hold_previous_seconds)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--previous-version-hold-seconds must be a finite number >= 0, got ",
                     hold_previous_seconds));
  }
  if (!pin_version.empty() && !SnapshotSource::IsValidVersionName(pin_version)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--pin-version '", pin_version, "' is not a version directory name"));
  }
  return absl::OkStatus();
}

absl::Time NewestCovered(const ServingSnapshot& snap) {
  const std::string& through = snap.reader->manifest().covers_through;
  absl::Time t;
  std::string err;
  if (!through.empty() && absl::ParseTime(absl::RFC3339_full, through, &t, &err)) return t;
  return snap.created_at;
}

absl::StatusOr<std::unique_ptr<SnapshotManager>> SnapshotManager::Create(
    SnapshotManagerOptions options) {
  absl::Status st = options.Validate();
  if (!st.ok()) return st;
  if (!options.loader) {
    SnapshotReaderOptions reader = options.reader;
    options.loader = [reader](VersionOpener& opener, const std::string& root,
                              const std::string& version) {
      return opener.Open(root, version, reader);
    };
  }
  return std::unique_ptr<SnapshotManager>(new SnapshotManager(std::move(options)));
}

SnapshotManager::SnapshotManager(SnapshotManagerOptions options)
    : options_(std::move(options)), source_(options_.root) {
  if (options_.watch_current && options_.poll_interval_seconds > 0) {
    wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd_ < 0) {
      ServerLog(absl::StrCat("warning: eventfd: ", std::strerror(errno),
                             "; not watching CURRENT, polling every ",
                             options_.poll_interval_seconds, " s"));
    }
  }
  absl::MutexLock lock(&mu_);
  pinned_ = options_.pin_version;
  for (const std::string& v : options_.reject_versions) rejected_[v] = "rejected by flag";
}

SnapshotManager::~SnapshotManager() {
  Stop();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

std::shared_ptr<const ServingSnapshot> SnapshotManager::Current() const {
  absl::MutexLock lock(&mu_);
  return active_;
}

void SnapshotManager::Start() {
  if (options_.poll_interval_seconds < 0) {
    // No refresher thread, but a version pinned by flag is still served.
    if (!options_.pin_version.empty()) PollOnce().IgnoreError();  // recorded and logged inside
    return;
  }
  StartThread(/*poll=*/true);
}

void SnapshotManager::StartThread(bool poll) {
  {
    absl::MutexLock lock(&mu_);
    if (running_ || stop_.HasBeenNotified()) return;
    running_ = true;
  }
  absl::MutexLock lock(&thread_mu_);
  if (stop_.HasBeenNotified()) return;     // Stop ran meanwhile: start nothing after it
  if (thread_.joinable()) thread_.join();  // a thread that ended: it no longer takes mu_
  thread_ = std::thread([this, poll] { Run(poll); });
}

void SnapshotManager::Stop() {
  if (!stop_.HasBeenNotified()) stop_.Notify();
  if (wake_fd_ >= 0) {
    const uint64_t one = 1;
    if (::write(wake_fd_, &one, sizeof(one)) < 0) {
      // EAGAIN only (the counter is full): the thread is woken already.
    }
  }
  absl::MutexLock lock(&thread_mu_);
  if (thread_.joinable()) thread_.join();
}

void SnapshotManager::Run(bool poll) {
  const double interval = options_.poll_interval_seconds;
  // The watch of CURRENT, with a periodic poll only (interval > 0): a poll
  // once at start (0) stays one.
  std::unique_ptr<CurrentWatch> watch;
  bool warned = false;
  if (poll && interval > 0 && wake_fd_ >= 0) watch = std::make_unique<CurrentWatch>(options_.root);
  // Arms the watch (again, after the root was missing or removed) before a
  // poll, so a CURRENT written after the poll read it is seen.
  auto arm = [&] {
    if (watch == nullptr || watch->armed()) return;
    const std::string why = watch->Arm();
    watching_.store(watch->armed());
    if (!why.empty() && !warned) {
      warned = true;
      ServerLog(absl::StrCat("warning: not watching ", options_.root, "/CURRENT (", why,
                             "); polling every ", interval, " s"));
    } else if (why.empty() && warned) {
      warned = false;
      ServerLog(absl::StrCat("watching ", options_.root, "/CURRENT again"));
    }
  };
  absl::Time next_poll = poll ? absl::InfinitePast() : absl::InfiniteFuture();
  bool changed = false;  // the watch saw CURRENT change
  while (!stop_.HasBeenNotified()) {
    if (changed || absl::Now() >= next_poll) {
      arm();
      if (changed) {
        watch_events_.fetch_add(1, std::memory_order_relaxed);
        if (options_.on_watch_event) options_.on_watch_event();
      }
      changed = false;
      PollOnce().IgnoreError();  // recorded and logged inside
      next_poll = interval > 0 ? absl::Now() + absl::Seconds(interval) : absl::InfiniteFuture();
    }
    ReleaseExpiredHold();
    TrimHeld();
    absl::Time wake = next_poll;
    {
      absl::MutexLock lock(&mu_);
      // Wake when the hold ends, so its mapping is closed on time.
      if (previous_ != nullptr) wake = std::min(wake, previous_until_);
      if (wake == absl::InfiniteFuture()) {
        // Nothing to poll and nothing held: the thread ends; a later swap by
        // Pin that holds a version starts it again (StartThread).
        running_ = false;
        return;
      }
    }
    const absl::Duration left = std::max(wake - absl::Now(), absl::Milliseconds(1));
    if (watch == nullptr || !watch->armed()) {
      stop_.WaitForNotificationWithTimeout(left);
      continue;
    }
    // Sleep until the timer, a change of CURRENT or Stop (wake_fd_).
    struct pollfd fds[2] = {{watch->fd(), POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    const int64_t ms = absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1)));
    const int n = ::poll(fds, 2, static_cast<int>(std::min<int64_t>(ms, INT_MAX)));
    if (n < 0 && errno != EINTR) {
      ServerLog(absl::StrCat("warning: poll on the watch of ", options_.root, "/CURRENT: ",
                             std::strerror(errno), "; polling every ", interval, " s"));
      watch.reset();
      watching_.store(false);
      continue;
    }
    if (n > 0 && (fds[0].revents & POLLIN) != 0) {
      changed = watch->Drain();
      if (!watch->armed()) watching_.store(false);  // the root went away: re-armed at a poll
    }
  }
  watching_.store(false);
}

absl::Status SnapshotManager::PollOnce() {
  absl::MutexLock load_lock(&load_mu_);
  std::string target;
  {
    absl::MutexLock lock(&mu_);
    target = pinned_;
  }
  if (target.empty()) {
    absl::StatusOr<std::string> current = source_.ReadCurrent();
    if (!current.ok()) {
      // Nothing published yet, or a malformed CURRENT: keep serving, log once.
      absl::MutexLock lock(&mu_);
      std::string msg(current.status().message());
      if (msg != last_current_error_) {
        last_current_error_ = msg;
        ServerLog(msg);
      }
      return absl::OkStatus();
    }
    target = *std::move(current);
  }
  {
    absl::MutexLock lock(&mu_);
    last_current_error_.clear();
    if (active_ != nullptr && active_->version == target) return absl::OkStatus();
    if (rejected_.contains(target)) return absl::OkStatus();  // remembered: never retried
  }
  const bool pinned = !options_.pin_version.empty() && target == options_.pin_version;
  absl::Status st = LoadAndSwap(target, pinned ? "pinned by --pin-version" : "adopted");
  if (st.ok() && pinned) SyncStorePin("", target);
  return st;
}

absl::Status SnapshotManager::LoadAndSwap(const std::string& version,
                                          const std::string& ok_message) {
  const absl::Time start = absl::Now();
  absl::StatusOr<std::shared_ptr<const SnapshotReader>> reader =
      options_.loader(opener_, options_.root, version);
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  RefreshEventRecord event;
  event.version = version;
  event.at = absl::Now();
  event.load_seconds = seconds;
  if (!reader.ok()) {
    event.ok = false;
    event.message = std::string(reader.status().message());
    std::shared_ptr<const ServingSnapshot> now;
    {
      absl::MutexLock lock(&mu_);
      rejected_[version] = absl::StrCat("failed to load: ", event.message);
      ++failures_;
      now = active_;
    }
    ServerLog(absl::StrCat("version ", version, " failed to load (", reader.status().ToString(),
                           "); ", now ? "still serving " + now->version : "nothing to serve"));
    Record(std::move(event), now);
    return reader.status();
  }
  auto snapshot = std::make_shared<ServingSnapshot>();
  snapshot->version = version;
  snapshot->reader = *std::move(reader);
  snapshot->loaded_at = absl::Now();
  snapshot->load_seconds = seconds;
  absl::Time created;
  std::string err;
  if (absl::ParseTime(absl::RFC3339_full, snapshot->reader->manifest().created_at, &created,
                      &err)) {
    snapshot->created_at = created;
  }
  std::string was, held, released_held;
  absl::Time held_until;
  {
    std::vector<std::shared_ptr<const ServingSnapshot>> release;
    std::shared_ptr<const ServingSnapshot> held_snapshot;
    {
      absl::MutexLock lock(&mu_);
      std::shared_ptr<const ServingSnapshot> old = std::move(active_);
      active_ = snapshot;
      ++successes_;
      if (old) was = old->version;
      if (previous_ != nullptr) released_held = previous_->version;
      release = HoldPrevious(std::move(old));
      held_snapshot = previous_;
      if (previous_ != nullptr) held = previous_->version;
      held_until = previous_until_;
    }
    // The held version leaves the RSS (its pages fault back only when a
    // pinned request reads them); what is not held is released here, before
    // logging and the event callbacks: a mapped index is unmapped as soon as
    // in-flight requests drop it, so the two versions overlap in memory only
    // for the requests in flight at the swap.
    ReleaseHeldPages(held_snapshot.get(), snapshot.get());
  }
  SyncStoreHold(released_held == held ? "" : released_held, held, held_until);
  event.ok = true;
  event.message = held.empty() ? ok_message : absl::StrCat(ok_message, ", holding ", held);
  const SnapshotLoadStats& ls = snapshot->reader->load_stats();
  const MemoryIndex* index = ServingIndex(*snapshot->reader);
  ServerLog(absl::StrCat(
      "serving version ", version, " (", ok_message, ", loaded in ",
      absl::StrFormat("%.2f s: verify files %.2f, rocksdb checksums %.2f, open %.2f, %s %.2f",
                      seconds, ls.verify_files_seconds, ls.verify_rocksdb_seconds, ls.open_seconds,
                      index ? (ls.index_mapped ? "map index file" : "build index") : "warm",
                      ls.index_seconds),
      index ? absl::StrFormat("; %s index %.0f MiB", ls.index_mapped ? "mapped" : "in-memory",
                              index->memory_bytes() / 1048576.0)
            : std::string(),
      ")", was.empty() ? "" : ", was " + was));
  Record(std::move(event), snapshot);
  return absl::OkStatus();
}

void SnapshotManager::Record(RefreshEventRecord event,
                             const std::shared_ptr<const ServingSnapshot>& now) {
  {
    absl::MutexLock lock(&mu_);
    history_.push_back(event);
    while (static_cast<int>(history_.size()) > options_.history_size) history_.pop_front();
  }
  if (options_.on_event) options_.on_event(event, now);
}

ManagerState SnapshotManager::State() const {
  ManagerState state;
  absl::StatusOr<std::string> current = source_.ReadCurrent();
  if (current.ok()) {
    state.current_on_disk = *current;
  } else if (!absl::IsNotFound(current.status())) {
    state.current_error = std::string(current.status().message());
  }
  state.versions_on_disk = source_.ListVersions();
  absl::MutexLock lock(&mu_);
  state.active = active_;
  if (previous_ != nullptr && absl::Now() < previous_until_) state.held = previous_->version;
  state.pinned = pinned_;
  for (const auto& [v, why] : rejected_) state.rejected.push_back(v);
  std::sort(state.rejected.begin(), state.rejected.end());
  state.history.assign(history_.begin(), history_.end());
  state.refresh_successes = successes_;
  state.refresh_failures = failures_;
  state.watching_current = watching_.load();
  state.watch_events = watch_events_.load(std::memory_order_relaxed);
  return state;
}

// The versions a request or an operator names: Find (a request asking for a
// version by name), the held previous version and its store hold, and Pin /
// rollback with the store's retention pin (docs/DESIGN.md §4, "The held
// version"; docs/SERVER.md).
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
  ReleaseHeldPages(held.get(), Current().get());
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
  const MemoryIndex* index = ServingIndex(*old->reader);
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
    // An operator's typo is not a refresh: nothing was published, nothing
    // failed to load, so no failure is counted (GraphsieveRefreshFailing
    // watches that count).
    const std::vector<std::string> on_disk = source_.ListVersions();
    if (std::find(on_disk.begin(), on_disk.end(), target) == on_disk.end()) {
      return absl::NotFoundError(absl::StrCat("version ", target, " is not on disk in ",
                                              source_.root(), " (graphsieve status lists them)"));
    }
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
