// The delta build (docs/DESIGN.md "Delta versions", docs/SNAPSHOT.md):
// `graphsieve-build --delta_of=<base version|CURRENT> --input=<new logs>`
// reads only the impressions logged since a full version (the base) and the
// base's node records, computes the pairs and nodes that override the base's
// (delta_records.h), and publishes them atomically — the full build's publish
// path — as a version whose manifest names its base, the input digests and the
// time range covered.
//
// Deltas are cumulative over the base: each delta is built from every log
// since the base, and a server serves at most two layers (base + newest
// delta). --delta_of=CURRENT when CURRENT is itself a delta means that delta's
// base. A full build supersedes the deltas (the next delta is over it).
//
//   open      the snapshot root; the base resolved and checked: published,
//             a full version, built with the same result-affecting flags as
//             this run (method, alpha, rate rule, kappa, floor, gamma,
//             propagation, row layout, label rule, ...); a partitioned base
//             opened part by part as one reader (partitioned_snapshot_reader.h)
//   read      the new logs parsed and digested
//   delta     the pair table and ComputeDeltaRecords against the base, once
//             over the whole new log
//   write, publish  (not in a dry run) as the full build, under the root's
//             publish lock, in the base's parts (a part may hold no pairs:
//             its users logged nothing new, yet it carries every touched
//             item's record)
//
// Errors: INVALID_ARGUMENT for options a delta cannot honour (--export);
// FAILED_PRECONDITION naming the base and the mismatching field (base gone,
// another parameter, --partitions not the base's part count), the reader's
// errors naming file and line, the writer's. Nothing is published on error
// or in a dry run; CURRENT stays.
//
// Thread-safety: as RunBuild (build_job.h).
#ifndef GRAPHSIEVE_CORE_OFFLINE_DELTA_BUILD_H_
#define GRAPHSIEVE_CORE_OFFLINE_DELTA_BUILD_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/offline/build_job.h"
#include "nlohmann/json.hpp"

namespace graphsieve {

struct DeltaBuildOptions {
  // inputs: the logs since the base; the reader and pipeline flags must match
  // the base's (checked); snapshot_root, keep_versions, lock_timeout_seconds
  // as for a full build. dry_run: open the base, read, compute the records,
  // publish nothing (the root is not created, the publish lock not taken).
  // export_csv must be empty (refused: a delta stores only what changed since
  // its base). build.partitions is not used (see `partitions`).
  BuildOptions build;
  std::string base = "CURRENT";  // a published full version id, or CURRENT
  int sweeps = 3;                // Jacobi sweeps of the touched nodes' rows (>= 1)
  // The delta is written in its base's parts; 0 takes them from the base, any
  // other count must equal the base's (checked: FAILED_PRECONDITION).
  int partitions = 0;
  // --rule_from_base: when build.tune_rule is empty, the delta's manifest
  // carries the base's "tune" object (the tune that chose the rule in force).
  bool tune_from_base = false;
  absl::Status Validate() const;
};

// A result-affecting parameter a delta must share with its base: its key in
// the manifest's parameters and the graphsieve-build flag that sets it
// (nullptr: no flag of its own, it follows from others).
struct DeltaParameter {
  const char* key;
  const char* flag;
};
// Every such parameter, in the order RunDeltaBuild compares them.
absl::Span<const DeltaParameter> DeltaMustMatchParameters();

// A manifest parameter as its flag's value text: strings as they are,
// numbers and booleans as JSON writes them (absl::CommandLineFlag::ParseFrom
// reads them back).
std::string FlagValueText(const nlohmann::json& v);

// The manifest (whole, as JSON) of the full version a delta of `base`
// (CURRENT or a version id) is built over, resolved as RunDeltaBuild
// resolves it: a delta resolves to its base. Errors as RunDeltaBuild's for
// the base (FAILED_PRECONDITION naming it), the root's if it cannot be opened.
absl::StatusOr<nlohmann::json> ReadDeltaBaseManifest(const std::string& snapshot_root,
                                                     const std::string& base);

struct DeltaReport {
  std::string version, base_version;  // version: empty in a dry run
  bool published = false;             // false: a dry run
  uint64_t rows_read = 0, instances = 0, pairs = 0, carried_pairs = 0;
  uint64_t bad_rows_skipped = 0;              // under --max_bad_rows
  std::vector<std::string> bad_row_examples;  // the first ones' reasons (file:line: ...)
  uint64_t new_users = 0, new_items = 0, new_positive_edges = 0, touched_nodes = 0;
  uint32_t partitions = 1;     // the parts the delta is written in: its base's
  std::string covers_through;  // newest input's modification time, RFC 3339 UTC
  std::vector<StageTiming> timings;
  std::vector<std::string> deleted_versions;
  nlohmann::json ToJson() const;
};

// The delta build's entry: options.Validate() first (INVALID_ARGUMENT naming
// the flag; it covers options.build); nothing inside checks them again.
absl::StatusOr<DeltaReport> RunDeltaBuild(const DeltaBuildOptions& options,
                                          const BuildObserver& observer);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_OFFLINE_DELTA_BUILD_H_
