// MANIFEST.json of one snapshot version: what the builder writes and what the
// reader checks before it trusts a version (docs/SNAPSHOT.md lists every key).
//
// Thread-safety: pure functions.
#ifndef GRAPHSIEVE_CORE_SNAPSHOT_MANIFEST_H_
#define GRAPHSIEVE_CORE_SNAPSHOT_MANIFEST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/records/pair_table.h"
#include "core/records/pipeline_result.h"
#include "core/snapshot/format.h"
#include "graphsieve/version.h"
#include "nlohmann/json.hpp"

namespace graphsieve {

// A parsed summary of MANIFEST.json (the whole JSON text is kept too).
struct ManifestSummary {
  std::string version;
  std::string created_at;
  std::string method;
  std::string resistance;
  double alpha = 0, floor = 0, gamma = 0;
  int sketch_dim = 0;
  uint64_t seed = 0;  // keep-decision seed
  uint64_t instances = 0, pairs = 0, positive_pairs = 0, users = 0, items = 0, components = 0;
  double achieved_negative_mean_rate = 0;
  std::string input_digest;
  std::string pairs_table_format;  // "block" | "cuckoo" (format.h)
  uint64_t db_bytes = 0;           // bytes of all files under db/
  uint64_t index_bytes = 0;        // the serving index file (0: none, built on load)
  // The part of the version this directory holds (docs/SNAPSHOT.md
  // "Partitioned versions"); 0 of 1 for an unpartitioned version.
  uint32_t partition = 0;
  uint32_t num_partitions = 1;
  // A delta version (docs/SNAPSHOT.md "Delta versions"): the full version it
  // overrides, and the newest input it covers (RFC 3339 UTC); empty for a
  // full version.
  std::string base_version;
  std::string covers_through;
  std::string json;  // MANIFEST.json as written
};

namespace snapshot {

// One input log file as the builder read it.
struct InputFileInfo {
  std::string path;
  uint64_t size_bytes = 0;
  uint64_t xxh3 = 0;  // XXH3-64 of the file's bytes (as stored, i.e. compressed if gzip)
};

// One file of the version directory, relative to it (e.g. "db/000012.sst").
struct ManifestFileEntry {
  std::string path;
  uint64_t size_bytes = 0;
  uint64_t xxh3 = 0;
};

// What the builder knows that the pipeline structs do not.
struct ManifestInfo {
  std::string version;
  std::string created_at;  // RFC 3339 UTC, e.g. 2026-11-25T22:45:01Z
  std::string generator = "graphsieve-build";
  std::string generator_version = kGraphsieveVersion;  // project(VERSION) of the build
  std::vector<InputFileInfo> inputs;
  std::string input_digest;                               // InputDigest(inputs)
  nlohmann::json parameters = nlohmann::json::object();   // every flag; must hold "method",
                                                          // "resistance", "seed"
  nlohmann::json input_stats = nlohmann::json::object();  // rows read, bad rows skipped, bytes
  std::vector<StageTiming> timings;  // builder stages (read, pair table, pipeline, write)
  // A delta version (core/offline/delta_build.h): {"base_version", "covers_from",
  // "covers_through", ...}; null for a full version (docs/SNAPSHOT.md "Delta versions").
  nlohmann::json delta;
  // The rule's provenance when graphsieve-eval tune chose it: {"rule", "date",
  // "report_digest"}; null = not recorded (docs/SNAPSHOT.md "On-disk layout").
  nlohmann::json tune;
};

// The serving index file of a version (memory_index.h), and which part of a
// partitioned version the directory holds.
inline constexpr char kIndexFile[] = "index.gsi";
struct ManifestPartInfo {
  uint32_t partition = 0;
  uint32_t num_partitions = 1;
  std::string index_path;  // relative to the version directory; empty = no index file
  uint64_t index_bytes = 0;
  // The index file's regions are key-ordered (RegionOrder::kKeyOrdered,
  // memory_index.h): "region_order": "key" in storage.serving_index.
  bool index_key_ordered = false;
};

// XXH3-64 over (path-independent) sizes and digests of all inputs, in order.
std::string InputDigest(const std::vector<InputFileInfo>& inputs);

// Rate histogram over pairs: 20 equal bins on (0, 1].
nlohmann::json RateHistogram(const std::vector<float>& rates);

// The whole manifest. `files` are the checksummed files of the version.
// `files` under "db/" count as db_bytes; `part` adds "storage.serving_index"
// (when it names a file) and "partitioning".
nlohmann::json BuildManifest(const PairTable& pairs, const PipelineResult& result,
                             const ManifestInfo& info, TableFormat pairs_format,
                             const std::vector<ManifestFileEntry>& files,
                             const ManifestPartInfo& part = {});

struct ParsedManifest {
  ManifestSummary summary;
  std::string index_path;  // empty: no index file (built on load)
  // storage.serving_index.region_order is "key"; absent in versions written
  // before key-ordered regions (their files probe plainly).
  bool index_key_ordered = false;
  TableFormat pairs_format = TableFormat::kBlockBased;
  std::vector<ManifestFileEntry> files;
};

// Parses and checks the structure. `source` names the file in errors.
// Errors: DATA_LOSS (not JSON, truncated, missing or mistyped key),
// FAILED_PRECONDITION (format_version outside [kOldestReadableFormatVersion,
// kFormatVersion]).
absl::StatusOr<ParsedManifest> ParseManifest(absl::string_view text, const std::string& source);

}  // namespace snapshot
}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_SNAPSHOT_MANIFEST_H_
