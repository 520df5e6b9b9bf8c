#include "tests/client/cluster.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tests/temp_dir.h"

extern char** environ;

namespace graphsieve::testing {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

pid_t Spawn(const std::vector<std::string>& argv, const std::string& in, const std::string& out,
            const std::string& err) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, in.empty() ? "/dev/null" : in.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

// Waits up to timeout for pid; returns its exit code, -1 on signal, -2 when still running.
int WaitFor(pid_t pid, double timeout_seconds) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds * 1000));
  while (true) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (r < 0) return -1;
    if (std::chrono::steady_clock::now() > deadline) return -2;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

int counter = 0;

// Removes <base>.out and <base>.err (RunProgram's, once read).
void RemoveOutputs(const std::string& base) {
  std::error_code ec;
  std::filesystem::remove(base + ".out", ec);
  std::filesystem::remove(base + ".err", ec);
}

}  // namespace

RunResult RunProgram(const std::vector<std::string>& argv, double timeout_seconds,
                     const std::string& stdin_path) {
  const std::string base = absl::StrCat(ProcessTempDir(), "/run-", counter++);
  RunResult result;
  const pid_t pid = Spawn(argv, stdin_path, base + ".out", base + ".err");
  if (pid < 0) {
    RemoveOutputs(base);
    result.err = absl::StrCat("cannot start ", argv[0]);
    return result;
  }
  result.exit_code = WaitFor(pid, timeout_seconds);
  if (result.exit_code == -2) {
    kill(pid, SIGKILL);
    WaitFor(pid, 10);
    result.exit_code = -1;
  }
  result.out = ReadFile(base + ".out");
  result.err = ReadFile(base + ".err");
  RemoveOutputs(base);
  return result;
}

absl::Status ServerProcess::Start(const std::string& snapshot_root, int port,
                                  const std::vector<std::string>& extra_flags) {
  Stop();
  port_ = 0;
  const std::string base = absl::StrCat(ProcessTempDir(), "/server-", counter++);
  out_path_ = base + ".out";
  err_path_ = base + ".err";
  std::vector<std::string> argv = {ServerBinary(),
                                   "--snapshot_root=" + snapshot_root,
                                   "--host=127.0.0.1",
                                   absl::StrCat("--port=", port),
                                   "--admin_port=-1",
                                   "--poll_interval_seconds=0",
                                   "--drain_grace_seconds=1",
                                   "--block_cache_mb=8"};
  argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
  pid_ = Spawn(argv, "", out_path_, err_path_);
  if (pid_ < 0) return absl::InternalError("cannot start graphsieve-server");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string out = ReadFile(out_path_);
    if (const size_t at = out.find("listening port="); at != std::string::npos) {
      port_ = std::atoi(out.c_str() + at + std::strlen("listening port="));
    }
    // The port is printed before the first version has loaded (off the
    // request path); tests want a server that answers.
    if (port_ > 0 && ReadFile(err_path_).find("serving version ") != std::string::npos) {
      return absl::OkStatus();
    }
    if (WaitFor(pid_, 0) != -2) {
      pid_ = -1;
      return absl::InternalError(absl::StrCat("graphsieve-server exited: ", ReadFile(err_path_)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  Stop();
  return absl::DeadlineExceededError(
      "graphsieve-server did not print its port and start serving a version within 30 s");
}

int ServerProcess::Stop() {
  if (pid_ < 0) return 0;
  kill(pid_, SIGTERM);
  int code = WaitFor(pid_, 15);
  if (code == -2) {
    kill(pid_, SIGKILL);
    WaitFor(pid_, 10);
    code = -1;
  }
  pid_ = -1;
  return code;
}

std::string ServerProcess::target() const { return absl::StrCat("127.0.0.1:", port_); }
std::string ServerProcess::stderr_text() const { return ReadFile(err_path_); }

std::string GenBinary() { return GRAPHSIEVE_GEN_BINARY; }
std::string BuildBinary() { return GRAPHSIEVE_BUILD_BINARY; }
std::string ServerBinary() { return GRAPHSIEVE_SERVER_BINARY; }
std::string CliBinary() { return GRAPHSIEVE_CLI_BINARY; }

absl::StatusOr<std::string> GenerateLog(const std::string& dir, int64_t users, int64_t items,
                                        int64_t instances, uint64_t seed) {
  const std::string path = dir + "/log.csv";
  // Debugging aid: run against an existing log instead of a generated one.
  if (const char* given = std::getenv("GRAPHSIEVE_CLIENT_TEST_LOG"); given != nullptr && *given) {
    std::filesystem::copy_file(given, path, std::filesystem::copy_options::overwrite_existing);
    return path;
  }
  RunResult r = RunProgram(
      {GenBinary(), "--preset=tiny", absl::StrCat("--users=", users),
       absl::StrCat("--items=", items), absl::StrCat("--instances=", instances),
       absl::StrCat("--seed=", seed), "--positive_rate=0.1", "--output=" + path, "--quiet"},
      120);
  if (r.exit_code != 0) {
    return absl::InternalError(absl::StrCat("graphsieve-gen failed (", r.exit_code, "): ", r.err));
  }
  return path;
}

absl::Status BuildSnapshot(const std::string& log, const std::string& root, double alpha,
                           const std::vector<std::string>& extra_flags) {
  std::vector<std::string> argv = {
      BuildBinary(), "--input=" + log, "--snapshot_root=" + root, absl::StrCat("--alpha=", alpha),
      "--threads=2", "--quiet"};
  argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
  RunResult r = RunProgram(argv, 300);
  if (r.exit_code != 0) {
    return absl::InternalError(absl::StrCat("graphsieve-build failed (", r.exit_code,
                                            "): ", absl::StrJoin(argv, " "), "\n", r.err, r.out));
  }
  return absl::OkStatus();
}

std::string OpensslBinary() {
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path != nullptr ? path : "/usr/bin", ':')) {
    const std::string candidate = absl::StrCat(dir.empty() ? "." : dir, "/openssl");
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

absl::Status MakeSelfSignedCert(const std::string& dir, const std::string& name) {
  const std::string base = absl::StrCat(dir, "/", name);
  std::vector<std::string> argv = absl::StrSplit(
      "req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 "
      "-subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1",
      ' ');
  argv.insert(argv.begin(), OpensslBinary());
  argv.insert(argv.end(), {"-keyout", base + ".key", "-out", base + ".pem"});
  const RunResult r = RunProgram(argv, 60);
  if (r.exit_code != 0) {
    return absl::InternalError(absl::StrCat("openssl req failed (", r.exit_code, "): ", r.err));
  }
  return absl::OkStatus();
}

std::string CurrentVersion(const std::string& root) {
  std::ifstream in(root + "/CURRENT");
  std::string v;
  std::getline(in, v);
  return v;
}

}  // namespace graphsieve::testing
