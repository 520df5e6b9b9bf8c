// The refresher's Loader and Manager (docs/DESIGN.md §4): the manager holds the
// snapshot that serves, as std::shared_ptr<const ServingSnapshot>, and swaps it
// atomically when the Source (snapshot_source.h) names a new version that the
// Loader opened, validated and warmed off the request path.
//
//   * A request pins one snapshot with Current() for its whole batch; an old
//     version closes when its last reader drops the pointer.
//   * A version that fails to load is logged, counted (RefreshEvent ok=false)
//     and remembered: the refresher never retries it; the old one keeps serving.
//   * After a swap the version that served before stays open as the held
//     ("previous") version for hold_previous_seconds or until the next swap,
//     for requests that ask for it by name (GetSamplingRateRequest.
//     snapshot_version: a routing client whose parts answered from different
//     versions, docs/CLIENTS.md "Partitioned deployments"). Only a version
//     served from a mapped index file (or from RocksDB) is held: its pages are
//     released from the RSS at once and fault back only when asked for; a
//     version whose index was built in anonymous memory would double it. The
//     store keeps a held version from retention with a hold that expires with
//     it (SnapshotStore::Hold). A rolled-back version is never held.
//   * The poll thread also watches <root> with inotify and polls at once when
//     CURRENT is replaced or written, so a version published on a local
//     filesystem is adopted within its load time; the periodic poll stays the
//     fallback (NFS and other filesystems whose changes inotify does not see,
//     or inotify unavailable: logged once). docs/SERVER.md "The refresher".
//   * Pin(version) serves a kept version and stops following CURRENT;
//     Pin(version, reject_active=true) is a rollback: the version that was
//     active is marked rolled back and the refresher never re-adopts it.
//
// Thread-safety: all public methods are thread-safe. mu_ guards the state and
// is never held across RocksDB I/O; load_mu_ serialises loads (polls and pins).
#ifndef GRAPHSIEVE_SERVER_SNAPSHOT_MANAGER_H_
#define GRAPHSIEVE_SERVER_SNAPSHOT_MANAGER_H_

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "core/snapshot/layered_snapshot_reader.h"
#include "core/snapshot/snapshot_reader.h"
#include "core/snapshot/version_opener.h"
#include "server/snapshot_source.h"

namespace graphsieve {

// One loaded, validated version. Immutable.
struct ServingSnapshot {
  std::string version;
  std::shared_ptr<const SnapshotReader> reader;  // nodes too: SnapshotReader::FindNode
  absl::Time loaded_at;
  absl::Time created_at = absl::InfinitePast();  // from the manifest; InfinitePast if unparsable
  double load_seconds = 0.0;
};

// The newest impression `snap` covers: a delta's covers_through, else its
// created_at; InfinitePast when neither parses. The freshness lag is now minus it.
absl::Time NewestCovered(const ServingSnapshot& snap);

struct RefreshEventRecord {
  std::string version;
  absl::Time at;
  bool ok = false;
  std::string message;  // "adopted", "pinned", "rolled back from X", or why it failed
  double load_seconds = 0.0;
};

// Opens one version with the manager's opener; the default is
// opener.Open(root, version, reader options). Tests may wrap it (fault
// injection through a wrapper, never by editing the code path).
using SnapshotLoader = std::function<absl::StatusOr<std::shared_ptr<const SnapshotReader>>(
    VersionOpener& opener, const std::string& root, const std::string& version)>;

struct SnapshotManagerOptions {
  std::string root;                     // <root>/CURRENT, <root>/<version>/
  double poll_interval_seconds = 10.0;  // 0 = once at Start(), < 0 = no thread
  // With an interval > 0: also poll at once when inotify reports CURRENT
  // replaced or written in <root> (the interval is then the fallback).
  bool watch_current = true;
  std::string pin_version;                   // start pinned to this version
  std::vector<std::string> reject_versions;  // never adopt these
  int history_size = 50;                     // refresh events kept
  SnapshotReaderOptions reader;              // used by the default loader
  // How long the version served before a swap stays open for requests that
  // ask for it by name (0 = not held). Ends early at the next swap.
  double hold_previous_seconds = 60.0;
  // The holder name of the store holds (SnapshotStore::Hold); "" = no store
  // hold (the version then depends on retention's newest-N rule).
  std::string holder;
  SnapshotLoader loader;  // empty = opener.Open(root, v, reader): a delta over its base
  // Called after every refresh event, outside all locks, with the snapshot now
  // serving (may be null). Used for metrics and readiness.
  std::function<void(const RefreshEventRecord&, const std::shared_ptr<const ServingSnapshot>&)>
      on_event;
  // Called (on the poll thread) for every poll the watch of CURRENT started.
  std::function<void()> on_watch_event;
  absl::Status Validate() const;
};

// What GetStatus reports.
struct ManagerState {
  std::shared_ptr<const ServingSnapshot> active;
  std::string held;             // the previous version still open for pinned requests ("" = none)
  std::string current_on_disk;  // empty when CURRENT is missing or unreadable
  std::string current_error;    // why CURRENT is unreadable, naming it ("" if fine or missing)
  std::vector<std::string> versions_on_disk;
  std::string pinned;
  std::vector<std::string> rejected;        // failed to load or rolled back, sorted
  std::vector<RefreshEventRecord> history;  // oldest first
  uint64_t refresh_successes = 0, refresh_failures = 0;
  bool watching_current = false;  // the inotify watch of <root> is in place
  uint64_t watch_events = 0;      // polls the watch started
};

class SnapshotManager {
 public:
  static absl::StatusOr<std::unique_ptr<SnapshotManager>> Create(SnapshotManagerOptions options);
  ~SnapshotManager();  // stops and joins the poll thread

