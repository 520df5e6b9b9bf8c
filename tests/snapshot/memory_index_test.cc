// MemoryIndex on its own: every stored pair and node reads back exactly,
// absent pairs (unknown user, unknown item, unseen pair of known nodes) are
// not found, and inconsistent input is DATA_LOSS naming what is wrong.
#include "core/snapshot/memory_index.h"

#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/temp_dir.h"

namespace graphsieve {
namespace {

struct Input {
  std::vector<uint64_t> users, items;
  std::map<std::pair<uint64_t, uint64_t>, float> pairs;
  int sketch_dim = 3;
};

Input MakeInput(size_t users, size_t items, size_t pairs, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Input in;
  for (size_t u = 0; u < users; ++u) in.users.push_back(rng() | 1);             // odd ids
  for (size_t i = 0; i < items; ++i) in.items.push_back(rng() & ~uint64_t{1});  // even ids
  std::uniform_real_distribution<float> unit(0.01f, 1.0f);
  while (in.pairs.size() < pairs) {
    in.pairs[{in.users[rng() % users], in.items[rng() % items]}] = unit(rng);
  }
  return in;
}

NodeRecord RecordFor(uint64_t id) {
  NodeRecord r;
  r.component = static_cast<uint32_t>(id % 7);
  r.degree = static_cast<uint32_t>(id % 1000);
  r.mean_rate = static_cast<float>(id % 100) / 100.0f;
  return r;
}

absl::StatusOr<std::unique_ptr<const MemoryIndex>> BuildFrom(
    const Input& in, uint64_t expected_pairs,
    const std::vector<std::pair<uint64_t, uint64_t>>& extra_pairs = {}, bool duplicate_node = false,
    RegionOrder layout = RegionOrder::kKeyOrdered) {
  return MemoryIndex::Build(
      in.sketch_dim, expected_pairs,
      [&](const MemoryIndex::NodeSink& fn) {
        for (int side = 0; side < 2; ++side) {
          for (uint64_t id : side ? in.items : in.users) {
            std::vector<float> sketch(in.sketch_dim, static_cast<float>(id % 13));
            fn(side == 1, id, RecordFor(id), sketch);
          }
        }
        if (duplicate_node) fn(false, in.users[0], RecordFor(0), std::vector<float>(3));
        return absl::OkStatus();
      },
      [&](const MemoryIndex::PairSink& fn) {
        for (const auto& [key, rate] : in.pairs) fn(key.first, key.second, rate);
        for (const auto& [u, i] : extra_pairs) fn(u, i, 0.5f);
        return absl::OkStatus();
      },
      layout);
}

TEST(MemoryIndexTest, EveryPairAndNodeReadsBackAndAbsentPairsAreNotFound) {
  Input in = MakeInput(200, 300, 20000, 1);
  auto index = BuildFrom(in, in.pairs.size());
  ASSERT_TRUE(index.ok()) << index.status();
  const MemoryIndex& m = **index;
  EXPECT_EQ(m.pairs(), in.pairs.size());
  EXPECT_EQ(m.users(), 200u);
  EXPECT_EQ(m.items(), 300u);
  EXPECT_GT(m.memory_bytes(), in.pairs.size() * 8);

  // Stored pairs in a shuffled order, then absent ones of every kind.
  std::vector<uint64_t> users, items;
  std::vector<int> expect;  // 1 = stored
  std::vector<float> want;
  for (const auto& [key, rate] : in.pairs) {
    users.push_back(key.first);
    items.push_back(key.second);
    expect.push_back(1);
    want.push_back(rate);
  }
  std::mt19937_64 rng(2);
  for (int k = 0; k < 5000; ++k) {
    const uint64_t u = in.users[rng() % in.users.size()];
    const uint64_t i = in.items[rng() % in.items.size()];
    const int kind = k % 3;
    users.push_back(kind == 1 ? u + 1 : u);  // even = unknown user
    items.push_back(kind == 2 ? i + 1 : i);  // odd = unknown item
    const bool stored = kind == 0 && in.pairs.count({u, i}) > 0;
    expect.push_back(stored ? 1 : 0);
    want.push_back(stored ? in.pairs.at({u, i}) : 0.0f);
  }
  std::vector<size_t> order(users.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<uint64_t> su(order.size()), si(order.size());
  for (size_t k = 0; k < order.size(); ++k) {
    su[k] = users[order[k]];
    si[k] = items[order[k]];
  }
  std::unique_ptr<bool[]> found(new bool[order.size()]);
  std::vector<float> rates(order.size(), -1.0f);
  m.LookupPairs(su, si, absl::MakeSpan(found.get(), order.size()), absl::MakeSpan(rates));
  size_t stored = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    ASSERT_EQ(found[k], expect[order[k]] == 1) << "entry " << k;
    ASSERT_EQ(rates[k], want[order[k]]) << "entry " << k;
    stored += found[k];
  }
  EXPECT_GT(stored, in.pairs.size());  // some random known pairs were stored too

  NodeView view;
  ASSERT_TRUE(m.FindNode(/*is_item=*/true, in.items[17], &view));
  EXPECT_EQ(view.record.degree, RecordFor(in.items[17]).degree);
  ASSERT_EQ(view.sketch.size(), 3u);
  EXPECT_EQ(view.sketch[2], static_cast<float>(in.items[17] % 13));
  EXPECT_FALSE(m.FindNode(/*is_item=*/false, in.items[17], &view));  // an item id, not a user
  EXPECT_FALSE(m.FindNode(/*is_item=*/true, in.items[17] + 1, &view));
}

// One batch through LookupPairs against one LookupPair per pair and the
// stored map; adds the batch's stored pairs to *stored.
::testing::AssertionResult BatchMatchesPlain(const MemoryIndex& m, const Input& in,
                                             absl::Span<const uint64_t> users,
                                             absl::Span<const uint64_t> items, size_t* stored) {
  const size_t n = users.size();
  std::unique_ptr<bool[]> found(new bool[n]);
  std::vector<float> rates(n, -1.0f);
  m.LookupPairs(users, items, absl::MakeSpan(found.get(), n), absl::MakeSpan(rates));
  for (size_t k = 0; k < n; ++k) {
    float plain = -1.0f;
    const bool plain_found = m.LookupPair(users[k], items[k], &plain);
    const auto want = in.pairs.find({users[k], items[k]});
    if (found[k] != plain_found || rates[k] != plain || plain_found != (want != in.pairs.end()) ||
        (plain_found && plain != want->second)) {
      return ::testing::AssertionFailure()
             << "batch of " << n << ", entry " << k << " (" << users[k] << ", " << items[k]
             << "): batched found " << found[k] << " rate " << rates[k] << ", plain found "
             << plain_found << " rate " << plain << ", stored " << (want != in.pairs.end());
    }
    *stored += found[k];
  }
  return ::testing::AssertionSuccess();
}

// The batched lookup (rounds of prefetches, the user found once for a run of
// its pairs) answers exactly what one plain lookup per pair answers, on
// random keys with misses of every kind, in batches whose sizes cut the
// rounds anywhere and with runs of one user; in both region layouts (the
// plain lookup probes to a free slot, the batched one of a key-ordered
// region stops at a larger item).
TEST(MemoryIndexTest, BatchedLookupMatchesThePlainOne) {
  for (RegionOrder layout : {RegionOrder::kInsertion, RegionOrder::kKeyOrdered}) {
    SCOPED_TRACE(layout == RegionOrder::kKeyOrdered ? "key-ordered regions" : "insertion order");
    Input in = MakeInput(3000, 500, 60000, 5);
    auto index = BuildFrom(in, in.pairs.size(), {}, false, layout);
    ASSERT_TRUE(index.ok()) << index.status();
    const MemoryIndex& m = **index;
    std::mt19937_64 rng(6);
    std::vector<std::pair<uint64_t, uint64_t>> stored_keys;
    for (const auto& entry : in.pairs) stored_keys.push_back(entry.first);
    std::vector<uint64_t> users, items;
    for (int k = 0; k < 40000; ++k) {
      uint64_t u = in.users[rng() % in.users.size()];
      uint64_t i = in.items[rng() % in.items.size()];
      switch (rng() % 5) {
        case 0:  // a stored pair
          std::tie(u, i) = stored_keys[rng() % stored_keys.size()];
          break;
        case 1:
          u = rng() & ~uint64_t{1};  // unknown user (even)
          break;
        case 2:
          i = rng() | 1;  // unknown item (odd)
          break;
        default:  // known nodes, stored or not
          break;
      }
      const int run = rng() % 4 == 0 ? 1 + static_cast<int>(rng() % 40) : 1;  // one user's run
      for (int r = 0; r < run; ++r) {
        users.push_back(u);
        items.push_back(r == 0 ? i : in.items[rng() % in.items.size()]);
      }
    }
    size_t stored = 0, at = 0;
    for (size_t size : {1, 31, 32, 33, 64, 1000, 1024, 4097}) {
      for (int rep = 0; rep < 4 && at + size <= users.size(); ++rep, at += size) {
        ASSERT_TRUE(BatchMatchesPlain(m, in, absl::MakeConstSpan(&users[at], size),
                                      absl::MakeConstSpan(&items[at], size), &stored));
      }
    }
    EXPECT_GT(stored, 1000u);         // the stored case was exercised
    EXPECT_LT(stored, at - at / 10);  // and so were the misses
  }
}

// Probes that run past their home cache line wait for their next line and go
// on later (LookupPairs), in any number: a user with thousands of pairs (long
// probes for absent items, regions across many lines) beside users of one to
// nine pairs (regions that start inside a line and wrap inside it), every item
// asked of every user, in batches that fill the waiting probes many times.
TEST(MemoryIndexTest, ProbesAcrossLinesAndWrappingMatchThePlainOne) {
  for (RegionOrder layout : {RegionOrder::kInsertion, RegionOrder::kKeyOrdered}) {
    SCOPED_TRACE(layout == RegionOrder::kKeyOrdered ? "key-ordered regions" : "insertion order");
    Input in = MakeInput(40, 6000, 0, 11);
    std::mt19937_64 rng(12);
    std::uniform_real_distribution<float> unit(0.01f, 1.0f);
    for (size_t u = 0; u < in.users.size(); ++u) {
      const size_t count = u == 0 ? 5000 : 1 + u % 9;
      for (size_t have = 0; have < count;) {
        const auto key = std::make_pair(in.users[u], in.items[rng() % in.items.size()]);
        have += in.pairs.emplace(key, unit(rng)).second;
      }
    }
    auto index = BuildFrom(in, in.pairs.size(), {}, false, layout);
    ASSERT_TRUE(index.ok()) << index.status();
    const MemoryIndex& m = **index;
    std::vector<uint64_t> users, items;
    for (uint64_t u : in.users) {
      for (size_t i = 0; i < in.items.size(); i += 1 + rng() % 3) {
        users.push_back(u);
        items.push_back(in.items[i]);
      }
    }
    std::vector<size_t> order(users.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::shuffle(order.begin(), order.end(), rng);
    size_t stored = 0;
    for (size_t size : {1024, 100, 7}) {
      for (size_t at = 0; at < order.size(); at += size) {
        const size_t n = std::min(size, order.size() - at);
        std::vector<uint64_t> bu(n), bi(n);
        for (size_t k = 0; k < n; ++k) {
          bu[k] = users[order[at + k]];
          bi[k] = items[order[at + k]];
        }
        ASSERT_TRUE(BatchMatchesPlain(m, in, bu, bi, &stored));
      }
    }
    EXPECT_GT(stored, 3 * 1000u);  // the large user's stored pairs, in each batch size
  }
}

// The layout is not in the file, so the reader must be told it: a key-ordered
// file reads back whole whether probed as key-ordered or plainly (a server
// that predates the field), and an insertion-order file only plainly: probed
// as key-ordered, probes stop at larger items before reaching stored ones.
TEST(MemoryIndexTest, AFileReadsBackWholeUnderTheRegionOrderItWasWrittenIn) {
  testing::ScopedTempDir dir;
  Input in = MakeInput(50, 2000, 30000, 21);
  std::vector<uint64_t> users, items;
  for (const auto& entry : in.pairs) {
    users.push_back(entry.first.first);
    items.push_back(entry.first.second);
  }
  const size_t n = users.size();
  for (RegionOrder written : {RegionOrder::kInsertion, RegionOrder::kKeyOrdered}) {
    auto built = BuildFrom(in, in.pairs.size(), {}, false, written);
    ASSERT_TRUE(built.ok()) << built.status();
    EXPECT_EQ((*built)->region_order(), written);
    const std::string path =
        dir.path() + (written == RegionOrder::kKeyOrdered ? "/key.gsi" : "/insertion.gsi");
    ASSERT_TRUE((*built)->WriteFile(path, IndexFileInfo{}).ok());
    for (RegionOrder read : {RegionOrder::kInsertion, RegionOrder::kKeyOrdered}) {
      MapFileOptions options;
      options.region_order = read;
      IndexFileInfo info;
      auto mapped = MemoryIndex::MapFile(path, in.sketch_dim, in.pairs.size(), options, &info);
      ASSERT_TRUE(mapped.ok()) << mapped.status();
      EXPECT_EQ((*mapped)->region_order(), read);
      std::unique_ptr<bool[]> found(new bool[n]);
      std::vector<float> rates(n);
      (*mapped)->LookupPairs(users, items, absl::MakeSpan(found.get(), n), absl::MakeSpan(rates));
      size_t lost = 0;
      for (size_t k = 0; k < n; ++k) lost += !found[k];
      if (written == RegionOrder::kInsertion && read == RegionOrder::kKeyOrdered) {
        EXPECT_GT(lost, n / 100) << "probes of an unordered file stop early";
      } else {
        EXPECT_EQ(lost, 0u) << "written " << static_cast<int>(written) << ", read "
                            << static_cast<int>(read);
      }
    }
  }
}

TEST(MemoryIndexTest, EmptyBatchAndEmptyTable) {
  Input in = MakeInput(3, 3, 0, 3);
  auto index = BuildFrom(in, 0);
  ASSERT_TRUE(index.ok()) << index.status();
  bool found = true;
  float rate = -1.0f;
  uint64_t u = in.users[0], i = in.items[0];
  (*index)->LookupPairs({&u, 1}, {&i, 1}, {&found, 1}, {&rate, 1});
  EXPECT_FALSE(found);
  EXPECT_EQ(rate, 0.0f);
  (*index)->LookupPairs({}, {}, {}, {});
}

TEST(MemoryIndexTest, InconsistentInputIsDataLoss) {
  Input in = MakeInput(20, 30, 200, 4);
  auto fewer = BuildFrom(in, in.pairs.size() + 1);
  EXPECT_EQ(fewer.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(fewer.status().message(), "manifest says")) << fewer.status();

  auto more = BuildFrom(in, 10);
  EXPECT_EQ(more.status().code(), absl::StatusCode::kDataLoss) << more.status();

  const uint64_t unknown_user = 2;  // even: not a user id
  auto bad_user = BuildFrom(in, in.pairs.size() + 1, {{unknown_user, in.items[0]}});
  EXPECT_EQ(bad_user.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(bad_user.status().message(), "names user 2")) << bad_user.status();

  auto bad_item = BuildFrom(in, in.pairs.size() + 1, {{in.pairs.rbegin()->first.first, 3}});
  EXPECT_TRUE(absl::StrContains(bad_item.status().message(), "names item 3")) << bad_item.status();

  // The last user's last pair again (its pairs stay contiguous).
  const auto& last = in.pairs.rbegin()->first;
  auto twice = BuildFrom(in, in.pairs.size() + 1, {last});
  EXPECT_TRUE(absl::StrContains(twice.status().message(), "stored twice")) << twice.status();

  // The first user's pair again, after other users: out of key order.
  const auto& first = in.pairs.begin()->first;
  auto scattered = BuildFrom(in, in.pairs.size() + 1, {first});
  EXPECT_TRUE(absl::StrContains(scattered.status().message(), "not contiguous"))
      << scattered.status();

  auto dup_node = BuildFrom(in, in.pairs.size(), {}, /*duplicate_node=*/true);
  EXPECT_TRUE(absl::StrContains(dup_node.status().message(), "nodes table")) << dup_node.status();

  auto absurd = BuildFrom(in, uint64_t{1} << 62);
  EXPECT_EQ(absurd.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(absurd.status().message(), "claims")) << absurd.status();

  auto io_error = MemoryIndex::Build(
      3, 0, [](const MemoryIndex::NodeSink&) { return absl::DataLossError("disk says no"); },
      [](const MemoryIndex::PairSink&) { return absl::OkStatus(); });
  EXPECT_EQ(io_error.status().message(), "disk says no");
}

}  // namespace
}  // namespace graphsieve
