#include "core/snapshot/snapshot_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "core/snapshot/file_util.h"
#include "core/snapshot/format.h"
#include "nlohmann/json.hpp"

namespace graphsieve {
namespace {

namespace fs = std::filesystem;

constexpr char kCurrent[] = "CURRENT";
constexpr char kPins[] = "pins";
constexpr char kLock[] = "LOCK";

bool IsDir(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

absl::Status MkdirIfMissing(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) == 0 || errno == EEXIST) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("mkdir ", path, ": ", std::strerror(errno)));
}

absl::StatusOr<std::vector<std::string>> ListNames(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    out.push_back(it->path().filename().string());
  }
  if (ec) return absl::InternalError(absl::StrCat("list ", dir, ": ", ec.message()));
  std::sort(out.begin(), out.end());
  return out;
}

// The base a delta version overrides (its manifest's "delta.base_version");
// "" for a full version or an unreadable manifest.
std::string DeltaBaseOf(const std::string& version_dir) {
  absl::StatusOr<std::string> text = snapshot::ReadFileToString(version_dir + "/MANIFEST.json");
  if (!text.ok()) return "";
  const nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("delta") || !j["delta"].is_object()) return "";
  const nlohmann::json& d = j["delta"];
  return d.contains("base_version") && d["base_version"].is_string()
             ? d["base_version"].get<std::string>()
             : "";
}

}  // namespace

