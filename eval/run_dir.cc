#include "eval/run_dir.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace graphsieve::eval {
namespace {

// Whether this process runs one thread (a forked child gets only the caller's).
bool SingleThreaded() {
  std::error_code ec;
  int threads = 0;
  for (std::filesystem::directory_iterator it("/proc/self/task", ec), end; !ec && it != end;
       it.increment(ec)) {
    ++threads;
  }
  return !ec && threads == 1;
}

// The parent: waits for `child` (forwarding the signals of `waited` but
// SIGCHLD), removes `dir`, and ends as the child ended.
[[noreturn]] void SuperviseChild(pid_t child, const std::string& dir, const sigset_t& waited) {
  int status = 0;
  while (true) {
    const int sig = ::sigwaitinfo(&waited, nullptr);
    if (sig == SIGCHLD) {
      if (::waitpid(child, &status, WNOHANG) == child && (WIFEXITED(status) || WIFSIGNALED(status)))
        break;
    } else if (sig > 0) {
      ::kill(child, sig);
    }
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (ec) std::cerr << "graphsieve-eval: cannot remove " << dir << ": " << ec.message() << "\n";
  if (WIFEXITED(status)) ::_exit(WEXITSTATUS(status));
  const int sig = WTERMSIG(status);
  if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGKILL) {
    ::signal(sig, SIG_DFL);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, sig);
    ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
    ::raise(sig);
  }
  ::_exit(128 + sig);
}

}  // namespace

absl::StatusOr<RunDir> MakeGuardedRunDir(const std::string& base) {
  RunDir run;
  run.path = absl::StrCat(base, "/graphsieve-eval-XXXXXX");
  if (::mkdtemp(run.path.data()) == nullptr) {
    return absl::ErrnoToStatus(errno, absl::StrCat("cannot make a directory under ", base));
  }
  if (!SingleThreaded()) return run;
  sigset_t waited, before;
  sigemptyset(&waited);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&waited, sig);
  ::sigprocmask(SIG_BLOCK, &waited, &before);  // from now on taken by sigwaitinfo
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child > 0) SuperviseChild(child, run.path, waited);
  ::sigprocmask(SIG_SETMASK, &before, nullptr);
  run.guarded = child == 0;
  return run;
}

}  // namespace graphsieve::eval
