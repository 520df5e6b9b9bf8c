// BuildPairTable (pair_table.h): duplicate (user, item) instances collapse into
// one pair. Ids are ranked by a hash map pass + sort of the distinct ids, the
// instances are bucketed by user (counting sort) and sorted by item inside
// each user, so the whole build is O(N + distinct log distinct + Σ n_u log n_u).
#include "core/maec/pair_table.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/maec/parallel.h"

namespace graphsieve {
namespace {

using maec_internal::ParallelChunks;

// Maps every id to its rank among the distinct ids (ascending). Fills
// `sorted_ids` with the distinct ids and `index` with one rank per instance.
absl::Status RankIds(const std::vector<uint64_t>& ids, const char* what,
                     std::vector<uint64_t>* sorted_ids, std::vector<uint32_t>* index) {
  absl::flat_hash_map<uint64_t, uint32_t> first_seen;
  index->resize(ids.size());
  std::vector<uint64_t> distinct;
  for (size_t i = 0; i < ids.size(); ++i) {
    auto [it, inserted] = first_seen.try_emplace(ids[i], static_cast<uint32_t>(distinct.size()));
    if (inserted) {
      if (distinct.size() == std::numeric_limits<uint32_t>::max()) {
        return absl::InvalidArgumentError(
            absl::StrCat("impression log: more than 2^32-1 distinct ", what, " ids"));
      }
      distinct.push_back(ids[i]);
    }
    (*index)[i] = it->second;
  }
  std::vector<uint32_t> order(distinct.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return distinct[a] < distinct[b]; });
  std::vector<uint32_t> rank(distinct.size());
  sorted_ids->resize(distinct.size());
  for (uint32_t r = 0; r < order.size(); ++r) {
    rank[order[r]] = r;
    (*sorted_ids)[r] = distinct[order[r]];
  }
  for (auto& x : *index) x = rank[x];
  return absl::OkStatus();
}

absl::Status CheckLog(const ImpressionLog& log) {
  const size_t n = log.user_ids.size();
  if (n == 0) return absl::InvalidArgumentError("impression log is empty (no instances)");
  if (log.item_ids.size() != n || log.labels.size() != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("impression log columns differ in length: user_ids ", n, ", item_ids ",
                     log.item_ids.size(), ", labels ", log.labels.size()));
  }
  if (!log.pilot_scores.empty() && log.pilot_scores.size() != n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "impression log: pilot_scores has ", log.pilot_scores.size(), " entries, expected ", n));
  }
  for (size_t i = 0; i < n; ++i) {
    if (log.labels[i] > 1) {
      return absl::InvalidArgumentError(absl::StrCat("impression log: instance ", i, " has label ",
                                                     int{log.labels[i]}, ", expected 0/1"));
    }
  }
  for (size_t i = 0; i < log.pilot_scores.size(); ++i) {
    const float s = log.pilot_scores[i];
    if (!std::isfinite(s) || s < 0.0f || s > 1.0f) {
      return absl::InvalidArgumentError(absl::StrCat("impression log: instance ", i,
                                                     " has pilot score ", s,
                                                     ", expected a probability in [0, 1]"));
    }
  }
  return absl::OkStatus();
}

