// Test harness for the client's integration tests: runs the real
// graphsieve-gen, graphsieve-build and graphsieve-server binaries (their paths
// come from compile definitions) with bounded waits only.
//
// Not thread-safe; one harness per test process.
#ifndef GRAPHSIEVE_TESTS_CLIENT_CLUSTER_H_
#define GRAPHSIEVE_TESTS_CLIENT_CLUSTER_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace graphsieve::testing {

struct RunResult {
  int exit_code = -1;  // -1: killed after the timeout or by a signal
  std::string out;     // standard output
  std::string err;     // standard error
};

// Runs argv[0] with argv (stdin from /dev/null, or from `stdin_path`), kills it
// after timeout_seconds. Never hangs. Its output goes through files under
// ProcessTempDir() (tests/temp_dir.h), removed once read.
RunResult RunProgram(const std::vector<std::string>& argv, double timeout_seconds,
                     const std::string& stdin_path = "");

// A graphsieve-server child on 127.0.0.1. Stops (SIGTERM, then SIGKILL) on
// destruction. Its stdout and stderr are files under ProcessTempDir()
// (tests/temp_dir.h), removed after the program's last test; directories
// for the tests come from NewTempDir() there.
class ServerProcess {
 public:
  ServerProcess() = default;
  ~ServerProcess() { Stop(); }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // Starts the server on `port` (0 = a free one) and waits (bounded, 30 s)
  // for its "listening port=P" line and its first "serving version" log
  // line. Extra flags are appended.
  absl::Status Start(const std::string& snapshot_root, int port,
                     const std::vector<std::string>& extra_flags = {});
  // SIGTERM, waits up to 15 s, then SIGKILL. Returns the exit code (-1 if killed).
  int Stop();
  int port() const { return port_; }
  std::string target() const;
  std::string stderr_text() const;

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string out_path_, err_path_;
};

// Paths of the binaries under test (compile definitions).
std::string GenBinary();
std::string BuildBinary();
std::string ServerBinary();
std::string CliBinary();

// The version a snapshot root's CURRENT file names ("" when there is none).
std::string CurrentVersion(const std::string& root);

// graphsieve-gen: a small deterministic log (preset, users, items, instances).
// With GRAPHSIEVE_CLIENT_TEST_LOG set, that file is copied instead (debugging aid).
absl::StatusOr<std::string> GenerateLog(const std::string& dir, int64_t users, int64_t items,
                                        int64_t instances, uint64_t seed);

// graphsieve-build of `log` into `root` with this alpha (exact resistance).
absl::Status BuildSnapshot(const std::string& log, const std::string& root, double alpha,
                           const std::vector<std::string>& extra_flags = {});

// The openssl command-line tool on PATH, or "" when it is absent.
std::string OpensslBinary();

// A self-signed EC certificate for localhost and 127.0.0.1 (valid 2 days), made
// with `openssl req -x509`: writes <dir>/<name>.pem and <dir>/<name>.key.
// REQUIRES: !OpensslBinary().empty().
absl::Status MakeSelfSignedCert(const std::string& dir, const std::string& name);

}  // namespace graphsieve::testing

#endif  // GRAPHSIEVE_TESTS_CLIENT_CLUSTER_H_
