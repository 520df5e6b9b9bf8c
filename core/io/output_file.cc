#include "core/io/output_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace graphsieve {

absl::StatusOr<OutputFile> OutputFile::Resolve(const std::string& path, absl::string_view flag) {
  namespace fs = std::filesystem;
  if (path.empty()) return absl::InvalidArgumentError(absl::StrCat(flag, ": the path is empty"));
  std::error_code ec;
  struct stat st;
  // An existing FIFO, device or socket, through links or not (/dev/stdout on
  // a pipe links to "pipe:[N]", no name to write beside): written in place.
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    return OutputFile(path, path);
  }
  // A symbolic link (a chain of them) leads to the file it names, existing or not.
  fs::path target = path;
  for (int hops = 0; fs::is_symlink(fs::symlink_status(target, ec)); ++hops) {
    if (hops == 40) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, " '", path, "': too many levels of symbolic links"));
    }
    const fs::path next = fs::read_symlink(target, ec);
    if (ec) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, " '", path, "': cannot read the link: ", ec.message()));
    }
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  if (::stat(target.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, " '", path, "' is a directory; give a file name"));
    }
    if (!S_ISREG(st.st_mode)) {  // a FIFO, a device, a socket: written in place
      return OutputFile(target.string(), target.string());
    }
  } else if (errno != ENOENT) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " '", path, "': ", std::strerror(errno)));
  }
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(parent, ec)) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " '", path, "': the directory '", parent.string(), "' does not exist"));
  }
  if (::access(parent.c_str(), W_OK | X_OK) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " '", path, "': cannot write in '",
                                                   parent.string(), "': ", std::strerror(errno)));
  }
  return OutputFile(target.string() + ".tmp", target.string());
}

absl::Status OutputFile::Commit() const {
  if (in_place()) return absl::OkStatus();
  if (std::rename(write_path_.c_str(), final_path_.c_str()) != 0) {
    const int err = errno;
    ::unlink(write_path_.c_str());
    return absl::InternalError(
        absl::StrCat("renaming ", write_path_, " to ", final_path_, ": ", std::strerror(err)));
  }
  return absl::OkStatus();
}

void OutputFile::Abandon() const {
  if (!in_place()) ::unlink(write_path_.c_str());
}

absl::Status OutputFile::WriteAll(absl::string_view contents, absl::string_view flag) const {
  std::FILE* f = std::fopen(write_path_.c_str(), "wb");
  if (f == nullptr) {
    return absl::ErrnoToStatus(errno, absl::StrCat(flag, ": cannot open ", write_path_));
  }
  const bool written = std::fwrite(contents.data(), 1, contents.size(), f) == contents.size();
  const int write_error = written ? 0 : errno;
  const bool closed = std::fclose(f) == 0;
  const int close_error = closed ? 0 : errno;
  if (!written || !closed) {
    Abandon();
    return absl::ErrnoToStatus(written ? close_error : write_error,
                               absl::StrCat(flag, ": writing ", final_path_));
  }
  return Commit();
}

absl::Status RefuseOutputOverInput(const std::string& output, absl::string_view output_flag,
                                   const std::string& input, absl::string_view input_flag) {
  namespace fs = std::filesystem;
  if (output.empty() || input.empty() || output == "-" || input == "-") return absl::OkStatus();
  std::error_code ec;
  bool same = fs::equivalent(output, input, ec);  // both exist: the same inode
  if (ec) {                                       // one is missing: compare resolved paths
    const fs::path a = fs::weakly_canonical(fs::absolute(output, ec), ec);
    const fs::path b = ec ? fs::path() : fs::weakly_canonical(fs::absolute(input, ec), ec);
    same = !ec && a == b;
  }
  if (!same) return absl::OkStatus();
  // A character device (/dev/null for both) is not a file anyone loses.
  struct stat st;
  if (::stat(output.c_str(), &st) == 0 && S_ISCHR(st.st_mode)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(output_flag, " '", output,
                                                 "' is the same file as ", input_flag, " '", input,
                                                 "': give ", output_flag, " another path"));
}

}  // namespace graphsieve
