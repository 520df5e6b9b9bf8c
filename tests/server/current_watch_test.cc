// The refresher's inotify watch of CURRENT (server/snapshot_manager.h): with a
// poll interval of an hour, a version published the way the builder publishes
// (the store renames CURRENT.tmp over CURRENT) is adopted at once; with
// --watch-current=false only a poll adopts it. Real snapshots, real files.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/server.h"
#include "server/snapshot_manager.h"
#include "tests/server/test_snapshots.h"
#include "tests/temp_dir.h"

namespace graphsieve {
namespace {

using ::testing::ElementsAre;
using testing::SyntheticSnapshot;

// Far longer than the failure bound below: a version adopted within the
// bound was adopted by the watch, not by the periodic poll.
constexpr double kHourPoll = 3600.0;
// A failure bound only (a loaded machine), never what the test waits for.
const absl::Duration kBound = absl::Seconds(60);

// The versions a manager adopted, in order, and a wait for one of them.
class Adoptions {
 public:
  void Add(const RefreshEventRecord& e) {
    absl::MutexLock lock(&mu_);
    if (e.ok) versions_.push_back(e.version);
  }
  // True once `version` was adopted; false when the bound passed first.
  bool WaitFor(const std::string& version) {
    absl::MutexLock lock(&mu_);
    auto adopted = [&] {
      mu_.AssertHeld();
      for (const std::string& v : versions_) {
        if (v == version) return true;
      }
      return false;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&adopted), kBound);
  }
  std::vector<std::string> versions() {
    absl::MutexLock lock(&mu_);
    return versions_;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> versions_ ABSL_GUARDED_BY(mu_);
};

std::unique_ptr<SnapshotManager> StartManager(const std::string& root, bool watch,
                                              Adoptions* adoptions,
                                              std::vector<std::string>* loads = nullptr) {
  SnapshotManagerOptions o;
  o.root = root;
  o.poll_interval_seconds = kHourPoll;
  o.watch_current = watch;
  o.hold_previous_seconds = 0;
  o.on_event = [adoptions](const RefreshEventRecord& e,
                           const std::shared_ptr<const ServingSnapshot>&) { adoptions->Add(e); };
  if (loads != nullptr) {
    // Records every load (the poll thread and PollOnce both go through it).
    o.loader = [loads](VersionOpener& opener, const std::string& r, const std::string& v) {
      loads->push_back(v);  // loads are serialised by the manager's load lock
      return opener.Open(r, v, SnapshotReaderOptions());
    };
  }
  absl::StatusOr<std::unique_ptr<SnapshotManager>> m = SnapshotManager::Create(std::move(o));
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return nullptr;
  (*m)->Start();
  return *std::move(m);
}

TEST(CurrentWatchTest, PublishedVersionIsAdoptedAtOnceDespiteAnHourPoll) {
  const std::string root = testing::NewTempDir("watch");
  auto v1 = testing::PublishSnapshot(root, SyntheticSnapshot::Make(1));
  ASSERT_TRUE(v1.ok()) << v1.status();
  Adoptions adoptions;
  std::unique_ptr<SnapshotManager> m = StartManager(root, /*watch=*/true, &adoptions);
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(adoptions.WaitFor(*v1)) << "the first poll did not adopt " << *v1;
  EXPECT_TRUE(m->State().watching_current);
  EXPECT_EQ(m->State().watch_events, 0u);

  // Two more publishes, each through the store (CURRENT.tmp renamed over CURRENT).
  auto v2 = testing::PublishSnapshot(root, SyntheticSnapshot::Make(2));
  ASSERT_TRUE(v2.ok()) << v2.status();
  ASSERT_TRUE(adoptions.WaitFor(*v2)) << "not adopted within the bound: the watch did not fire";
  auto v3 = testing::PublishSnapshot(root, SyntheticSnapshot::Make(3));
  ASSERT_TRUE(v3.ok()) << v3.status();
  ASSERT_TRUE(adoptions.WaitFor(*v3)) << "not adopted within the bound: the watch did not fire";
  EXPECT_THAT(adoptions.versions(), ElementsAre(*v1, *v2, *v3));
  EXPECT_EQ(m->Current()->version, *v3);
  EXPECT_GE(m->State().watch_events, 2u);
  m->Stop();  // returns at once: the eventfd wakes the thread out of poll(2)
  EXPECT_FALSE(m->State().watching_current);
}

TEST(CurrentWatchTest, RollbackOfCurrentByHandIsSeenToo) {
  // An operator pointing CURRENT back at a kept version (the store's
  // SetCurrent, the same rename) is a change of CURRENT as well.
  const std::string root = testing::NewTempDir("watch-back");
  auto v1 = testing::PublishSnapshot(root, SyntheticSnapshot::Make(1));
  ASSERT_TRUE(v1.ok()) << v1.status();
  auto v2 = testing::PublishSnapshot(root, SyntheticSnapshot::Make(2));
  ASSERT_TRUE(v2.ok()) << v2.status();
  Adoptions adoptions;
  std::unique_ptr<SnapshotManager> m = StartManager(root, /*watch=*/true, &adoptions);
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(adoptions.WaitFor(*v2));
  ASSERT_TRUE(testing::SetCurrent(root, *v1).ok());
  ASSERT_TRUE(adoptions.WaitFor(*v1)) << "CURRENT set back to " << *v1 << " was not adopted";
  EXPECT_EQ(m->Current()->version, *v1);
}

TEST(CurrentWatchTest, WithoutTheWatchOnlyAPollAdopts) {
  const std::string root = testing::NewTempDir("nowatch");
  auto v1 = testing::PublishSnapshot(root, SyntheticSnapshot::Make(1));
  ASSERT_TRUE(v1.ok()) << v1.status();
  Adoptions adoptions;
  std::vector<std::string> loads;
  std::unique_ptr<SnapshotManager> m = StartManager(root, /*watch=*/false, &adoptions, &loads);
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(adoptions.WaitFor(*v1));
  EXPECT_FALSE(m->State().watching_current);

  auto v2 = testing::PublishSnapshot(root, SyntheticSnapshot::Make(2));
  ASSERT_TRUE(v2.ok()) << v2.status();
  // Nothing polls for an hour: the published version is not served and was
  // never even loaded until PollOnce.
  EXPECT_EQ(m->Current()->version, *v1);
  ASSERT_TRUE(m->PollOnce().ok());
  EXPECT_EQ(m->Current()->version, *v2);
  EXPECT_THAT(loads, ElementsAre(*v1, *v2));
  EXPECT_THAT(adoptions.versions(), ElementsAre(*v1, *v2));
  EXPECT_EQ(m->State().watch_events, 0u);
}

TEST(CurrentWatchTest, ServerCountsWatchEventsAndReportsTheFlag) {
  const std::string root = testing::NewTempDir("watch-server");
  auto v1 = testing::PublishSnapshot(root, SyntheticSnapshot::Make(1));
  ASSERT_TRUE(v1.ok()) << v1.status();
  ServerOptions o = testing::LoopbackOptions(root);
  o.admin_port = 0;
  o.poll_interval_seconds = kHourPoll;
  auto server = GraphsieveServer::Create(o);
  ASSERT_TRUE(server.ok()) << server.status();
  auto serving = [&](const std::string& version) {
    auto active = (*server)->manager().Current();
    return active != nullptr && active->version == version;
  };
  // The first poll runs on the manager's thread; a bounded wait for its state.
  for (int k = 0; k < 1200 && !serving(*v1); ++k) absl::SleepFor(absl::Milliseconds(50));
  ASSERT_TRUE(serving(*v1));
  auto v2 = testing::PublishSnapshot(root, SyntheticSnapshot::Make(2));
  ASSERT_TRUE(v2.ok()) << v2.status();
  for (int k = 0; k < 1200 && !serving(*v2); ++k) absl::SleepFor(absl::Milliseconds(50));
  ASSERT_TRUE(serving(*v2)) << "not adopted within the bound: the watch did not fire";

  auto metrics = testing::HttpGet((*server)->admin_port(), "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  const std::string& text = metrics->second;
  const std::string name = "\ngraphsieve_snapshot_watch_events_total ";
  const size_t at = text.find(name);
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_GE(std::stod(text.substr(at + name.size())), 1.0);

  auto status = testing::HttpGet((*server)->admin_port(), "/status.json");
  ASSERT_TRUE(status.ok()) << status.status();
  const nlohmann::json j = nlohmann::json::parse(status->second);
  EXPECT_EQ(j["watch_current"], true);
  EXPECT_EQ(j["watching_current"], true);
}

}  // namespace
}  // namespace graphsieve
