// SnapshotStore's holds (snapshot_store.h): <root>/holds/<version>@<holder>,
// each holding the unix time (seconds) at which it expires. A server holds the
// version it served before its last swap while it still answers requests
// pinned to it (docs/CLIENTS.md "Partitioned deployments"); retention skips a
// version with an unexpired hold, so a crashed holder keeps nothing for
// longer than its hold.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "core/snapshot/file_util.h"
#include "core/snapshot/snapshot_store.h"

namespace graphsieve {
namespace {

constexpr char kHolds[] = "holds";

bool ValidHolder(absl::string_view holder) {
  if (holder.empty() || holder.size() > 128) return false;
  for (char c : holder) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// The expiry written in a hold file; InfinitePast when unreadable (an
// unreadable hold keeps nothing).
absl::Time ReadExpiry(const std::string& path) {
  absl::StatusOr<std::string> text = snapshot::ReadFileToString(path);
  int64_t seconds = 0;
  if (!text.ok() || !absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &seconds)) {
    return absl::InfinitePast();
  }
  return absl::FromUnixSeconds(seconds);
}

// Hold file names under `dir` (names "<version>@<holder>").
std::vector<std::string> HoldNames(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (absl::StrContains(name, '@') && !absl::EndsWith(name, ".tmp")) out.push_back(name);
  }
  return out;
}

}  // namespace

absl::Status SnapshotStore::Hold(const std::string& version, absl::string_view holder,
                                 absl::Time until) const {
  if (!ValidHolder(holder)) {
    return absl::InvalidArgumentError(absl::StrCat("hold of '", version, "': holder '", holder,
                                                   "' must be 1-128 of [A-Za-z0-9._-]"));
  }
  absl::StatusOr<std::string> dir = PublishedVersionDir(version);
  if (!dir.ok()) return dir.status();
  const std::string holds = absl::StrCat(root(), "/", kHolds);
  if (::mkdir(holds.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::InternalError(absl::StrCat("mkdir ", holds, ": ", std::strerror(errno)));
  }
  const std::string path = absl::StrCat(holds, "/", version, "@", holder);
  absl::Status s =
      snapshot::WriteFileAtomic(path, absl::StrCat(absl::ToUnixSeconds(until) + 1, "\n"));
  if (!s.ok()) return s;
  if (!PublishedVersionDir(version).ok()) {  // deleted by retention meanwhile
    ::unlink(path.c_str());
    return absl::NotFoundError(
        absl::StrCat("cannot hold '", version, "': it was deleted by retention"));
  }
  return absl::OkStatus();
}

absl::Status SnapshotStore::Release(const std::string& version, absl::string_view holder) const {
  const std::string path = absl::StrCat(root(), "/", kHolds, "/", version, "@", holder);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return absl::InternalError(absl::StrCat("unlink ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

bool SnapshotStore::IsHeld(const std::string& version, absl::Time now) const {
  const std::string holds = absl::StrCat(root(), "/", kHolds);
  for (const std::string& name : HoldNames(holds)) {
    if (absl::StartsWith(name, absl::StrCat(version, "@")) &&
        ReadExpiry(absl::StrCat(holds, "/", name)) > now) {
      return true;
    }
  }
  return false;
}

absl::StatusOr<std::vector<std::string>> SnapshotStore::RemoveExpiredHolds(absl::Time now) const {
  const std::string holds = absl::StrCat(root(), "/", kHolds);
  std::vector<std::string> removed;
  for (const std::string& name : HoldNames(holds)) {
    const std::string path = absl::StrCat(holds, "/", name);
    if (ReadExpiry(path) > now) continue;
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      return absl::InternalError(absl::StrCat("unlink ", path, ": ", std::strerror(errno)));
    }
    removed.push_back(name);
  }
  return removed;
}

}  // namespace graphsieve