  // The snapshot to serve, or null before the first successful load.
  std::shared_ptr<const ServingSnapshot> Current() const ABSL_LOCKS_EXCLUDED(mu_);

  // The snapshot named `version`: the active one, or the held previous one
  // while its hold lasts. Sets *held when it is the previous one. Errors:
  // UNAVAILABLE (nothing loaded yet), NOT_FOUND naming the requested version
  // and the ones this server holds.
  absl::StatusOr<std::shared_ptr<const ServingSnapshot>> Find(const std::string& version,
                                                              bool* held) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // Closes the held previous version when its hold has expired (the poll
  // thread calls it; Find never returns an expired one anyway).
  void ReleaseExpiredHold() ABSL_LOCKS_EXCLUDED(mu_);
  // Drops the held version's pages from the RSS again when no request asked
  // for it since the last call (the poll thread calls it every poll): pinned
  // requests during a swap fault pages back in, and they should not stay
  // resident for the rest of the hold once the parts agree again.
  void TrimHeld() ABSL_LOCKS_EXCLUDED(mu_);

  // Starts the poll thread (first poll at once). No poll thread when the
  // interval is negative; then only a --pin-version is loaded, once, before
  // returning. With an interval <= 0 a swap by Pin that holds the previous
  // version starts a thread that closes the hold when it ends, then exits.
  // REQUIRES: called at most once.
  void Start();
  // Stops the poll thread; idempotent.
  void Stop();

  // One poll: follow the pin, else CURRENT; load and swap if it names a new,
  // non-rejected version. OK when nothing changed or the new version was
  // adopted; the load error when it failed (also recorded).
  absl::Status PollOnce() ABSL_LOCKS_EXCLUDED(load_mu_, mu_);

  // Serves `version` (loading it unless active) and pins it; an empty version
  // unpins and follows CURRENT again. reject_active marks the version active
  // before the call as rolled back. Errors: INVALID_ARGUMENT (bad name),
  // NOT_FOUND / DATA_LOSS / ... from the load (the old version keeps serving),
  // FAILED_PRECONDITION (unpin with reject_active and no other version to serve).
  absl::Status Pin(const std::string& version, bool reject_active)
      ABSL_LOCKS_EXCLUDED(load_mu_, mu_);

  ManagerState State() const ABSL_LOCKS_EXCLUDED(mu_);
  // The inotify watch of <root>/CURRENT is in place (State().watching_current
  // without reading the disk).
  bool watching_current() const { return watching_.load(); }

  // The opener of this manager's versions (its counts: tests, metrics).
  const VersionOpener& opener() const { return opener_; }

 private:
  explicit SnapshotManager(SnapshotManagerOptions options);

  // Loads `version` and, on success, swaps it in. Records the event.
  absl::Status LoadAndSwap(const std::string& version, const std::string& ok_message)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(load_mu_) ABSL_LOCKS_EXCLUDED(mu_);
  void Record(RefreshEventRecord event, const std::shared_ptr<const ServingSnapshot>& now)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Makes `old` the held previous version when it is cheap to hold; returns
  // what is no longer held (the former previous, or `old` itself), to be
  // released outside the lock.
  std::vector<std::shared_ptr<const ServingSnapshot>> HoldPrevious(
      std::shared_ptr<const ServingSnapshot> old) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Store side of a hold change (best effort, logged); outside mu_.
  void SyncStoreHold(const std::string& released, const std::string& held, absl::Time until);
  // Drops the held version if it is `version` (a rollback). Outside mu_.
  void DropHeld(const std::string& version) ABSL_LOCKS_EXCLUDED(mu_);
  // Moves this server's retention pin in the store (best effort, logged).
  void SyncStorePin(const std::string& previous, const std::string& next);
  // Starts Run on thread_ unless it runs or Stop was called; `poll` = poll at
  // once (Start) rather than only close holds (Pin with no poll thread).
  void StartThread(bool poll) ABSL_LOCKS_EXCLUDED(mu_, thread_mu_);
  // Polls every interval (when `poll`) and at once when the watch of CURRENT
  // fires, and closes the held version when its hold ends; returns when there
  // is neither to wait for, or on Stop.
  void Run(bool poll);

  // Opens every version this manager serves and shares the bases of deltas
  // (version_opener.h); thread-safe.
  VersionOpener opener_;
  // Constant after construction.
  const SnapshotManagerOptions options_;
  const SnapshotSource source_;

  absl::Mutex load_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable absl::Mutex mu_;
  std::shared_ptr<const ServingSnapshot> active_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const ServingSnapshot> previous_ ABSL_GUARDED_BY(mu_);  // held, may be null
  absl::Time previous_until_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  std::string pinned_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::string> rejected_ ABSL_GUARDED_BY(mu_);  // version -> why
  std::deque<RefreshEventRecord> history_ ABSL_GUARDED_BY(mu_);
  std::string last_current_error_ ABSL_GUARDED_BY(mu_);  // logged once per distinct error
  uint64_t successes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t failures_ ABSL_GUARDED_BY(mu_) = 0;

  mutable std::atomic<uint64_t> held_reads_{0};  // Find() answers from previous_ since TrimHeld
  bool running_ ABSL_GUARDED_BY(mu_) = false;    // Run is on thread_ (or about to be)
  absl::Notification stop_;
  // An eventfd Stop() writes to, so the poll thread's poll(2) on the watch
  // returns at once; -1 when it could not be made (then no watch).
  int wake_fd_ = -1;
  std::atomic<bool> watching_{false};      // the watch of <root> is in place
  std::atomic<uint64_t> watch_events_{0};  // polls the watch started
  absl::Mutex thread_mu_;                  // never held together with mu_
  std::thread thread_ ABSL_GUARDED_BY(thread_mu_);
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_SERVER_SNAPSHOT_MANAGER_H_
