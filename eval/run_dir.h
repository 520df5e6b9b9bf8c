// The deployed mode's scratch space for one graphsieve-eval run, removed
// however the run ends.
//
// The deployed mode builds a snapshot per configuration and seed (tens of MB
// at scale) in a fresh directory and removes it after use. A run interrupted
// (SIGINT, SIGTERM) or killed (the OOM killer's SIGKILL) used to leave the one
// it was building. A signal handler cannot remove a tree safely, and a thread
// that removes it races the build still writing into it, so the removal is
// left to a parent process that outlives the work:
//
//   MakeGuardedRunDir(base)  makes <base>/graphsieve-eval-XXXXXX and forks.
//       The child returns and runs the program, with its snapshot directories
//       inside that directory. The parent waits for the child, forwarding
//       SIGINT, SIGTERM and SIGHUP to it, removes the directory once the child
//       has ended -- by exit, signal or SIGKILL -- and ends as the child did
//       (by the same signal for SIGINT, SIGTERM, SIGHUP and SIGKILL, else with
//       the child's exit code, or 128 + the signal). The parent never returns.
//
// Only a SIGKILL of the parent itself leaves the directory behind, under
// --work_dir, $TMPDIR, /dev/shm or /tmp (eval/deployed.h SnapshotWorkBase),
// named graphsieve-eval-XXXXXX.
//
// Thread-compatible: call from main() while no other thread runs.
#ifndef GRAPHSIEVE_EVAL_RUN_DIR_H_
#define GRAPHSIEVE_EVAL_RUN_DIR_H_

#include <string>

#include "absl/status/statusor.h"

namespace graphsieve::eval {

struct RunDir {
  std::string path;
  // false: no parent guards it (the process has other threads, or fork
  // failed); the program removes it at its end, and an interrupt leaves it.
  bool guarded = false;
};

// See above. Errors: the directory cannot be made under `base` (the errno's
// code, naming `base`).
absl::StatusOr<RunDir> MakeGuardedRunDir(const std::string& base);

}  // namespace graphsieve::eval

#endif  // GRAPHSIEVE_EVAL_RUN_DIR_H_