// `consume` is null or &log: then the id columns are freed once ranked.
absl::StatusOr<PairTable> Build(const ImpressionLog& log, ImpressionLog* consume, int threads) {
  if (threads < 1) return absl::InvalidArgumentError("BuildPairTable: threads must be >= 1");
  if (absl::Status s = CheckLog(log); !s.ok()) return s;
  const size_t n = log.size();
  PairTable table;
  std::vector<uint32_t> uidx, iidx;
  absl::Status user_status, item_status;
  {
    // Users and items are ranked concurrently (independent columns).
    auto rank_items = [&] { item_status = RankIds(log.item_ids, "item", &table.item_ids, &iidx); };
    std::thread items;
    if (threads >= 2) items = std::thread(rank_items);
    user_status = RankIds(log.user_ids, "user", &table.user_ids, &uidx);
    if (threads >= 2)
      items.join();
    else
      rank_items();
  }
  if (!user_status.ok()) return user_status;
  if (!item_status.ok()) return item_status;
  if (consume != nullptr) {  // the ranks replace the ids (docs/SCALING.md "Memory per impression")
    std::vector<uint64_t>().swap(consume->user_ids);
    std::vector<uint64_t>().swap(consume->item_ids);
  }
  if (n > std::numeric_limits<uint32_t>::max()) {
    return absl::InvalidArgumentError("impression log: more than 2^32-1 instances in one build");
  }

  // Counting sort by user; key = item << 32 | instance keeps the order stable.
  const size_t num_users = table.user_ids.size();
  std::vector<uint64_t> user_begin(num_users + 1, 0);
  for (uint32_t u : uidx) ++user_begin[u + 1];
  for (size_t u = 0; u < num_users; ++u) user_begin[u + 1] += user_begin[u];
  std::vector<uint64_t> keys(n);
  {
    std::vector<uint64_t> cursor(user_begin.begin(), user_begin.end() - 1);
    for (size_t i = 0; i < n; ++i) keys[cursor[uidx[i]]++] = (uint64_t{iidx[i]} << 32) | i;
  }
  uidx.clear();
  uidx.shrink_to_fit();
  iidx.clear();
  iidx.shrink_to_fit();

  // Per user: sort, then count distinct items (phase 1), then write (phase 2).
  std::vector<uint64_t> user_pairs(num_users + 1, 0);
  ParallelChunks(num_users, threads, [&](int, size_t begin, size_t end) {
    for (size_t u = begin; u < end; ++u) {
      std::sort(keys.begin() + user_begin[u], keys.begin() + user_begin[u + 1]);
      uint64_t distinct = 0;
      for (uint64_t k = user_begin[u]; k < user_begin[u + 1]; ++k) {
        if (k == user_begin[u] || (keys[k] >> 32) != (keys[k - 1] >> 32)) ++distinct;
      }
      user_pairs[u + 1] = distinct;
    }
  });
  for (size_t u = 0; u < num_users; ++u) user_pairs[u + 1] += user_pairs[u];
  const size_t num_pairs = user_pairs[num_users];
  const bool has_pilot = !log.pilot_scores.empty();
  table.pair_user.resize(num_pairs);
  table.pair_item.resize(num_pairs);
  table.label.resize(num_pairs);
  table.instances.resize(num_pairs);
  table.negatives.resize(num_pairs);
  if (has_pilot) table.pilot_mean.resize(num_pairs);
  ParallelChunks(num_users, threads, [&](int, size_t begin, size_t end) {
    for (size_t u = begin; u < end; ++u) {
      size_t p = user_pairs[u];
      uint64_t k = user_begin[u];
      while (k < user_begin[u + 1]) {
        const uint32_t item = static_cast<uint32_t>(keys[k] >> 32);
        uint32_t count = 0, positives = 0;
        double pilot_sum = 0.0;
        for (; k < user_begin[u + 1] && (keys[k] >> 32) == item; ++k) {
          const size_t inst = keys[k] & 0xffffffffu;
          ++count;
          positives += log.labels[inst];
          if (has_pilot) pilot_sum += log.pilot_scores[inst];
        }
        table.pair_user[p] = static_cast<uint32_t>(u);
        table.pair_item[p] = item;
        table.label[p] = positives > 0 ? 1 : 0;
        table.instances[p] = count;
        table.negatives[p] = count - positives;
        if (has_pilot) table.pilot_mean[p] = static_cast<float>(pilot_sum / count);
        ++p;
      }
    }
  });
  table.total_instances = n;
  for (uint32_t neg : table.negatives) table.total_negatives += neg;
  return table;
}

}  // namespace

absl::StatusOr<PairTable> BuildPairTable(const ImpressionLog& log, int threads) {
  return Build(log, nullptr, threads);
}

absl::StatusOr<PairTable> BuildPairTableConsuming(ImpressionLog* log, int threads) {
  return Build(*log, log, threads);
}

}  // namespace graphsieve
