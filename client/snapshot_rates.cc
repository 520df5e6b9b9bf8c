#include "client/snapshot_rates.h"

#include <algorithm>
#include <filesystem>
#include <functional>

#include "absl/strings/str_cat.h"
#include "core/io/partition.h"
#include "core/snapshot/layered_snapshot_reader.h"
#include "core/snapshot/snapshot_store.h"
#include "graphsieve/v1/sampling.pb.h"

namespace graphsieve {
namespace {

absl::Status Named(const absl::Status& s, const char* flag, const std::string& path) {
  return absl::Status(s.code(), absl::StrCat("--", flag, " '", path, "': ", s.message()));
}

// The API's number for a core RateSource: the CLI's offline path answers in
// the API's vocabulary, as a server does at its border
// (server/rate_source_mapping.h); tests/client compares the two answers.
v1::RateSource ToProtoRateSource(RateSource source) {
  switch (source) {
    case RateSource::kExact:
      return v1::RATE_SOURCE_EXACT;
    case RateSource::kInferred:
      return v1::RATE_SOURCE_INFERRED;
    case RateSource::kDefault:
      return v1::RATE_SOURCE_DEFAULT;
  }
  return v1::RATE_SOURCE_UNSPECIFIED;
}

bool IsPartitioned(const std::string& root, const std::string& version) {
  std::error_code ec;
  return std::filesystem::exists(
      std::filesystem::path(root) / version / SnapshotStore::PartDirName(0) / "MANIFEST.json", ec);
}

}  // namespace

absl::StatusOr<std::pair<std::string, std::string>> ResolveSnapshotPath(const std::string& path,
                                                                        const char* flag) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p(path);
  while (p.has_relative_path() && p.filename().empty()) p = p.parent_path();  // trailing '/'
  if (!fs::is_directory(p, ec)) {
    return absl::NotFoundError(absl::StrCat("--", flag, ": '", path, "' is not a directory"));
  }
  if (fs::exists(p / "MANIFEST.json", ec) ||
      fs::exists(p / SnapshotStore::PartDirName(0) / "MANIFEST.json", ec)) {
    const fs::path root = p.has_parent_path() ? p.parent_path() : fs::path(".");
    return std::make_pair(root.string(), p.filename().string());
  }
  absl::StatusOr<std::unique_ptr<SnapshotStore>> store = SnapshotStore::Create({p.string()});
  if (!store.ok()) return Named(store.status(), flag, path);
  absl::StatusOr<std::string> current = (*store)->ReadCurrent();
  if (absl::IsNotFound(current.status())) {
    return absl::NotFoundError(
        absl::StrCat("--", flag, ": '", path,
                     "' is neither a snapshot version (no MANIFEST.json) nor a root (no CURRENT)"));
  }
  if (!current.ok()) return Named(current.status(), flag, path);
  return std::make_pair(p.string(), *std::move(current));
}

absl::StatusOr<std::unique_ptr<SnapshotRates>> SnapshotRates::Open(const std::string& path,
                                                                   const char* flag,
                                                                   const DefaultPolicy& policy) {
  absl::StatusOr<std::pair<std::string, std::string>> where = ResolveSnapshotPath(path, flag);
  if (!where.ok()) return where.status();
  SnapshotReaderOptions options;  // lookup = kMemory, as the server
  options.warm = false;
  options.block_cache_bytes = size_t{64} << 20;
  // Opened as a server opens it (VersionOpener::Open): a delta version layered
  // over its base, so the canary compares what the servers would answer.
  auto opener = std::make_unique<VersionOpener>();
  std::vector<std::shared_ptr<const SnapshotReader>> readers;
  if (IsPartitioned(where->first, where->second)) {
    // Every part (part 0 says how many).
    for (uint32_t part = 0, parts = 1; part < parts; ++part) {
      options.partition = static_cast<int>(part);
      absl::StatusOr<std::shared_ptr<const SnapshotReader>> reader =
          opener->Open(where->first, where->second, options);
      if (!reader.ok()) return Named(reader.status(), flag, path);
      parts = (*reader)->manifest().num_partitions;
      readers.push_back(*std::move(reader));
    }
  } else {
    absl::StatusOr<std::shared_ptr<const SnapshotReader>> reader =
        opener->Open(where->first, where->second, options);
    if (!reader.ok()) return Named(reader.status(), flag, path);
    readers.push_back(*std::move(reader));
  }
  return std::unique_ptr<SnapshotRates>(
      new SnapshotRates(std::move(opener), std::move(readers), where->second, policy));
}

