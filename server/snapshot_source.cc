#include "server/snapshot_source.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace graphsieve {

bool SnapshotSource::IsValidVersionName(const std::string& version) {
  if (version.empty() || version == "." || version == ".." || version.size() > 255) return false;
  for (char c : version) {
    if (c == '/' || c == '\\' || c == '\0' || absl::ascii_isspace(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return true;
}

absl::StatusOr<std::string> SnapshotSource::ReadCurrent() const {
  const std::string path = root_ + "/CURRENT";
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(absl::StrCat(path, ": no CURRENT file (nothing published yet)"));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string version(absl::StripAsciiWhitespace(buffer.str()));
  if (!IsValidVersionName(version)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": '", version.substr(0, 64), "' is not a version directory name"));
  }
  return version;
}

std::vector<std::string> SnapshotSource::ListVersions() const {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(root_, ec)) {
    if (!entry.is_directory(ec)) continue;
    std::string name = entry.path().filename().string();
    if (absl::EndsWith(name, ".tmp")) continue;
    if (!std::filesystem::exists(entry.path() / "MANIFEST.json", ec)) continue;
    out.push_back(std::move(name));
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace graphsieve
