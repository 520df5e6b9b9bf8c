#include "eval/movielens.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace graphsieve::eval {

absl::Status MovieLensOptions::Validate() const {
  // ml-100k's ratings are whole stars 1 to 5: a threshold above 5 leaves no
  // positive, one at or below 1 makes every rated pair one.
  if (!(positive_min_rating >= 1.0 && positive_min_rating <= 5.0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--movielens_min_rating must be in [1, 5] (MovieLens ratings are 1 to 5 stars), got ",
        positive_min_rating));
  }
  if (max_impressions == 0) return absl::InvalidArgumentError("max_impressions must be > 0");
  return absl::OkStatus();
}

absl::StatusOr<ImpressionLog> ReadMovieLensImplicit(const std::string& dir,
                                                    const MovieLensOptions& options,
                                                    std::vector<int64_t>* timestamps) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  const std::string path = absl::StrCat(dir, "/u.data");
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open MovieLens ratings ", path));
  absl::flat_hash_set<uint64_t> positives;          // user << 32 | item
  absl::flat_hash_map<uint64_t, int64_t> rated_at;  // user << 32 | item -> timestamp
  std::vector<uint64_t> users, items;
  std::string line;
  uint64_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<absl::string_view> f =
        absl::StrSplit(line, absl::ByAnyChar("\t "), absl::SkipEmpty());
    if (f.size() < 3) {
      return absl::InvalidArgumentError(absl::StrCat(path, ":", line_no,
                                                     ": expected user, item, rating "
                                                     "separated by tabs, got ",
                                                     f.size(), " fields"));
    }
    uint32_t user = 0, item = 0;
    double rating = 0.0;
    if (!absl::SimpleAtoi(f[0], &user)) {
      return absl::InvalidArgumentError(absl::StrCat(path, ":", line_no, ": user id '",
                                                     std::string(f[0]), "' is not an integer"));
    }
    if (!absl::SimpleAtoi(f[1], &item)) {
      return absl::InvalidArgumentError(absl::StrCat(path, ":", line_no, ": item id '",
                                                     std::string(f[1]), "' is not an integer"));
    }
    if (!absl::SimpleAtod(f[2], &rating) || !std::isfinite(rating)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", line_no, ": rating '", std::string(f[2]), "' is not a number"));
    }
    if (timestamps != nullptr) {
      int64_t t = 0;
      if (f.size() < 4 || !absl::SimpleAtoi(f[3], &t) || t < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ":", line_no,
                         ": expected a non-negative integer timestamp "
                         "in the fourth field"));
      }
      rated_at[(uint64_t{user} << 32) | item] = t;
    }
    users.push_back(user);
    items.push_back(item);
    if (rating >= options.positive_min_rating) positives.insert((uint64_t{user} << 32) | item);
  }
  if (users.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": no ratings"));
  auto unique_sorted = [](std::vector<uint64_t>* v) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  };
  unique_sorted(&users);
  unique_sorted(&items);
  const uint64_t total = static_cast<uint64_t>(users.size()) * items.size();
  if (total > options.max_impressions) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", users.size(), " users x ", items.size(), " items = ", total,
                     " impressions exceeds max_impressions ", options.max_impressions));
  }
  ImpressionLog log;
  if (timestamps != nullptr) {
    timestamps->clear();
    timestamps->reserve(total);
  }
  log.user_ids.reserve(total);
  log.item_ids.reserve(total);
  log.labels.reserve(total);
  for (uint64_t u : users) {
    for (uint64_t v : items) {
      log.user_ids.push_back(u);
      log.item_ids.push_back(v);
      log.labels.push_back(positives.contains((u << 32) | v) ? 1 : 0);
      if (timestamps != nullptr) {
        const auto it = rated_at.find((u << 32) | v);
        timestamps->push_back(it == rated_at.end() ? -1 : it->second);
      }
    }
  }
  log.rows_read = line_no;
  return log;
}

}  // namespace graphsieve::eval
