// SnapshotStore: CURRENT, version ids, publish, stale temporaries, the
// publisher lock, retention and pins — on a real directory tree.
#include "core/snapshot/snapshot_store.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "core/snapshot/file_util.h"
#include "gtest/gtest.h"
#include "tests/temp_dir.h"

namespace graphsieve {
namespace {

using ::graphsieve::testing::ScopedTempDir;
namespace fs = std::filesystem;

std::unique_ptr<SnapshotStore> MakeStore(const std::string& root) {
  auto store = SnapshotStore::Create({root, /*create_if_missing=*/true});
  EXPECT_TRUE(store.ok()) << store.status();
  return std::move(*store);
}

// A stand-in version directory (the store never looks inside one).
std::string FakePublish(const SnapshotStore& store, const PublishLock& lock, int second) {
  const absl::Time t = absl::FromUnixSeconds(1700000000 + second);
  std::string v = store.NewVersionId(lock, t, 0xabc);
  fs::create_directories(store.TempDir(v));
  std::ofstream(store.TempDir(v) + "/MANIFEST.json") << "{}";
  absl::Status s = store.Publish(lock, v);
  EXPECT_TRUE(s.ok()) << s;
  return v;
}

TEST(SnapshotStoreTest, VersionIds) {
  const std::string v = SnapshotStore::MakeVersionId(absl::FromUnixSeconds(1764110701), 0x1234abcd);
  EXPECT_EQ(v, "20251125T224501Z-1234abcd");
  EXPECT_TRUE(SnapshotStore::IsValidVersionId(v));
  EXPECT_TRUE(SnapshotStore::IsValidVersionId(v + "-2"));
  EXPECT_FALSE(SnapshotStore::IsValidVersionId(v + ".tmp"));
  EXPECT_FALSE(SnapshotStore::IsValidVersionId("../etc"));
  EXPECT_FALSE(SnapshotStore::IsValidVersionId("20251125T224501Z-1234ABCD"));
}

TEST(SnapshotStoreTest, MissingRootIsNotFoundUnlessCreated) {
  ScopedTempDir dir;
  auto s = SnapshotStore::Create({dir.path() + "/nope", false});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(s.status().message(), "nope"));
  EXPECT_EQ(SnapshotStore::Create({"", true}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(SnapshotStoreTest, PublishMovesTempAndReplacesCurrent) {
  ScopedTempDir dir;
  auto store = MakeStore(dir.path());
  EXPECT_EQ(store->ReadCurrent().status().code(), absl::StatusCode::kNotFound);
  auto lock = store->AcquirePublishLock(0);
  ASSERT_TRUE(lock.ok());
  const std::string a = FakePublish(*store, **lock, 0);
  EXPECT_EQ(*store->ReadCurrent(), a);
  EXPECT_FALSE(fs::exists(store->TempDir(a)));
  // Same second, same hash: a distinct, later-sorting id (time advanced 1 s).
  const std::string b = FakePublish(*store, **lock, 0);
  EXPECT_EQ(b, SnapshotStore::MakeVersionId(absl::FromUnixSeconds(1700000001), 0xabc));
  // Same second, a smaller hash than the latest: still sorts after it.
  const std::string c = store->NewVersionId(**lock, absl::FromUnixSeconds(1700000000), 0x1);
  EXPECT_GT(c, b);
  EXPECT_EQ(*store->ReadCurrent(), b);
  EXPECT_EQ(*store->ListVersions(), (std::vector<std::string>{a, b}));
  EXPECT_LT(a, b);
  ASSERT_TRUE(store->SetCurrent(**lock, a).ok());
  EXPECT_EQ(*store->ReadCurrent(), a);
  EXPECT_EQ(store->SetCurrent(**lock, "20200101T000000Z-00000000").code(),
            absl::StatusCode::kNotFound);
  // Publishing a version that has no temp dir fails and leaves CURRENT alone.
  EXPECT_FALSE(store->Publish(**lock, "20300101T000000Z-00000000").ok());
  EXPECT_EQ(*store->ReadCurrent(), a);
}

// The one place that maps a version to its directory (VersionOpener::OpenStored asks it).
TEST(SnapshotStoreTest, PublishedVersionDirChecksTheIdAndThePublication) {
  ScopedTempDir dir;
  auto store = MakeStore(dir.path());
  auto lock = store->AcquirePublishLock(0);
  ASSERT_TRUE(lock.ok());
  const std::string a = FakePublish(*store, **lock, 0);
  auto found = store->PublishedVersionDir(a);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(*found, store->VersionDir(a));
  EXPECT_EQ(store->PublishedVersionDir("20200101T000000Z-00000000").status().code(),
            absl::StatusCode::kNotFound);
  // Not version ids: no path is built from them.
  for (const std::string bad : {"", "../x", ".hidden", "a/b", "v1"}) {
    EXPECT_EQ(store->PublishedVersionDir(bad).status().code(), absl::StatusCode::kInvalidArgument)
        << "'" << bad << "'";
  }
  // A version being written is not published.
  const std::string tmp = store->NewVersionId(**lock, absl::FromUnixSeconds(1800000000), 1);
  fs::create_directories(store->TempDir(tmp));
  EXPECT_EQ(store->PublishedVersionDir(tmp).status().code(), absl::StatusCode::kNotFound);
}

TEST(SnapshotStoreTest, CorruptCurrentIsDataLoss) {
  ScopedTempDir dir;
  auto store = MakeStore(dir.path());
  std::ofstream(dir.path() + "/CURRENT") << "garbage\n";
  auto c = store->ReadCurrent();
  EXPECT_EQ(c.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(c.status().message(), "CURRENT")) << c.status();
  std::ofstream(dir.path() + "/CURRENT") << "20200101T000000Z-00000000\n";
  EXPECT_EQ(store->ReadCurrent().status().code(), absl::StatusCode::kDataLoss);
}

TEST(SnapshotStoreTest, StaleTemporariesAreRemovedButVersionsKept) {
  ScopedTempDir dir;
  auto store = MakeStore(dir.path());
  auto lock = store->AcquirePublishLock(0);
  const std::string a = FakePublish(*store, **lock, 0);
  fs::create_directories(dir.path() + "/20990101T000000Z-00000001.tmp/db");
  fs::create_directories(dir.path() + "/20990101T000000Z-00000002.deleting");
  std::ofstream(dir.path() + "/CURRENT.tmp") << "x";
  auto removed = store->RemoveStaleTemporaries(**lock);
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(removed->size(), 3u);
  EXPECT_EQ(*store->ListVersions(), std::vector<std::string>{a});
  EXPECT_EQ(*store->ReadCurrent(), a);
}

TEST(SnapshotStoreTest, OnlyOnePublisherAtATime) {
  ScopedTempDir dir;
  auto store = MakeStore(dir.path());
  auto first = store->AcquirePublishLock(0);
  ASSERT_TRUE(first.ok());
  auto second = store->AcquirePublishLock(0.2);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(second.status().message(), "LOCK")) << second.status();
  first->reset();
  EXPECT_TRUE(store->AcquirePublishLock(0).ok());
}

TEST(SnapshotStoreTest, RetentionKeepsNewestCurrentAndPinned) {
  ScopedTempDir dir;
  auto store = MakeStore(dir.path());
  auto lock = store->AcquirePublishLock(0);
  std::vector<std::string> v;
  for (int i = 0; i < 6; ++i) v.push_back(FakePublish(*store, **lock, i * 10));
  ASSERT_TRUE(store->Pin(v[0], "canary baseline").ok());
  ASSERT_TRUE(store->SetCurrent(**lock, v[1]).ok());  // rolled back to v1
  auto deleted = store->ApplyRetention(**lock, 2);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, (std::vector<std::string>{v[2], v[3]}));
  EXPECT_EQ(*store->ListVersions(), (std::vector<std::string>{v[0], v[1], v[4], v[5]}));
  EXPECT_EQ(*store->ListPins(), std::vector<std::string>{v[0]});
  auto note = snapshot::ReadFileToString(dir.path() + "/pins/" + v[0]);
  EXPECT_EQ(*note, "canary baseline\n");
  // Unpinned, v0 goes at the next retention; CURRENT (v1) still stays.
  ASSERT_TRUE(store->Unpin(v[0]).ok());
  deleted = store->ApplyRetention(**lock, 1);
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(*deleted, (std::vector<std::string>{v[0], v[4]}));
  EXPECT_EQ(*store->ListVersions(), (std::vector<std::string>{v[1], v[5]}));
  EXPECT_EQ(store->ApplyRetention(**lock, 0).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(SnapshotStoreTest, PinErrors) {
  ScopedTempDir dir;
  auto store = MakeStore(dir.path());
  auto lock = store->AcquirePublishLock(0);
  const std::string a = FakePublish(*store, **lock, 0);
  absl::Status s = store->Pin("20200101T000000Z-00000000", "x");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(s.message(), "20200101T000000Z-00000000")) << s;
  EXPECT_EQ(store->Pin("../../etc", "x").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store->Unpin(a).code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(store->Pin(a, "one").ok());
  ASSERT_TRUE(store->Pin(a, "two").ok());  // re-pin replaces the note
  EXPECT_TRUE(store->IsPinned(a));
  EXPECT_EQ(*snapshot::ReadFileToString(dir.path() + "/pins/" + a), "two\n");
  ASSERT_TRUE(store->Unpin(a).ok());
  EXPECT_FALSE(store->IsPinned(a));
}

}  // namespace
}  // namespace graphsieve
