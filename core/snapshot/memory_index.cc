#include "core/snapshot/memory_index.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace graphsieve {
namespace {

// MurmurHash3's 64-bit finaliser: dense (user, item) indices are far from
// random, so they are mixed before masking.
inline uint64_t Mix(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  k ^= k >> 33;
  return k;
}

// Pairs resolved per prefetch round: enough misses in flight to hide DRAM
// latency, few enough that the prefetched lines are still in L1/L2.
constexpr size_t kRound = 32;

constexpr double kMaxLoadFactor = 0.7;

}  // namespace

void MemoryIndex::SlotsUnmap::operator()(Slot* p) const {
  if (p != nullptr) ::munmap(p, bytes);
}

size_t MemoryIndex::SlotOf(uint32_t user, uint32_t item) const {
  return static_cast<size_t>(Mix((static_cast<uint64_t>(user) << 32) | item)) & mask_;
}

absl::Status MemoryIndex::Insert(uint32_t user, uint32_t item, float rate) {
  // The table was sized for expected_pairs at load factor <= 0.7; more pairs
  // than that means the manifest and the table disagree (checked by the caller
  // at the end, but never probe a full table).
  if (pairs_ + 1 > mask_) {
    return absl::DataLossError(
        absl::StrCat("more pairs than the manifest's count (table of ", mask_ + 1, " slots full)"));
  }
  for (size_t s = SlotOf(user, item);; s = (s + 1) & mask_) {
    Slot& slot = slots_[s];
    if (slot.user == kEmpty) {
      slot = Slot{user, item, rate};
      ++pairs_;
      return absl::OkStatus();
    }
    if (slot.user == user && slot.item == item) {
      return absl::DataLossError("a pair is stored twice");
    }
  }
}

absl::StatusOr<std::unique_ptr<const MemoryIndex>> MemoryIndex::Build(
    int sketch_dim, uint64_t expected_pairs,
    const std::function<absl::Status(const NodeSink&)>& for_each_node,
    const std::function<absl::Status(const PairSink&)>& for_each_pair) {
  if (sketch_dim < 0) return absl::InvalidArgumentError("memory index: sketch_dim < 0");
  std::unique_ptr<MemoryIndex> index(new MemoryIndex());
  index->sketch_dim_ = sketch_dim;
  const size_t dim = static_cast<size_t>(sketch_dim);

  absl::Status first_error;
  absl::Status io = for_each_node([&](bool is_item, uint64_t id, const NodeRecord& record,
                                      absl::Span<const float> sketch) {
    if (!first_error.ok()) return;
    auto& ids = is_item ? index->item_ids_ : index->user_ids_;
    auto& records = is_item ? index->item_records_ : index->user_records_;
    auto& sketches = is_item ? index->item_sketch_ : index->user_sketch_;
    if (sketch.size() != dim) {
      first_error = absl::DataLossError(absl::StrCat(is_item ? "item " : "user ", id, " has ",
                                                     sketch.size(), " sketch floats, expected ",
                                                     dim));
      return;
    }
    if (records.size() >= kEmpty) {
      first_error = absl::DataLossError("more than 2^32-1 nodes on one side");
      return;
    }
    if (!ids.emplace(id, static_cast<uint32_t>(records.size())).second) {
      first_error = absl::DataLossError(
          absl::StrCat(is_item ? "item " : "user ", id, " is stored twice in the nodes table"));
      return;
    }
    records.push_back(record);
    sketches.insert(sketches.end(), sketch.begin(), sketch.end());
  });
  if (!io.ok()) return io;
  if (!first_error.ok()) return first_error;

  // 2^38 slots = 3 TiB: a count beyond that is a corrupt manifest, not a plan.
  constexpr uint64_t kMaxPairs = (uint64_t{1} << 38) * 7 / 10;
  if (expected_pairs > kMaxPairs) {
    return absl::DataLossError(absl::StrCat("the manifest claims ", expected_pairs,
                                            " pairs, more than an in-memory index can hold (",
                                            kMaxPairs, ")"));
  }
  size_t capacity = 16;
  while (static_cast<double>(capacity) * kMaxLoadFactor < static_cast<double>(expected_pairs)) {
    capacity <<= 1;
  }
  constexpr size_t kHugePage = size_t{2} << 20;
  const size_t bytes = (capacity * sizeof(Slot) + kHugePage - 1) / kHugePage * kHugePage;
  void* mem = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    return absl::ResourceExhaustedError(
        absl::StrCat("memory index: cannot map ", bytes, " bytes for ", expected_pairs, " pairs"));
  }
  ::madvise(mem, bytes, MADV_HUGEPAGE);  // a hint: fine if the kernel declines
  index->slots_ = std::unique_ptr<Slot[], SlotsUnmap>(static_cast<Slot*>(mem), SlotsUnmap{bytes});
  std::fill_n(index->slots_.get(), capacity, Slot{kEmpty, kEmpty, 0.0f});
  index->mask_ = capacity - 1;

  // Inserts go through a small buffer whose home slots are prefetched, so
  // the table's cache misses overlap instead of costing ~100 ns each in turn.
  struct Pending {
    uint32_t user, item;
    float rate;
    uint64_t user_id, item_id;
  };
  Pending pending[kRound];
  size_t npending = 0;
  auto flush = [&]() {
    for (size_t k = 0; k < npending && first_error.ok(); ++k) {
      const Pending& p = pending[k];
      absl::Status s = index->Insert(p.user, p.item, p.rate);
      if (!s.ok()) {
        first_error = absl::DataLossError(
            absl::StrCat("pair (", p.user_id, ", ", p.item_id, "): ", s.message()));
      }
    }
    npending = 0;
  };
  uint64_t last_user = 0;
  uint32_t last_uid = kEmpty;
  io = for_each_pair([&](uint64_t user, uint64_t item, float rate) {
    if (!first_error.ok()) return;
    if (last_uid == kEmpty || user != last_user) {
      auto it = index->user_ids_.find(user);
      if (it == index->user_ids_.end()) {
        first_error = absl::DataLossError(
            absl::StrCat("pair (", user, ", ", item, ") names user ", user,
                         " which the nodes table does not have"));
        return;
      }
      last_user = user;
      last_uid = it->second;
    }
    auto it = index->item_ids_.find(item);
    if (it == index->item_ids_.end()) {
      first_error = absl::DataLossError(absl::StrCat("pair (", user, ", ", item, ") names item ",
                                                     item, " which the nodes table does not have"));
      return;
    }
    __builtin_prefetch(&index->slots_[index->SlotOf(last_uid, it->second)], /*rw=*/1);
    pending[npending++] = Pending{last_uid, it->second, rate, user, item};
    if (npending == kRound) flush();
  });
  flush();
  if (!io.ok()) return io;
  if (!first_error.ok()) return first_error;
  if (index->pairs_ != expected_pairs) {
    return absl::DataLossError(absl::StrCat("the pairs table has ", index->pairs_,
                                            " pairs, the manifest says ", expected_pairs));
  }
  return std::unique_ptr<const MemoryIndex>(std::move(index));
}

