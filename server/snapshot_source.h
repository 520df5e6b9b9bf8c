// The refresher's Source: what <root>/CURRENT names and which versions are on
// disk (DESIGN §3: CURRENT is a text file naming the active version, replaced
// by temp file + rename; each version is <root>/<version>/ with a MANIFEST.json;
// "<version>.tmp" directories are unfinished builds and never listed).
//
// Thread-safety: stateless apart from the root path; safe from any thread.
#ifndef GRAPHSIEVE_SERVER_SNAPSHOT_SOURCE_H_
#define GRAPHSIEVE_SERVER_SNAPSHOT_SOURCE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace graphsieve {

class SnapshotSource {
 public:
  explicit SnapshotSource(std::string root) : root_(std::move(root)) {}

  // The version CURRENT names (whitespace trimmed). NOT_FOUND when there is no
  // CURRENT yet; INVALID_ARGUMENT when its content is not a plain version name.
  absl::StatusOr<std::string> ReadCurrent() const;

  // Complete versions on disk, sorted by name.
  std::vector<std::string> ListVersions() const;

  // True when `version` is a plain directory name (no '/', not "." or "..").
  static bool IsValidVersionName(const std::string& version);

  const std::string& root() const { return root_; }

 private:
  const std::string root_;  // constant after construction
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_SERVER_SNAPSHOT_SOURCE_H_
