#include "core/snapshot/memory_index.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/snapshot/file_util.h"
#include "core/snapshot/format.h"
#include "core/snapshot/index_file.h"

namespace graphsieve {
namespace {

// MurmurHash3's 64-bit finaliser: dense item indices are far from random, so
// they are mixed before choosing a slot.
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
// Probes that ran past their home line and wait, their next line prefetched,
// to go on together (LookupPairs).
constexpr size_t kPending = 64;

// A user's region for n pairs: n + n/4 + 1 slots (load factor <= 0.8, and
// always one free slot, so a probe for an absent item ends).
inline uint64_t RegionSize(uint64_t n) { return n + n / 4 + 1; }

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22  // Linux 5.14 (uapi asm-generic/mman-common.h)
#endif

// MapFileOptions::huge_pages on a fresh read-only file mapping: advise
// MADV_HUGEPAGE, then fault the file in a window at a time (MADV_POPULATE_READ
// reports an I/O error or a short file as an error instead of SIGBUS) and drop
// the window's page-table entries again (MADV_DONTNEED on a file mapping
// leaves the page cache alone). A kernel without MADV_POPULATE_READ (EINVAL)
// leaves the file to the lookups' faults, which read ahead in 2 MiB folios
// on an advised mapping.
absl::Status PopulateHugePages(char* mem, uint64_t bytes) {
  ::madvise(mem, bytes, MADV_HUGEPAGE);  // a hint: fine if the kernel declines
  constexpr uint64_t kWindow = uint64_t{8} << 20;
  for (uint64_t at = 0; at < bytes; at += kWindow) {
    const size_t len = static_cast<size_t>(std::min(kWindow, bytes - at));
    if (::madvise(mem + at, len, MADV_POPULATE_READ) != 0) {
      if (errno == EINVAL) return absl::OkStatus();
      return absl::DataLossError(absl::StrCat("reading bytes ", at, "..", at + len,
                                              " through the mapping: ", std::strerror(errno)));
    }
    ::madvise(mem + at, len, MADV_DONTNEED);
  }
  return absl::OkStatus();
}

// Bit j of *same: slot j of the 64-byte line holds `item`; of *stop: a probe
// for `item` ends there without it: the slot is free or, in a key-ordered
// region, holds a larger item (a free slot's kEmpty is larger than any item).
// Slots are {u32 item, f32 rate}: the items are every other 32-bit word.
inline void LineMasks(const void* line, uint32_t item, bool ordered, uint32_t* same,
                      uint32_t* stop) {
#if defined(__SSE2__)
  const float* words = static_cast<const float*>(line);
  auto items = [words](int at) {  // the items of slots at..at+3
    return _mm_castps_si128(_mm_shuffle_ps(
        _mm_loadu_ps(words + 2 * at), _mm_loadu_ps(words + 2 * at + 4), _MM_SHUFFLE(2, 0, 2, 0)));
  };
  const __m128i low = items(0);
  const __m128i high = items(4);
  const __m128i key = _mm_set1_epi32(static_cast<int>(item));
  auto mask = [](__m128i eq) {
    return static_cast<uint32_t>(_mm_movemask_ps(_mm_castsi128_ps(eq)));
  };
  *same = mask(_mm_cmpeq_epi32(low, key)) | mask(_mm_cmpeq_epi32(high, key)) << 4;
  if (ordered) {
    // Unsigned a > b as signed after flipping both sign bits (SSE2 has no
    // unsigned compare).
    const __m128i bias = _mm_set1_epi32(INT32_MIN);
    const __m128i biased_key = _mm_xor_si128(key, bias);
    *stop = mask(_mm_cmpgt_epi32(_mm_xor_si128(low, bias), biased_key)) |
            mask(_mm_cmpgt_epi32(_mm_xor_si128(high, bias), biased_key)) << 4;
  } else {
    const __m128i none = _mm_set1_epi32(-1);
    *stop = mask(_mm_cmpeq_epi32(low, none)) | mask(_mm_cmpeq_epi32(high, none)) << 4;
  }
#else
  uint32_t words[16];
  std::memcpy(words, line, sizeof words);
  *same = 0;
  *stop = 0;
  for (uint32_t j = 0; j < 8; ++j) {
    *same |= static_cast<uint32_t>(words[2 * j] == item) << j;
    *stop |= static_cast<uint32_t>(ordered ? words[2 * j] > item : words[2 * j] == 0xffffffffu)
             << j;
  }
#endif
}

}  // namespace

using index_file::AlignUp;
using index_file::CheckDigests;
using index_file::Header;
using index_file::HeaderDigest;
using index_file::kAlign;
using index_file::kHeaderBytes;
using index_file::kIndexFormatVersion;
using index_file::kItemIds;
using index_file::kItemRecords;
using index_file::kItemSketch;
using index_file::kMagic;
using index_file::kRegionSize;
using index_file::kRegionStart;
using index_file::kSections;
using index_file::kSlots;
using index_file::kUnseenModel;
using index_file::kUserIds;
using index_file::kUserRecords;
using index_file::kUserSketch;
using index_file::NewXxhState;
using index_file::SectionBytes;
using index_file::WriteAll;
using index_file::XxhState;

MemoryIndex::Mapping::~Mapping() {
  if (address != nullptr) ::munmap(address, bytes);
}

void MemoryIndex::ReleaseResidentPages() const {
  // A hint: on failure the pages simply stay resident.
  if (mapping_ == nullptr) return;
  ::madvise(mapping_->address, mapping_->bytes, MADV_DONTNEED);
  resident_releases_.fetch_add(1, std::memory_order_relaxed);
}

void MemoryIndex::ViewOwned() {
  user_records_ = owned_user_records_;
  item_records_ = owned_item_records_;
  user_sketch_ = owned_user_sketch_;
  item_sketch_ = owned_item_sketch_;
  region_start_ = owned_region_start_;
  region_size_ = owned_region_size_;
}

size_t MemoryIndex::Home(uint64_t start, uint32_t cap, uint32_t item) {
  // Lemire's multiply-shift maps the hash's high 32 bits onto [0, cap).
  return static_cast<size_t>(start + (((Mix(item) >> 32) * cap) >> 32));
}

absl::Status MemoryIndex::AddUser(uint32_t user,
                                  absl::Span<const std::pair<uint32_t, float>> items) {
  const uint64_t size = RegionSize(items.size());
  if (slots_used_ + size > slot_capacity_ || size > kEmpty) {
    return absl::DataLossError("more pairs than the manifest's count");
  }
  const uint64_t start = slots_used_;
  const uint32_t cap = static_cast<uint32_t>(size);
  Slot* region = static_cast<Slot*>(owned_slots_->address) + start;
  std::fill_n(region, cap, Slot{kEmpty, 0.0f});
  const bool ordered = order_ == RegionOrder::kKeyOrdered;
  for (const auto& [item, rate] : items) {
    // Key order: the pair takes the first slot holding a larger item and
    // carries that one on, so every item's probe passes only smaller ones.
    // A carried pair was on its own probe, and continues it; each step moves
    // on and the region has a free slot, so this ends within cap steps.
    Slot carry{item, rate};
    for (size_t s = Home(0, cap, item);; s = s + 1 == cap ? 0 : s + 1) {
      if (region[s].item == kEmpty) {
        region[s] = carry;
        break;
      }
      if (region[s].item == carry.item) return absl::DataLossError("a pair is stored twice");
      if (ordered && region[s].item > carry.item) std::swap(region[s], carry);
    }
  }
  owned_region_start_[user] = start;
  owned_region_size_[user] = cap;
  slots_used_ += size;
  pairs_ += items.size();
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<const MemoryIndex>> MemoryIndex::Build(
    int sketch_dim, uint64_t expected_pairs,
    const std::function<absl::Status(const NodeSink&)>& for_each_node,
    const std::function<absl::Status(const PairSink&)>& for_each_pair, RegionOrder order) {
  if (sketch_dim < 0) return absl::InvalidArgumentError("memory index: sketch_dim < 0");
  std::unique_ptr<MemoryIndex> index(new MemoryIndex());
  index->sketch_dim_ = sketch_dim;
  index->order_ = order;
  const size_t dim = static_cast<size_t>(sketch_dim);

  absl::Status first_error;
  absl::Status io = for_each_node(
      [&](bool is_item, uint64_t id, const NodeRecord& record, absl::Span<const float> sketch) {
        if (!first_error.ok()) return;
        auto& ids = is_item ? index->item_ids_ : index->user_ids_;
        auto& id_list = is_item ? index->item_id_list_ : index->user_id_list_;
        auto& records = is_item ? index->owned_item_records_ : index->owned_user_records_;
        auto& sketches = is_item ? index->owned_item_sketch_ : index->owned_user_sketch_;
        if (sketch.size() != dim) {
          first_error =
              absl::DataLossError(absl::StrCat(is_item ? "item " : "user ", id, " has ",
                                               sketch.size(), " sketch floats, expected ", dim));
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
        id_list.push_back(id);
        sketches.insert(sketches.end(), sketch.begin(), sketch.end());
      });
  if (!io.ok()) return io;
  if (!first_error.ok()) return first_error;

  // 2^38 slots = 2 TiB: a count beyond that is a corrupt manifest, not a plan.
  constexpr uint64_t kMaxPairs = (uint64_t{1} << 38) * 3 / 4;
  if (expected_pairs > kMaxPairs) {
    return absl::DataLossError(absl::StrCat("the manifest claims ", expected_pairs,
                                            " pairs, more than an in-memory index can hold (",
                                            kMaxPairs, ")"));
  }
  const size_t users = index->owned_user_records_.size();
  index->owned_region_start_.assign(users, 0);
  index->owned_region_size_.assign(users, 0);
  // Room for the largest layout the count allows (every region rounds up by
  // one slot); only the pages that regions use become resident.
  index->slot_capacity_ = RegionSize(expected_pairs) + users;
  constexpr size_t kHugePage = size_t{2} << 20;
  const size_t bytes =
      (index->slot_capacity_ * sizeof(Slot) + kHugePage - 1) / kHugePage * kHugePage;
  void* mem = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    return absl::ResourceExhaustedError(
        absl::StrCat("memory index: cannot map ", bytes, " bytes for ", expected_pairs, " pairs"));
  }
  ::madvise(mem, bytes, MADV_HUGEPAGE);  // a hint: fine if the kernel declines
  index->owned_slots_ = std::make_unique<Mapping>();
  index->owned_slots_->address = mem;
  index->owned_slots_->bytes = bytes;
  index->slots_ = static_cast<const Slot*>(mem);

  // One user's pairs are collected, then laid out as its region.
  std::vector<std::pair<uint32_t, float>> current;
  std::vector<bool> done(users, false);
  uint64_t current_user = 0;
  uint32_t current_uid = kEmpty;
  auto close_user = [&]() {
    if (current_uid == kEmpty || !first_error.ok()) return;
    absl::Status s = index->AddUser(current_uid, current);
    if (!s.ok())
      first_error = absl::DataLossError(absl::StrCat("user ", current_user, ": ", s.message()));
    done[current_uid] = true;
    current.clear();
  };
  io = for_each_pair([&](uint64_t user, uint64_t item, float rate) {
    if (!first_error.ok()) return;
    if (current_uid == kEmpty || user != current_user) {
      auto it = index->user_ids_.find(user);
      if (it == index->user_ids_.end()) {
        first_error =
            absl::DataLossError(absl::StrCat("pair (", user, ", ", item, ") names user ", user,
                                             " which the nodes table does not have"));
        return;
      }
      close_user();
      if (!first_error.ok()) return;
      if (done[it->second]) {
        first_error = absl::DataLossError(
            absl::StrCat("the pairs of user ", user,
                         " are not contiguous (the pairs table must be in key order)"));
        return;
      }
      current_user = user;
      current_uid = it->second;
    }
    auto it = index->item_ids_.find(item);
    if (it == index->item_ids_.end()) {
      first_error = absl::DataLossError(absl::StrCat("pair (", user, ", ", item, ") names item ",
                                                     item, " which the nodes table does not have"));
      return;
    }
    current.emplace_back(it->second, rate);
  });
  close_user();
  if (!io.ok()) return io;
  if (!first_error.ok()) return first_error;
  if (index->pairs_ != expected_pairs) {
    return absl::DataLossError(absl::StrCat("the pairs table has ", index->pairs_,
                                            " pairs, the manifest says ", expected_pairs));
  }
  index->ViewOwned();
  return std::unique_ptr<const MemoryIndex>(std::move(index));
}

MemoryIndex::ProbeEnd MemoryIndex::ProbeLine(Probe* probe) const {
  // The whole line is compared at once, without a branch per slot: which
  // slot holds the item and which ends the probe without it (LineMasks) are
  // bit masks, and the first of them decides. Slots outside the region
  // (before the probe's slot, or at or past the region's end) are masked out.
  //
  // The slot always lies in [start, end) (the home slot does, and the probe
  // wraps to start at end), so last > first: every call reads at least one
  // slot and a probe ends within the region's size in slots.
  const size_t line = probe->slot & ~(kSlotsPerLine - 1);
  const uint32_t first = static_cast<uint32_t>(probe->slot - line);
  const uint64_t room = probe->end - line;
  const uint32_t last = room < kSlotsPerLine ? static_cast<uint32_t>(room) : kSlotsPerLine;
  const uint32_t valid = ((1u << last) - 1) & ~((1u << first) - 1);
  uint32_t same = 0;
  uint32_t stop = 0;
  // The line may reach past the last region, never past the mapping: the
  // slots start on a page, so a line that holds a slot lies in mapped pages.
  LineMasks(slots_ + line, probe->item, order_ == RegionOrder::kKeyOrdered, &same, &stop);
  const uint32_t ends = (same | stop) & valid;
  // The slots read in order: up to the first match or stop, or the line's
  // (or region's) last.
  const uint32_t read = (ends == 0 ? last : __builtin_ctz(ends) + 1) - first;
  if (read > probe->steps) {
    // Past the bound: a region always has a free slot, a malformed one must
    // not loop.
    probe->steps = 0;
    return ProbeEnd::kAbsent;
  }
  probe->steps -= read;
  if (ends != 0) {
    const uint32_t at = __builtin_ctz(ends);
    if ((same >> at & 1u) == 0) return ProbeEnd::kAbsent;
    probe->rate = slots_[line + at].rate;
    return ProbeEnd::kFound;
  }
  if (probe->steps == 0) return ProbeEnd::kAbsent;
  probe->slot = line + last == probe->end ? probe->start : line + last;
  return ProbeEnd::kNextLine;
}

void MemoryIndex::LookupPairs(absl::Span<const uint64_t> users, absl::Span<const uint64_t> items,
                              absl::Span<bool> found, absl::Span<float> rates) const {
  // A round of kRound pairs goes through four passes, each issuing the next
  // memory access of every pair before any pair waits for it, so the round's
  // cache misses overlap instead of queueing:
  //   1. prefetch the id maps' groups for both keys (the user map alone
  //      outgrows the cache on a large snapshot);
  //   2. find the dense ids and prefetch the user's region bounds;
  //   3. compute the home slot and prefetch its line;
  //   4. probe the home line.
  // A probe that runs past its home line (about one stored pair in six at the
  // index's load; most absent pairs in a region probed plainly, about as
  // few as stored ones in a key-ordered region) would wait there on a miss
  // of its own; instead its next line is prefetched and the probe is set
  // aside. The set-aside probes go on together, a line each, when kPending of
  // them wait and when the batch ends, so those misses overlap too
  // (docs/SERVER.md "Request path").
  // Everything lives on the stack: no allocation per call or per pair.
  const size_t n = users.size();
  uint32_t uid[kRound];
  uint32_t iid[kRound];
  uint32_t cap[kRound];
  uint64_t start[kRound];
  size_t home[kRound];
  Probe waiting[kPending];
  size_t num_waiting = 0;
  auto settle = [&](const Probe& probe, ProbeEnd end) {
    found[probe.pair] = end == ProbeEnd::kFound;
    rates[probe.pair] = end == ProbeEnd::kFound ? probe.rate : 0.0f;
  };
  // One line for every waiting probe per pass; those that go on again have
  // their next line prefetched and wait for the next pass.
  auto finish_waiting = [&] {
    while (num_waiting > 0) {
      size_t kept = 0;
      for (size_t j = 0; j < num_waiting; ++j) {
        Probe& probe = waiting[j];
        const ProbeEnd end = ProbeLine(&probe);
        if (end == ProbeEnd::kNextLine) {
          __builtin_prefetch(&slots_[probe.slot]);
          waiting[kept++] = probe;
        } else {
          settle(probe, end);
        }
      }
      num_waiting = kept;
    }
  };
  for (size_t begin = 0; begin < n; begin += kRound) {
    const size_t m = std::min(kRound, n - begin);
    for (size_t k = 0; k < m; ++k) {
      user_ids_.prefetch(users[begin + k]);
      item_ids_.prefetch(items[begin + k]);
    }
    for (size_t k = 0; k < m; ++k) {
      const size_t i = begin + k;
      // Consecutive pairs of one user (a user's candidates) find it once.
      if (k > 0 && users[i] == users[i - 1]) {
        uid[k] = uid[k - 1];
      } else {
        auto it = user_ids_.find(users[i]);
        uid[k] = it == user_ids_.end() ? kEmpty : it->second;
      }
      auto it = item_ids_.find(items[i]);
      iid[k] = it == item_ids_.end() ? kEmpty : it->second;
      if (uid[k] != kEmpty) {
        __builtin_prefetch(&region_start_[uid[k]]);
        __builtin_prefetch(&region_size_[uid[k]]);
      }
    }
    for (size_t k = 0; k < m; ++k) {
      // cap 0 = nothing to probe (unknown node or a user without pairs).
      cap[k] = uid[k] == kEmpty || iid[k] == kEmpty ? 0 : region_size_[uid[k]];
      start[k] = cap[k] == 0 ? 0 : region_start_[uid[k]];
      home[k] = cap[k] == 0 ? 0 : Home(start[k], cap[k], iid[k]);
      if (cap[k] != 0) __builtin_prefetch(&slots_[home[k]]);
    }
    for (size_t k = 0; k < m; ++k) {
      const size_t i = begin + k;
      if (cap[k] == 0) {
        found[i] = false;
        rates[i] = 0.0f;
        continue;
      }
      // Every other pair is settled once: here, or when its set-aside probe ends.
      // At most cap probes: a region always has a free slot, and the bound
      // keeps even a malformed one from looping.
      Probe probe{i, start[k], start[k] + cap[k], home[k], cap[k], iid[k], 0.0f};
      const ProbeEnd end = ProbeLine(&probe);
      if (end != ProbeEnd::kNextLine) {
        settle(probe, end);
        continue;
      }
      if (num_waiting == kPending) finish_waiting();
      __builtin_prefetch(&slots_[probe.slot]);
      waiting[num_waiting++] = probe;
    }
  }
  finish_waiting();
}

bool MemoryIndex::LookupPair(uint64_t user, uint64_t item, float* rate) const {
  *rate = 0.0f;
  auto u = user_ids_.find(user);
  auto v = item_ids_.find(item);
  if (u == user_ids_.end() || v == item_ids_.end()) return false;
  const uint32_t cap = region_size_[u->second];
  if (cap == 0) return false;
  const uint64_t start = region_start_[u->second];
  const size_t end = start + cap;
  size_t s = Home(start, cap, v->second);
  for (uint32_t step = 0; step < cap; ++step, s = s + 1 == end ? start : s + 1) {
    if (slots_[s].item == kEmpty) return false;
    if (slots_[s].item == v->second) {
      *rate = slots_[s].rate;
      return true;
    }
  }
  return false;
}

void MemoryIndex::PrefetchNodeIds(uint64_t user, uint64_t item) const {
  user_ids_.prefetch(user);
  item_ids_.prefetch(item);
}

void MemoryIndex::PrefetchNodeRows(uint64_t user, uint64_t item) const {
  const size_t dim = static_cast<size_t>(sketch_dim_);
  auto row = [dim](const absl::flat_hash_map<uint64_t, uint32_t>& ids, uint64_t id,
                   absl::Span<const NodeRecord> records, absl::Span<const float> sketch) {
    auto it = ids.find(id);
    if (it == ids.end()) return;
    __builtin_prefetch(&records[it->second]);
    // Every line of the sketch row (16 floats a line).
    const float* begin = sketch.data() + it->second * dim;
    for (size_t j = 0; j < dim; j += 16) __builtin_prefetch(begin + j);
    if (dim > 0) __builtin_prefetch(begin + dim - 1);
  };
  row(user_ids_, user, user_records_, user_sketch_);
  row(item_ids_, item, item_records_, item_sketch_);
}

bool MemoryIndex::FindNode(bool is_item, uint64_t id, NodeView* view) const {
  const auto& ids = is_item ? item_ids_ : user_ids_;
  auto it = ids.find(id);
  if (it == ids.end()) return false;
  const size_t k = it->second;
  view->record = (is_item ? item_records_ : user_records_)[k];
  const absl::Span<const float> sketch = is_item ? item_sketch_ : user_sketch_;
  const size_t dim = static_cast<size_t>(sketch_dim_);
  view->sketch = sketch.subspan(k * dim, dim);
  return true;
}

size_t MemoryIndex::memory_bytes() const {
  const size_t map_entry = sizeof(uint64_t) + sizeof(uint32_t) + 1;  // + control byte
  return slots_used_ * sizeof(Slot) + region_start_.size() * sizeof(uint64_t) +
         region_size_.size() * sizeof(uint32_t) +
         (user_ids_.capacity() + item_ids_.capacity()) * map_entry +
         (user_id_list_.capacity() + item_id_list_.capacity()) * sizeof(uint64_t) +
         (user_records_.size() + item_records_.size()) * sizeof(NodeRecord) +
         (user_sketch_.size() + item_sketch_.size()) * sizeof(float);
}

// The index as a file of the version (docs/SNAPSHOT.md "The serving index
// file", layout in index_file.h): WriteFile (the builder), MapFile (the server).

absl::Status MemoryIndex::WriteFile(const std::string& path, const IndexFileInfo& info,
                                    uint64_t* file_xxh3) const {
  if (mapped()) return absl::FailedPreconditionError("WriteFile: the index is a mapped file");
  Header h;
  std::memset(&h, 0, sizeof h);
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  // Format 1 (20-byte records) only on request: compatibility tests.
  h.format_version = info.format_version == 1 ? 1 : kIndexFormatVersion;
  h.sketch_dim = static_cast<uint32_t>(sketch_dim_);
  h.users = user_id_list_.size();
  h.items = item_id_list_.size();
  h.pairs = pairs_;
  h.slots = slots_used_;
  h.partition = info.partition;
  h.num_partitions = info.num_partitions;
  h.model_bytes = info.unseen_model.size();
  std::vector<char> v1_records[2];  // format 1: the records' first 20 bytes
  if (h.format_version == 1) {
    for (int side = 0; side < 2; ++side) {
      absl::Span<const NodeRecord> records = side ? item_records_ : user_records_;
      v1_records[side].resize(records.size() * snapshot::kNodeRecordBytesV2);
      for (size_t k = 0; k < records.size(); ++k) {
        std::memcpy(&v1_records[side][k * snapshot::kNodeRecordBytesV2], &records[k],
                    snapshot::kNodeRecordBytesV2);
      }
    }
  }
  const bool v1 = h.format_version == 1;
  const void* data[kSections] = {user_id_list_.data(),
                                 item_id_list_.data(),
                                 v1 ? static_cast<const void*>(v1_records[0].data())
                                    : static_cast<const void*>(user_records_.data()),
                                 v1 ? static_cast<const void*>(v1_records[1].data())
                                    : static_cast<const void*>(item_records_.data()),
                                 user_sketch_.data(),
                                 item_sketch_.data(),
                                 region_start_.data(),
                                 region_size_.data(),
                                 slots_,
                                 info.unseen_model.data()};
  uint64_t bytes[kSections];
  SectionBytes(h, bytes);
  uint64_t at = kHeaderBytes;
  for (int s = 0; s < kSections; ++s) {
    h.offset[s] = at;
    at = AlignUp(at + bytes[s]);
  }
  const std::vector<char> zeros(kAlign, 0);
  // The body: sections, each padded to the next page but the last. With
  // fd < 0 only hashes (the body digest goes into the header, written first);
  // with fd >= 0 writes and, when `hash` is set, hashes what it writes.
  auto body = [&](int fd, XXH3_state_t* hash, uint64_t* offset) {
    uint64_t written = kHeaderBytes;
    absl::Status st;
    for (int s = 0; s < kSections && st.ok(); ++s) {
      if (written < h.offset[s]) {
        const size_t pad = h.offset[s] - written;
        st = fd < 0 ? (XXH3_64bits_update(hash, zeros.data(), pad), absl::OkStatus())
                    : WriteAll(fd, zeros.data(), pad, path, hash, offset);
        written = h.offset[s];
      }
      if (st.ok() && bytes[s] > 0) {
        st = fd < 0 ? (XXH3_64bits_update(hash, data[s], bytes[s]), absl::OkStatus())
                    : WriteAll(fd, data[s], bytes[s], path, hash, offset);
      }
      written += bytes[s];
    }
    return st;
  };
  XxhState hash = NewXxhState();
  body(-1, hash.get(), nullptr).IgnoreError();  // hashing cannot fail
  h.body_xxh3 = XXH3_64bits_digest(hash.get());
  h.header_xxh3 = HeaderDigest(h);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return absl::InternalError(absl::StrCat(path, ": create: ", std::strerror(errno)));
  std::vector<char> page(kHeaderBytes, 0);
  std::memcpy(page.data(), &h, sizeof h);
  // The whole file's digest (header page + body), from the bytes written.
  XxhState file = NewXxhState();
  XXH3_state_t* file_hash = file_xxh3 != nullptr ? file.get() : nullptr;
  uint64_t offset = 0;
  absl::Status st = WriteAll(fd, page.data(), page.size(), path, file_hash, &offset);
  if (st.ok()) st = body(fd, file_hash, &offset);
  if (st.ok() && ::fsync(fd) != 0) {
    st = absl::InternalError(absl::StrCat(path, ": fsync: ", std::strerror(errno)));
  }
  ::close(fd);
  if (st.ok() && file_xxh3 != nullptr) *file_xxh3 = XXH3_64bits_digest(file.get());
  return st;
}

absl::StatusOr<std::unique_ptr<const MemoryIndex>> MemoryIndex::MapFile(
    const std::string& path, int sketch_dim, uint64_t expected_pairs, const MapFileOptions& options,
    IndexFileInfo* info) {
  auto loss = [&](const std::string& what) {
    return absl::DataLossError(absl::StrCat(path, ": ", what));
  };
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return loss(absl::StrCat("open: ", std::strerror(errno)));
  snapshot::FdCloser closer{fd};  // the mapping keeps the file after it closes
  struct stat st;
  if (::fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(kHeaderBytes)) {
    return loss("shorter than the 4096-byte header");
  }
  if (options.check_file_xxh3 && static_cast<uint64_t>(st.st_size) != options.file_bytes) {
    return loss(absl::StrCat(st.st_size, " bytes, manifest says ", options.file_bytes));
  }
  Header h;
  if (::pread(fd, &h, sizeof h, 0) != static_cast<ssize_t>(sizeof h)) {
    return loss("cannot read the header");
  }
  std::unique_ptr<MemoryIndex> index(new MemoryIndex());
  index->mapping_ = std::make_unique<Mapping>();
  const uint64_t file_bytes = static_cast<uint64_t>(st.st_size);
  // Huge pages first (MapFileOptions::huge_pages), so that the checksum pass
  // below reads the 2 MiB folios from the page cache instead of bringing
  // the file in with small ones.
  if (options.huge_pages) ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);  // a hint
  void* mem = ::mmap(nullptr, file_bytes, PROT_READ, MAP_SHARED, fd, 0);
  if (mem == MAP_FAILED) return loss(absl::StrCat("mmap: ", std::strerror(errno)));
  index->mapping_->address = mem;
  index->mapping_->bytes = file_bytes;
  if (options.huge_pages) {
    absl::Status read = PopulateHugePages(static_cast<char*>(mem), file_bytes);
    if (!read.ok()) return loss(std::string(read.message()));
  }
  if (options.verify) {
    absl::Status digests =
        CheckDigests(fd, path, options.check_file_xxh3, options.file_xxh3, h.body_xxh3);
    if (!digests.ok()) return digests;
  }
  const char* base = static_cast<const char*>(mem);
  std::memcpy(&h, base, sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) return loss("not a graphsieve index file");
  if (h.header_xxh3 != HeaderDigest(h)) return loss("header checksum mismatch");
  if (h.format_version < snapshot::kOldestIndexFileFormatVersion ||
      h.format_version > kIndexFormatVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": index format_version ", h.format_version, ", this reader reads ",
                     snapshot::kOldestIndexFileFormatVersion, " to ", kIndexFormatVersion));
  }
  if (static_cast<int>(h.sketch_dim) != sketch_dim || h.pairs != expected_pairs) {
    return loss(absl::StrCat("holds ", h.pairs, " pairs with sketch_dim ", h.sketch_dim,
                             "; the manifest says ", expected_pairs, " and ", sketch_dim));
  }
  if (h.num_partitions < 1 || h.partition >= h.num_partitions) {
    return loss(absl::StrCat("partition ", h.partition, " of ", h.num_partitions));
  }
  // Counts bounded by the file size before any multiplication can overflow.
  if (h.users > file_bytes || h.items > file_bytes || h.slots > file_bytes ||
      h.model_bytes > file_bytes || h.sketch_dim > (1u << 20) || h.pairs > h.slots ||
      h.users >= kEmpty || h.items >= kEmpty) {
    return loss("counts larger than the file");
  }
  uint64_t bytes[kSections];
  SectionBytes(h, bytes);
  uint64_t end = kHeaderBytes;
  for (int s = 0; s < kSections; ++s) {
    if (h.offset[s] % kAlign != 0 || h.offset[s] < end || h.offset[s] > file_bytes ||
        bytes[s] > file_bytes - h.offset[s]) {
      return loss(absl::StrCat("section ", s, " at ", h.offset[s], " (", bytes[s],
                               " bytes) is outside the file or overlaps"));
    }
    end = h.offset[s] + bytes[s];
  }
  auto at = [&](int s) { return base + h.offset[s]; };
  index->sketch_dim_ = sketch_dim;
  index->pairs_ = h.pairs;
  index->slots_used_ = h.slots;
  index->slots_ = reinterpret_cast<const Slot*>(at(kSlots));
  index->order_ = options.region_order;
  if (h.format_version == kIndexFormatVersion) {
    index->user_records_ = {reinterpret_cast<const NodeRecord*>(at(kUserRecords)), h.users};
    index->item_records_ = {reinterpret_cast<const NodeRecord*>(at(kItemRecords)), h.items};
  } else {  // format 1: 20-byte records without counts, copied
    for (int side = 0; side < 2; ++side) {
      const uint64_t n = side ? h.items : h.users;
      const char* src = at(side ? kItemRecords : kUserRecords);
      std::vector<NodeRecord>& owned =
          side ? index->owned_item_records_ : index->owned_user_records_;
      owned.resize(n);
      for (uint64_t k = 0; k < n; ++k) {
        std::memcpy(static_cast<void*>(&owned[k]), src + k * snapshot::kNodeRecordBytesV2,
                    snapshot::kNodeRecordBytesV2);
      }
    }
    index->user_records_ = index->owned_user_records_;
    index->item_records_ = index->owned_item_records_;
  }
  index->user_sketch_ = {reinterpret_cast<const float*>(at(kUserSketch)), h.users * h.sketch_dim};
  index->item_sketch_ = {reinterpret_cast<const float*>(at(kItemSketch)), h.items * h.sketch_dim};
  index->region_start_ = {reinterpret_cast<const uint64_t*>(at(kRegionStart)), h.users};
  index->region_size_ = {reinterpret_cast<const uint32_t*>(at(kRegionSize)), h.users};
  // Regions inside the slot array and exactly covering it.
  uint64_t covered = 0;
  for (uint64_t u = 0; u < h.users; ++u) {
    const uint64_t start = index->region_start_[u], size = index->region_size_[u];
    if (size > h.slots || start > h.slots - size) {
      return loss(absl::StrCat("user index ", u, ": region [", start, ", +", size, ") outside the ",
                               h.slots, " slots"));
    }
    covered += size;
  }
  if (covered != h.slots) {
    return loss(absl::StrCat("regions cover ", covered, " slots of ", h.slots));
  }
  // The id -> dense index maps (small: one entry per node).
  for (int side = 0; side < 2; ++side) {
    const uint64_t n = side ? h.items : h.users;
    const uint64_t* ids = reinterpret_cast<const uint64_t*>(at(side ? kItemIds : kUserIds));
    auto& map = side ? index->item_ids_ : index->user_ids_;
    map.reserve(n);
    for (uint64_t k = 0; k < n; ++k) {
      if (!map.emplace(ids[k], static_cast<uint32_t>(k)).second) {
        return loss(absl::StrCat(side ? "item " : "user ", ids[k], " is stored twice"));
      }
    }
  }
  info->format_version = h.format_version;
  info->partition = h.partition;
  info->num_partitions = h.num_partitions;
  info->unseen_model.assign(at(kUnseenModel), h.model_bytes);
  return std::unique_ptr<const MemoryIndex>(std::move(index));
}

}  // namespace graphsieve