void MemoryIndex::LookupPairs(absl::Span<const uint64_t> users, absl::Span<const uint64_t> items,
                              absl::Span<bool> found, absl::Span<float> rates) const {
  const size_t n = users.size();
  uint32_t uid[kRound], iid[kRound];
  size_t slot[kRound];
  uint64_t last_user = 0;
  uint32_t last_uid = kEmpty;
  bool have_last = false;
  for (size_t begin = 0; begin < n; begin += kRound) {
    const size_t m = std::min(kRound, n - begin);
    // Pass 1: dense ids (small, cache-resident maps) and the home slot, prefetched.
    for (size_t k = 0; k < m; ++k) {
      const uint64_t user = users[begin + k];
      if (!have_last || user != last_user) {
        auto it = user_ids_.find(user);
        last_uid = it == user_ids_.end() ? kEmpty : it->second;
        last_user = user;
        have_last = true;
      }
      uid[k] = last_uid;
      auto it = item_ids_.find(items[begin + k]);
      iid[k] = it == item_ids_.end() ? kEmpty : it->second;
      if (uid[k] != kEmpty && iid[k] != kEmpty) {
        slot[k] = SlotOf(uid[k], iid[k]);
        __builtin_prefetch(&slots_[slot[k]]);
      } else {
        slot[k] = 0;
      }
    }
    // Pass 2: probe.
    for (size_t k = 0; k < m; ++k) {
      const size_t i = begin + k;
      found[i] = false;
      rates[i] = 0.0f;
      if (uid[k] == kEmpty || iid[k] == kEmpty) continue;
      for (size_t s = slot[k];; s = (s + 1) & mask_) {
        const Slot& e = slots_[s];
        if (e.user == kEmpty) break;
        if (e.user == uid[k] && e.item == iid[k]) {
          found[i] = true;
          rates[i] = e.rate;
          break;
        }
      }
    }
  }
}

bool MemoryIndex::FindNode(bool is_item, uint64_t id, NodeView* view) const {
  const auto& ids = is_item ? item_ids_ : user_ids_;
  auto it = ids.find(id);
  if (it == ids.end()) return false;
  const size_t k = it->second;
  view->record = (is_item ? item_records_ : user_records_)[k];
  const std::vector<float>& sketch = is_item ? item_sketch_ : user_sketch_;
  const size_t dim = static_cast<size_t>(sketch_dim_);
  view->sketch = absl::MakeConstSpan(sketch.data() + k * dim, dim);
  return true;
}

size_t MemoryIndex::memory_bytes() const {
  const size_t map_entry = sizeof(uint64_t) + sizeof(uint32_t) + 1;  // + control byte
  return (mask_ + 1) * sizeof(Slot) +
         (user_ids_.capacity() + item_ids_.capacity()) * map_entry +
         (user_records_.capacity() + item_records_.capacity()) * sizeof(NodeRecord) +
         (user_sketch_.capacity() + item_sketch_.capacity()) * sizeof(float);
}

}  // namespace graphsieve
