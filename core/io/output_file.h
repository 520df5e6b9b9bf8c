// Where a program writes a file the user names (graphsieve-gen --output,
// graphsieve-build --export, graphsieve-eval --output_md), so that a run that
// fails, is killed or points at the wrong place never leaves a half-written
// file, never replaces something that is not a file, and never overwrites its
// own input (docs/DESIGN.md "Output files"):
//   - a path that does not exist yet, or a regular file: written to a
//     temporary beside it (PATH.tmp) and renamed over it by Commit, so the old
//     file stays whole until the new one is;
//   - a symbolic link: the same, at the file it points to (the link stays);
//   - an existing FIFO or character device (/dev/stdout, /dev/null, a named
//     pipe): written in place, since a rename would replace the node itself;
//   - a directory, or a missing parent directory: refused up front, naming the
//     flag, before any work is done.
//
// Thread-safety: the functions are reentrant; an OutputFile belongs to one
// thread.
#ifndef GRAPHSIEVE_CORE_IO_OUTPUT_FILE_H_
#define GRAPHSIEVE_CORE_IO_OUTPUT_FILE_H_

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace graphsieve {

class OutputFile {
 public:
  // Checks where `path` leads (above) without creating anything; `flag` names
  // it in errors ("--output"). INVALID_ARGUMENT for an empty path, a
  // directory, a parent directory that does not exist, or a parent the
  // process may not write to.
  static absl::StatusOr<OutputFile> Resolve(const std::string& path, absl::string_view flag);

  // What to open for writing (a temporary, or the node itself in place).
  const std::string& write_path() const { return write_path_; }
  // The file the output ends up in (the link's target for a symbolic link).
  const std::string& final_path() const { return final_path_; }
  bool in_place() const { return write_path_ == final_path_; }

  // After the writes succeeded and the file is closed: renames the temporary
  // over the final file (nothing in place). On failure the temporary is
  // removed; errors name both paths.
  absl::Status Commit() const;
  // After a failure: removes the temporary (nothing in place).
  void Abandon() const;

  // The whole output at once: writes `contents` to write_path() and commits;
  // on a failed write or close (a full disk shows at the close) abandons.
  // Errors name `flag` and the file.
  absl::Status WriteAll(absl::string_view contents, absl::string_view flag) const;

 private:
  OutputFile(std::string write_path, std::string final_path)
      : write_path_(std::move(write_path)), final_path_(std::move(final_path)) {}
  std::string write_path_, final_path_;
};

// INVALID_ARGUMENT when `output` (given by `output_flag`) is, or would
// overwrite, the same file as `input` (`input_flag`): the same inode when both
// exist, else the same absolute path once symbolic links and `..` are
// resolved. "-" (standard input or output) and empty paths never match.
absl::Status RefuseOutputOverInput(const std::string& output, absl::string_view output_flag,
                                   const std::string& input, absl::string_view input_flag);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_IO_OUTPUT_FILE_H_
