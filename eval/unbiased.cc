#include "eval/unbiased.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace graphsieve::eval {

absl::StatusOr<UnbiasedTest> MapUnbiasedTest(const ImpressionLog& log, const ImpressionLog& test,
                                             const std::string& name) {
  absl::flat_hash_map<uint64_t, uint32_t> users, items;
  for (size_t i = 0; i < log.size(); ++i) {
    users.try_emplace(log.user_ids[i], static_cast<uint32_t>(users.size()));
    items.try_emplace(log.item_ids[i], static_cast<uint32_t>(items.size()));
  }
  UnbiasedTest out;
  uint64_t positives = 0;
  for (size_t i = 0; i < test.size(); ++i) {
    const auto u = users.find(test.user_ids[i]);
    const auto v = items.find(test.item_ids[i]);
    if (u == users.end() || v == items.end()) {
      ++out.dropped_unknown;
      continue;
    }
    out.test.user.push_back(u->second);
    out.test.item.push_back(v->second);
    out.test.label.push_back(test.labels[i]);
    if (!test.pilot_scores.empty()) out.truth.push_back(test.pilot_scores[i]);
    positives += test.labels[i];
  }
  if (positives == 0 || positives == out.test.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": ", out.test.size(), " impressions of users and items the log shows (",
        out.dropped_unknown, " dropped), ", positives, " positive; the test needs both classes"));
  }
  return out;
}

}  // namespace graphsieve::eval