absl::Status SnapshotRates::Score(absl::Span<const uint64_t> users,
                                  absl::Span<const uint64_t> items, absl::Span<float> rates,
                                  absl::Span<int> sources) const {
  std::vector<RateSource> core_sources(sources.size());
  SourceCounts counts;
  if (readers_.size() == 1) {
    absl::Status st = scorer_.Score(*readers_[0], users, items, /*should_stop=*/{}, rates,
                                    absl::MakeSpan(core_sources), &counts);
    if (!st.ok()) return st;
  } else {
    // Each part scores its users' pairs; answers go back to request order.
    const uint32_t parts = static_cast<uint32_t>(readers_.size());
    std::vector<std::vector<size_t>> positions(parts);
    for (size_t i = 0; i < users.size(); ++i) {
      positions[PartitionOfUser(users[i], parts)].push_back(i);
    }
    for (uint32_t p = 0; p < parts; ++p) {
      const std::vector<size_t>& pos = positions[p];
      std::vector<uint64_t> u(pos.size()), it(pos.size());
      std::vector<float> r(pos.size());
      std::vector<RateSource> src(pos.size());
      for (size_t k = 0; k < pos.size(); ++k) {
        u[k] = users[pos[k]];
        it[k] = items[pos[k]];
      }
      absl::Status st = scorer_.Score(*readers_[p], u, it, /*should_stop=*/{}, absl::MakeSpan(r),
                                      absl::MakeSpan(src), &counts);
      if (!st.ok()) return st;
      for (size_t k = 0; k < pos.size(); ++k) {
        rates[pos[k]] = r[k];
        core_sources[pos[k]] = src[k];
      }
    }
  }
  for (size_t i = 0; i < sources.size(); ++i) sources[i] = ToProtoRateSource(core_sources[i]);
  return absl::OkStatus();
}

absl::Status SnapshotRates::AppendStoredPairs(
    std::vector<std::pair<uint64_t, uint64_t>>* pairs) const {
  const size_t first = pairs->size();
  uint64_t expected = 0;  // a hint: a delta's manifest counts its own pairs
  for (const auto& reader : readers_) expected += reader->manifest().pairs;
  pairs->reserve(first + expected);
  for (const auto& reader : readers_) {
    absl::Status st = reader->ForEachPair(
        [pairs](uint64_t user, uint64_t item, float) { pairs->emplace_back(user, item); });
    if (!st.ok()) return st;
  }
  // Each part's scan is in key order, a delta's pairs follow its base's: the
  // pairs come as a few sorted runs, merged here in O(n log runs). Parts hold
  // disjoint users, a delta's pairs are not its base's, so no pair repeats.
  std::vector<size_t> runs = {first};
  for (size_t i = first + 1; i < pairs->size(); ++i) {
    if ((*pairs)[i] < (*pairs)[i - 1]) runs.push_back(i);
  }
  runs.push_back(pairs->size());
  const auto at = [pairs](size_t i) { return pairs->begin() + static_cast<std::ptrdiff_t>(i); };
  if (runs.size() > 65) {  // not a scan's order: sort
    std::sort(at(first), pairs->end());
    return absl::OkStatus();
  }
  while (runs.size() > 2) {
    std::vector<size_t> merged = {first};
    for (size_t r = 0; r + 1 < runs.size(); r += 2) {
      const size_t end = r + 2 < runs.size() ? runs[r + 2] : runs[r + 1];
      if (r + 2 < runs.size()) std::inplace_merge(at(runs[r]), at(runs[r + 1]), at(end));
      merged.push_back(end);
    }
    runs = std::move(merged);
  }
  return absl::OkStatus();
}

}  // namespace graphsieve
