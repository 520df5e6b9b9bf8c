#include "client/snapshot_rates.h"

#include <filesystem>
#include <fstream>
#include <functional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace graphsieve {

absl::StatusOr<std::pair<std::string, std::string>> ResolveSnapshotPath(const std::string& path,
                                                                        const char* flag) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p(path);
  while (p.has_relative_path() && p.filename().empty()) p = p.parent_path();  // trailing '/'
  if (!fs::is_directory(p, ec)) {
    return absl::NotFoundError(absl::StrCat("--", flag, ": '", path, "' is not a directory"));
  }
  if (fs::exists(p / "MANIFEST.json", ec)) {
    return std::make_pair(p.parent_path().string(), p.filename().string());
  }
  std::ifstream current(p / "CURRENT");
  if (!current) {
    return absl::NotFoundError(
        absl::StrCat("--", flag, ": '", path,
                     "' is neither a snapshot version (no MANIFEST.json) nor a root (no CURRENT)"));
  }
  std::string version;
  std::getline(current, version);
  version = std::string(absl::StripAsciiWhitespace(version));
  if (version.empty()) {
    return absl::DataLossError(
        absl::StrCat("--", flag, ": ", (p / "CURRENT").string(), " is empty"));
  }
  return std::make_pair(p.string(), version);
}

absl::StatusOr<std::unique_ptr<SnapshotRates>> SnapshotRates::Open(const std::string& path,
                                                                   const char* flag,
                                                                   const DefaultPolicy& policy) {
  absl::StatusOr<std::pair<std::string, std::string>> where = ResolveSnapshotPath(path, flag);
  if (!where.ok()) return where.status();
  SnapshotReaderOptions options;  // lookup = kMemory, as the server
  options.warm = false;
  options.block_cache_bytes = size_t{64} << 20;
  absl::StatusOr<std::shared_ptr<const SnapshotReader>> reader =
      SnapshotReader::Open(where->first, where->second, options);
  if (!reader.ok()) {
    return absl::Status(reader.status().code(),
                        absl::StrCat("--", flag, " '", path, "': ", reader.status().message()));
  }
  return std::unique_ptr<SnapshotRates>(
      new SnapshotRates(*std::move(reader), where->second, policy));
}

absl::Status SnapshotRates::Score(absl::Span<const uint64_t> users,
                                  absl::Span<const uint64_t> items, absl::Span<float> rates,
                                  absl::Span<int> sources) const {
  SourceCounts counts;
  // The reader holds every node in its in-memory index (the default lookup
  // mode), so no node cache is passed.
  return scorer_.Score(*reader_, /*nodes=*/nullptr, users, items, /*should_stop=*/{}, rates,
                       sources, &counts);
}

absl::Status SnapshotRates::AppendStoredPairs(
    std::vector<std::pair<uint64_t, uint64_t>>* pairs) const {
  return reader_->ForEachPair(
      [pairs](uint64_t user, uint64_t item, float) { pairs->emplace_back(user, item); });
}

}  // namespace graphsieve
