// Memory across many swaps (docs/SERVER.md "Memory across many swaps"): the
// two causes of the anonymous RSS that grew with every version swap, each
// checked by a count that is exact, not by an RSS threshold.
//   * A mapped version opened RocksDB for the version profiler's scan and kept
//     it open (table readers: index and filter blocks) while it served and
//     while it was held: after K swaps no RocksDB instance may stay open.
//   * glibc's dynamic mmap threshold: after ConfigureServerAllocator a freed
//     large block must not move large blocks into the arenas (mallinfo2's
//     count of mmapped blocks tells where a block came from).
#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "core/snapshot/snapshot_reader.h"
#include "gtest/gtest.h"
#include "server/allocator.h"
#include "server/server.h"
#include "tests/server/test_snapshots.h"
#include "tests/temp_dir.h"

namespace graphsieve {
namespace {

using testing::SyntheticSnapshot;

TEST(MemorySwapsTest, NoRocksDbStaysOpenAfterManySwapsOfMappedVersions) {
  const std::string root = testing::NewTempDir("memory-swaps");
  auto a = testing::PublishSnapshot(root, SyntheticSnapshot::Make(1));
  ASSERT_TRUE(a.ok()) << a.status();
  auto b = testing::PublishSnapshot(root, SyntheticSnapshot::Make(2));
  ASSERT_TRUE(b.ok()) << b.status();
  auto server = GraphsieveServer::Create(testing::LoopbackOptions(root));
  ASSERT_TRUE(server.ok()) << server.status();
  GraphsieveServer& s = **server;
  constexpr int kSwaps = 8;
  for (int k = 0; k <= kSwaps; ++k) {
    const std::string& next = k % 2 == 0 ? *a : *b;
    ASSERT_TRUE(testing::SetCurrent(root, next).ok());
    ASSERT_TRUE(s.manager().PollOnce().ok());
    s.profiler().WaitIdle();  // the profiler has scanned `next`'s pairs
    ASSERT_EQ(s.manager().Current()->version, next);
    ASSERT_TRUE(s.manager().Current()->reader->load_stats().index_mapped) << "swap " << k;
    const nlohmann::json profile = s.profiler().ToJson()["rate_profile"];
    ASSERT_TRUE(profile.is_object()) << "swap " << k;
    EXPECT_EQ(profile["version"], next) << "swap " << k;
    EXPECT_GT(profile["pairs"].get<uint64_t>(), 0u) << "swap " << k;
    // Serving (and holding) a mapped version needs no RocksDB; the scan's
    // instance closed with the scan.
    EXPECT_EQ(s.manager().opener().OpenRocksDbInstances(), 0) << "swap " << k;
  }
  EXPECT_FALSE(s.manager().State().held.empty());  // a held version too, and still none open
}

// Where a block of `bytes` comes from: true when glibc mapped it on its own.
bool AllocationIsMapped(size_t bytes) {
  const size_t before = mallinfo2().hblks;
  char* p = static_cast<char*>(std::malloc(bytes));
  std::memset(p, 1, bytes);
  asm volatile("" : : "r"(p) : "memory");  // keep the block
  const bool mapped = mallinfo2().hblks == before + 1;
  std::free(p);
  return mapped;
}

// True in a sanitizer build: ASan and TSan replace malloc with their own
// allocator, so glibc's thresholds and mallinfo2 say nothing about where a block
// came from (under TSan the control passed only because mallinfo2 never moves).
constexpr bool kSanitizerAllocator =
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
    true;
#else
    false;
#endif

bool EnvironmentSetsThresholds() {
  const char* t = std::getenv("GLIBC_TUNABLES");
  return (t != nullptr && std::strstr(t, "threshold") != nullptr) ||
         std::getenv("MALLOC_MMAP_THRESHOLD_") != nullptr ||
         std::getenv("MALLOC_TRIM_THRESHOLD_") != nullptr;
}

// The control (its own process under ctest): glibc's default behaviour, the
// one behind the growth. A freed 4 MiB block raises the mmap threshold, and
// the next one comes from an arena.
// Runs `body` in a fresh process (a death-test child that re-executes this
// binary with only the current test) and expects it to exit 0. glibc's
// thresholds and the free space at the top of its heap are process-wide: run
// in one process after the control, which leaves a freed 4 MiB block at the
// heap's top, the allocator test's next 4 MiB block came from that free top
// whatever the threshold (ctest runs each test in its own process; running
// the binary whole failed every time).
void ExpectInFreshProcess(void (*body)()) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        body();
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

// A failed check in the child: says which, exits non-zero.
[[noreturn]] void FailInChild(const std::string& what) {
  std::fprintf(stderr, "%s\n", what.c_str());
  std::_Exit(1);
}

TEST(MemorySwapsTest, ControlByDefaultAFreedLargeBlockMovesTheNextIntoAnArena) {
  if (kSanitizerAllocator) GTEST_SKIP() << "a sanitizer's allocator replaces glibc malloc";
  if (EnvironmentSetsThresholds()) GTEST_SKIP() << "thresholds set in the environment";
  ExpectInFreshProcess([] {
    (void)AllocationIsMapped(4 << 20);
    if (AllocationIsMapped(4 << 20)) FailInChild("the second 4 MiB block was mapped too");
  });
}

TEST(MemorySwapsTest, WithTheServerAllocatorLargeBlocksStayMapped) {
  if (kSanitizerAllocator) GTEST_SKIP() << "a sanitizer's allocator replaces glibc malloc";
  if (EnvironmentSetsThresholds()) GTEST_SKIP() << "thresholds set in the environment";
  ExpectInFreshProcess([] {
    std::string note;
    const absl::Status status = ConfigureServerAllocator({}, &note);
    if (!status.ok()) FailInChild(status.ToString());
    if (note.find("fixed") == std::string::npos) FailInChild("note without \"fixed\": " + note);
    for (int i = 0; i < 4; ++i) {
      if (!AllocationIsMapped(4 << 20))
        FailInChild("4 MiB block " + std::to_string(i) + " not mapped");
      if (!AllocationIsMapped(1 << 20))
        FailInChild("1 MiB block " + std::to_string(i) + " not mapped");
    }
  });
}

TEST(MemorySwapsTest, AllocatorOptionsAreValidated) {
  AllocatorOptions o;
  o.mmap_threshold_bytes = size_t{64} << 20;
  std::string note;
  absl::Status s = ConfigureServerAllocator(o, &note);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(s.message()).find("mmap_threshold_bytes"), std::string::npos) << s;
  o = AllocatorOptions();
  o.trim_threshold_bytes = 0;
  EXPECT_EQ(ConfigureServerAllocator(o, &note).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace graphsieve