PublishLock::~PublishLock() {
  if (fd_ >= 0) {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
}

absl::Status SnapshotStoreOptions::Validate() const {
  if (root.empty()) return absl::InvalidArgumentError("snapshot root is empty");
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<SnapshotStore>> SnapshotStore::Create(
    const SnapshotStoreOptions& options) {
  absl::Status s = options.Validate();
  if (!s.ok()) return s;
  std::string root = options.root;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  if (!IsDir(root)) {
    if (!options.create_if_missing) {
      return absl::NotFoundError(absl::StrCat("snapshot root ", root, " is not a directory"));
    }
    std::error_code ec;
    fs::create_directories(root, ec);
    if (ec) return absl::InternalError(absl::StrCat("mkdir ", root, ": ", ec.message()));
  }
  if (options.create_if_missing) {
    s = MkdirIfMissing(absl::StrCat(root, "/", kPins));
    if (!s.ok()) return s;
  }
  return std::unique_ptr<SnapshotStore>(new SnapshotStore(std::move(root)));
}

namespace {

// `dir` (an existing path) is a directory this process may create entries in.
// `root` is the snapshot root being checked, `dir` itself or an ancestor.
absl::Status CheckWritableDir(const std::string& root, const std::string& dir) {
  const std::string where = dir == root ? dir : absl::StrCat("cannot create ", root, ": ", dir);
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(where, " cannot be read (", std::strerror(errno), ")"));
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, " is ", S_ISREG(st.st_mode) ? "a regular file" : "not a directory",
                     S_ISREG(st.st_mode) ? ", not a directory" : ""));
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(where, " is not writable by this process (", std::strerror(errno), ")"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status SnapshotStore::CheckWritableRoot(const std::string& root) {
  if (root.empty()) return absl::InvalidArgumentError("snapshot root is empty");
  std::error_code ec;
  if (fs::exists(root, ec)) {
    if (absl::Status s = CheckWritableDir(root, root); !s.ok()) return s;
    const std::string lock = absl::StrCat(root, "/", kLock);  // opened for writing to publish
    if (::access(lock.c_str(), F_OK) == 0 && ::access(lock.c_str(), R_OK | W_OK) != 0) {
      return absl::FailedPreconditionError(absl::StrCat("the publish lock ", lock,
                                                        " is not writable by this process (",
                                                        std::strerror(errno), ")"));
    }
    return absl::OkStatus();
  }
  // Missing: Create makes it and its missing parents under the nearest
  // existing ancestor, which must be a writable directory.
  fs::path p = fs::path(root).lexically_normal();
  for (;;) {
    fs::path parent = p.has_relative_path() ? p.parent_path() : p;
    if (parent.empty()) parent = ".";
    if (parent == p || fs::exists(parent, ec) || ec) return CheckWritableDir(root, parent.string());
    p = parent;
  }
}

std::string SnapshotStore::VersionDir(absl::string_view version) const {
  return absl::StrCat(root_, "/", version);
}
std::string SnapshotStore::TempDir(absl::string_view version) const {
  return absl::StrCat(root_, "/", version, ".tmp");
}

absl::StatusOr<std::string> SnapshotStore::PublishedVersionDir(absl::string_view version) const {
  if (!IsValidVersionId(version)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad snapshot version '", version.substr(0, 64), "': not a version id"));
  }
  std::string dir = VersionDir(version);
  if (!IsDir(dir)) {
    return absl::NotFoundError(
        absl::StrCat("snapshot version ", version, " not found: ", dir, " is not a directory"));
  }
  return dir;
}

std::string SnapshotStore::PartDirName(uint32_t partition) {
  return absl::StrCat("part-", partition);
}

absl::StatusOr<std::string> SnapshotStore::PublishedPartDir(absl::string_view version,
                                                            int partition) const {
  absl::StatusOr<std::string> dir = PublishedVersionDir(version);
  if (!dir.ok()) return dir.status();
  const bool partitioned = IsDir(absl::StrCat(*dir, "/", PartDirName(0)));
  if (!partitioned) {
    if (partition <= 0) return dir;
    return absl::FailedPreconditionError(absl::StrCat(
        "snapshot version ", version, " is not partitioned: it has no partition ", partition));
  }
  if (partition < 0) {
    return absl::FailedPreconditionError(absl::StrCat("snapshot version ", version,
                                                      " is partitioned (", *dir,
                                                      "/part-<I>/): serve one part (--partition)"));
  }
  std::string part = absl::StrCat(*dir, "/", PartDirName(static_cast<uint32_t>(partition)));
  if (!IsDir(part)) {
    return absl::FailedPreconditionError(absl::StrCat("snapshot version ", version,
                                                      " has no partition ", partition, " (", part,
                                                      " is not a directory)"));
  }
  return part;
}

bool SnapshotStore::IsValidVersionId(absl::string_view v) {
  // YYYYMMDDTHHMMSSZ-xxxxxxxx[-n]
  if (v.size() < 25) return false;
  for (int i = 0; i < 8; ++i)
    if (!absl::ascii_isdigit(v[i])) return false;
  if (v[8] != 'T') return false;
  for (int i = 9; i < 15; ++i)
    if (!absl::ascii_isdigit(v[i])) return false;
  if (v[15] != 'Z' || v[16] != '-') return false;
  for (int i = 17; i < 25; ++i) {
    if (!absl::ascii_isdigit(v[i]) && !(v[i] >= 'a' && v[i] <= 'f')) return false;
  }
  if (v.size() == 25) return true;
  if (v[25] != '-' || v.size() == 26 || v.size() > 32) return false;
  for (size_t i = 26; i < v.size(); ++i)
    if (!absl::ascii_isdigit(v[i])) return false;
  return true;
}

std::string SnapshotStore::MakeVersionId(absl::Time created, uint64_t content_hash) {
  return absl::StrCat(absl::FormatTime("%Y%m%dT%H%M%SZ", created, absl::UTCTimeZone()), "-",
                      absl::StrFormat("%08x", static_cast<uint32_t>(content_hash)));
}

absl::StatusOr<std::string> SnapshotStore::ReadCurrent() const {
  const std::string path = absl::StrCat(root_, "/", kCurrent);
  absl::StatusOr<std::string> text = snapshot::ReadFileToString(path);
  if (!text.ok()) {
    if (absl::IsNotFound(text.status())) {
      return absl::NotFoundError(absl::StrCat("no snapshot published yet: ", path, " missing"));
    }
    return text.status();
  }
  std::string version(absl::StripAsciiWhitespace(*text));
  if (!IsValidVersionId(version)) {
    return absl::DataLossError(
        absl::StrCat(path, ": '", version.substr(0, 64), "' is not a version id"));
  }
  if (!IsDir(VersionDir(version))) {
    return absl::DataLossError(absl::StrCat(path, " names ", version, ", which does not exist"));
  }
  return version;
}

absl::StatusOr<std::vector<std::string>> SnapshotStore::ListVersions() const {
  absl::StatusOr<std::vector<std::string>> names = ListNames(root_);
  if (!names.ok()) return names.status();
  std::vector<std::string> out;
  for (const std::string& n : *names) {
    if (IsValidVersionId(n) && IsDir(VersionDir(n))) out.push_back(n);
  }
  return out;
}

absl::StatusOr<std::unique_ptr<PublishLock>> SnapshotStore::AcquirePublishLock(
    double timeout_seconds) const {
  const std::string path = absl::StrCat(root_, "/", kLock);
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return absl::InternalError(absl::StrCat("open ", path, ": ", std::strerror(errno)));
  auto deadline = absl::Now() + absl::Seconds(std::max(0.0, timeout_seconds));
  for (;;) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return std::make_unique<PublishLock>(fd);
    if (errno != EWOULDBLOCK && errno != EINTR) {
      int err = errno;
      ::close(fd);
      return absl::InternalError(absl::StrCat("flock ", path, ": ", std::strerror(err)));
    }
    if (absl::Now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ::close(fd);
  return absl::FailedPreconditionError(absl::StrCat(
      "another publisher holds ", path, " (a graphsieve-build already running on this root?)"));
}

absl::StatusOr<std::vector<std::string>> SnapshotStore::RemoveStaleTemporaries(
    const PublishLock&) const {
  std::vector<std::string> removed;
  for (const std::string& dir : {root_, absl::StrCat(root_, "/", kPins)}) {
    if (!IsDir(dir)) continue;
    absl::StatusOr<std::vector<std::string>> names = ListNames(dir);
    if (!names.ok()) return names.status();
    for (const std::string& n : *names) {
      if (absl::EndsWith(n, ".tmp") || absl::EndsWith(n, ".deleting")) {
        absl::Status s = snapshot::RemoveTree(absl::StrCat(dir, "/", n));
        if (!s.ok()) return s;
        removed.push_back(n);
      }
    }
  }
  return removed;
}

std::string SnapshotStore::NewVersionId(const PublishLock&, absl::Time created,
                                        uint64_t hash) const {
  // Strictly after every version already under the root, so that byte order
  // stays creation order even for several builds within one second.
  std::string latest;
  absl::StatusOr<std::vector<std::string>> versions = ListVersions();
  if (versions.ok() && !versions->empty()) latest = versions->back();
  absl::Time t = absl::FromUnixSeconds(absl::ToUnixSeconds(created));
  std::string id = MakeVersionId(t, hash);
  while (id <= latest || Exists(VersionDir(id)) || Exists(TempDir(id))) {
    t += absl::Seconds(1);
    id = MakeVersionId(t, hash);
  }
  return id;
}

absl::Status SnapshotStore::WriteCurrent(const std::string& version) const {
  return snapshot::WriteFileAtomic(absl::StrCat(root_, "/", kCurrent), version + "\n");
}

absl::Status SnapshotStore::Publish(const PublishLock&, const std::string& version) const {
  if (!IsValidVersionId(version)) {
    return absl::InvalidArgumentError(absl::StrCat("'", version, "' is not a version id"));
  }
  const std::string tmp = TempDir(version), final_dir = VersionDir(version);
  if (!IsDir(tmp)) return absl::NotFoundError(absl::StrCat(tmp, " does not exist"));
  if (Exists(final_dir)) return absl::AlreadyExistsError(absl::StrCat(final_dir, " exists"));
  if (::rename(tmp.c_str(), final_dir.c_str()) != 0) {
    return absl::InternalError(
        absl::StrCat("rename ", tmp, " -> ", final_dir, ": ", std::strerror(errno)));
  }
  absl::Status s = snapshot::FsyncPath(root_);
  if (!s.ok()) return s;
  return WriteCurrent(version);
}

absl::Status SnapshotStore::SetCurrent(const PublishLock&, const std::string& version) const {
  if (!IsValidVersionId(version) || !IsDir(VersionDir(version))) {
    return absl::NotFoundError(absl::StrCat("no published version '", version, "' under ", root_));
  }
  return WriteCurrent(version);
}

absl::StatusOr<std::vector<std::string>> SnapshotStore::ApplyRetention(const PublishLock&,
                                                                       int keep) const {
  if (keep < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("retention must keep >= 1 versions, got ", keep));
  }
  absl::StatusOr<std::vector<std::string>> versions = ListVersions();
  if (!versions.ok()) return versions.status();
  absl::StatusOr<std::string> current = ReadCurrent();
  if (!current.ok() && !absl::IsNotFound(current.status())) return current.status();
  RemoveExpiredHolds(absl::Now()).IgnoreError();  // best effort: expired holds keep nothing
  std::vector<std::string> deleted;
  const int n = static_cast<int>(versions->size());
  const absl::Time now = absl::Now();
  // Kept: the newest `keep`, CURRENT, pinned and held versions; a kept delta
  // keeps its base (docs/SNAPSHOT.md "Delta versions"), also a pinned or held
  // one (a server holding an older delta may need its base to reopen it).
  std::vector<bool> kept(n, false), is_delta(n, false);
  std::vector<std::string> bases;
  for (int i = 0; i < n; ++i) {
    const std::string& v = (*versions)[i];
    const std::string base = DeltaBaseOf(VersionDir(v));
    is_delta[i] = !base.empty();
    kept[i] = i >= n - keep || (current.ok() && v == *current) || IsPinned(v) || IsHeld(v, now);
    if (kept[i]) bases.push_back(base);
  }
  // Deltas go before full versions, so a kill between two deletions never
  // leaves a visible delta whose base is gone; oldest first within each.
  for (const bool deltas : {true, false}) {
    for (int i = 0; i < n; ++i) {
      const std::string& v = (*versions)[i];
      if (kept[i] || std::find(bases.begin(), bases.end(), v) != bases.end()) continue;
      if (is_delta[i] != deltas) continue;
      const std::string dir = VersionDir(v), hidden = dir + ".deleting";
      if (::rename(dir.c_str(), hidden.c_str()) != 0) {
        return absl::InternalError(absl::StrCat("rename ", dir, ": ", std::strerror(errno)));
      }
      if (IsPinned(v) || IsHeld(v, absl::Now())) {  // a pin or hold raced with us: put it back
        if (::rename(hidden.c_str(), dir.c_str()) != 0) {
          return absl::InternalError(absl::StrCat("rename ", hidden, ": ", std::strerror(errno)));
        }
        continue;
      }
      absl::Status s = snapshot::RemoveTree(hidden);
      if (!s.ok()) return s;
      deleted.push_back(v);
    }
  }
  absl::Status s = snapshot::FsyncPath(root_);
  if (!s.ok()) return s;
  return deleted;
}

absl::Status SnapshotStore::Pin(const std::string& version, absl::string_view note) const {
  if (!IsValidVersionId(version) || !IsDir(VersionDir(version))) {
    return absl::NotFoundError(
        absl::StrCat("cannot pin '", version, "': no such published version under ", root_));
  }
  const std::string pins = absl::StrCat(root_, "/", kPins);
  absl::Status s = MkdirIfMissing(pins);
  if (!s.ok()) return s;
  const std::string pin = absl::StrCat(pins, "/", version);
  s = snapshot::WriteFileAtomic(pin, absl::StrCat(note, "\n"));
  if (!s.ok()) return s;
  if (!IsDir(VersionDir(version))) {  // deleted by retention meanwhile
    ::unlink(pin.c_str());
    return absl::NotFoundError(
        absl::StrCat("cannot pin '", version, "': it was deleted by retention"));
  }
  return absl::OkStatus();
}

absl::Status SnapshotStore::Unpin(const std::string& version) const {
  if (!IsValidVersionId(version)) {
    return absl::InvalidArgumentError(absl::StrCat("'", version, "' is not a version id"));
  }
  const std::string pin = absl::StrCat(root_, "/", kPins, "/", version);
  if (::unlink(pin.c_str()) != 0) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat(version, " is not pinned"));
    return absl::InternalError(absl::StrCat("unlink ", pin, ": ", std::strerror(errno)));
  }
  return snapshot::FsyncPath(absl::StrCat(root_, "/", kPins));
}

absl::StatusOr<std::vector<std::string>> SnapshotStore::ListPins() const {
  const std::string pins = absl::StrCat(root_, "/", kPins);
  if (!IsDir(pins)) return std::vector<std::string>();
  absl::StatusOr<std::vector<std::string>> names = ListNames(pins);
  if (!names.ok()) return names.status();
  std::vector<std::string> out;
  for (const std::string& n : *names) {
    if (IsValidVersionId(n)) out.push_back(n);
  }
  return out;
}

bool SnapshotStore::IsPinned(const std::string& version) const {
  return Exists(absl::StrCat(root_, "/", kPins, "/", version));
}

}  // namespace graphsieve
