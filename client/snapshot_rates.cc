#include "client/snapshot_rates.h"

#include <filesystem>
#include <functional>

#include "absl/strings/str_cat.h"
#include "core/snapshot/snapshot_store.h"
#include "graphsieve/v1/sampling.pb.h"

namespace graphsieve {
namespace {

absl::Status Named(const absl::Status& s, const char* flag, const std::string& path) {
  return absl::Status(s.code(), absl::StrCat("--", flag, " '", path, "': ", s.message()));
}

// The client's border: core answers in the API's vocabulary, as the server's.
int ToProtoSource(RateSource source) {
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
  if (fs::exists(p / "MANIFEST.json", ec)) {
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
  absl::StatusOr<std::shared_ptr<const SnapshotReader>> reader =
      SnapshotReader::Open(where->first, where->second, options);
  if (!reader.ok()) return Named(reader.status(), flag, path);
  return std::unique_ptr<SnapshotRates>(
      new SnapshotRates(*std::move(reader), where->second, policy));
}

absl::Status SnapshotRates::Score(absl::Span<const uint64_t> users,
                                  absl::Span<const uint64_t> items, absl::Span<float> rates,
                                  absl::Span<int> sources) const {
  std::vector<RateSource> core_sources(sources.size());
  SourceCounts counts;
  absl::Status st = scorer_.Score(*reader_, users, items, /*should_stop=*/{}, rates,
                                  absl::MakeSpan(core_sources), &counts);
  if (!st.ok()) return st;
  for (size_t i = 0; i < sources.size(); ++i) sources[i] = ToProtoSource(core_sources[i]);
  return absl::OkStatus();
}

absl::Status SnapshotRates::AppendStoredPairs(
    std::vector<std::pair<uint64_t, uint64_t>>* pairs) const {
  return reader_->ForEachPair(
      [pairs](uint64_t user, uint64_t item, float) { pairs->emplace_back(user, item); });
}

}  // namespace graphsieve
