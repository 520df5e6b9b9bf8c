// The version profiler's queue (server/version_profiler.h): one scan per
// version however often the refresher reports it, a return to an earlier
// version profiled again, and the scan thread's lower CPU priority. Scans run
// on real snapshots (real RocksDB); a hook holds a scan in progress.
#include "server/version_profiler.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "core/snapshot/version_opener.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/server/test_snapshots.h"
#include "tests/temp_dir.h"

namespace graphsieve {
namespace {

using ::testing::ElementsAre;

class VersionProfilerTest : public ::testing::Test {
 protected:
  // Publishes generation `g` and opens it as a serving version.
  std::shared_ptr<const ServingSnapshot> Version(int g) {
    absl::StatusOr<std::string> v =
        testing::PublishSnapshot(dir_.path(), testing::SyntheticSnapshot::Make(g));
    EXPECT_TRUE(v.ok()) << v.status();
    absl::StatusOr<std::shared_ptr<const SnapshotReader>> reader =
        VersionOpener().OpenStored(dir_.path(), *v, SnapshotReaderOptions{});
    EXPECT_TRUE(reader.ok()) << reader.status();
    auto snap = std::make_shared<ServingSnapshot>();
    snap->version = *v;
    snap->reader = *reader;
    return snap;
  }

  // Options whose hook records each scan and holds the first scan that
  // starts while `hold_` is set until `release_`.
  VersionProfilerOptions Recording() {
    VersionProfilerOptions o;
    o.on_scan_started = [this](const std::string& version) {
      bool hold = false;
      {
        absl::MutexLock lock(&mu_);
        scans_.push_back(version);
        nice_seen_ = ::getpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()));
        hold = hold_;
      }
      if (hold && !scan_started_.HasBeenNotified()) {  // the first held scan only
        scan_started_.Notify();
        release_.WaitForNotification();
      }
    };
    o.on_done = [this](const RateProfile& profile, const VersionComparison*) {
      absl::MutexLock lock(&mu_);
      done_.push_back(profile.version);
    };
    return o;
  }

  std::vector<std::string> Scans() {
    absl::MutexLock lock(&mu_);
    return scans_;
  }
  std::vector<std::string> Done() {
    absl::MutexLock lock(&mu_);
    return done_;
  }

  testing::ScopedTempDir dir_{"profiler"};
  absl::Mutex mu_;
  std::vector<std::string> scans_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> done_ ABSL_GUARDED_BY(mu_);
  int nice_seen_ ABSL_GUARDED_BY(mu_) = 0;
  bool hold_ ABSL_GUARDED_BY(mu_) = false;
  absl::Notification scan_started_, release_;
};

TEST_F(VersionProfilerTest, AVersionReportedTwiceDuringItsScanIsScannedOnce) {
  std::shared_ptr<const ServingSnapshot> v1 = Version(1);
  {
    absl::MutexLock lock(&mu_);
    hold_ = true;
  }
  VersionProfiler profiler(Recording());
  profiler.OnServing(v1);
  scan_started_.WaitForNotification();  // v1's scan is in progress
  profiler.OnServing(v1);               // e.g. "pinned" after "adopted"
  release_.Notify();
  profiler.WaitIdle();
  EXPECT_THAT(Scans(), ElementsAre(v1->version));
  EXPECT_THAT(Done(), ElementsAre(v1->version));
  // Once profiled and idle, the same version again is not scanned either.
  profiler.OnServing(v1);
  profiler.WaitIdle();
  EXPECT_THAT(Scans(), ElementsAre(v1->version));
}

TEST_F(VersionProfilerTest, AReturnToTheVersionBeforeTheOneInProgressIsProfiledAgain) {
  std::shared_ptr<const ServingSnapshot> v1 = Version(1);
  std::shared_ptr<const ServingSnapshot> v2 = Version(2);
  VersionProfiler profiler(Recording());
  profiler.OnServing(v1);
  profiler.WaitIdle();
  {
    absl::MutexLock lock(&mu_);
    hold_ = true;
  }
  profiler.OnServing(v2);
  scan_started_.WaitForNotification();  // v2 in progress, v1 the last profiled
  profiler.OnServing(v1);               // rolled back to v1
  profiler.OnServing(v1);               // and reported again while queued
  {
    absl::MutexLock lock(&mu_);
    hold_ = false;
  }
  release_.Notify();
  profiler.WaitIdle();
  EXPECT_THAT(Scans(), ElementsAre(v1->version, v2->version, v1->version));
  EXPECT_THAT(Done(), ElementsAre(v1->version, v2->version, v1->version));
  EXPECT_EQ(profiler.ToJson()["rate_profile"]["version"], v1->version);
}

TEST_F(VersionProfilerTest, TheScanRunsAtTheConfiguredNiceness) {
  const int process_nice = ::getpriority(PRIO_PROCESS, 0);
  VersionProfilerOptions o = Recording();
  o.nice = 7;
  {
    VersionProfiler profiler(o);
    profiler.OnServing(Version(1));
    profiler.WaitIdle();
  }
  absl::MutexLock lock(&mu_);
  EXPECT_EQ(nice_seen_, std::min(19, process_nice + 7));
}

}  // namespace
}  // namespace graphsieve
