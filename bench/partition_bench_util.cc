// Processes and /proc readings for graphsieve-bench-partitions (partition_bench.h).
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "bench/partition_bench.h"

extern char** environ;

namespace graphsieve {

absl::StatusOr<Server> Spawn(const std::string& binary, const std::string& root,
                             const std::vector<std::string>& flags) {
  int out[2];
  if (pipe(out) != 0) return absl::InternalError("pipe");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  std::vector<std::string> args = {binary, "--snapshot-root=" + root, "--host=127.0.0.1",
                                   "--port=0", "--admin-port=-1"};
  args.insert(args.end(), flags.begin(), flags.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  Server s;
  const int rc = posix_spawn(&s.pid, binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (rc != 0) {
    close(out[0]);
    return absl::InternalError(absl::StrCat("cannot start ", binary));
  }
  std::string line;
  char c;
  while (line.size() < 512 && read(out[0], &c, 1) == 1 && c != '\n') line.push_back(c);
  close(out[0]);
  int port = 0;
  for (absl::string_view part : absl::StrSplit(line, ' ')) {
    if (absl::ConsumePrefix(&part, "port=")) (void)absl::SimpleAtoi(part, &port);
    if (absl::ConsumePrefix(&part, "operator=")) s.operator_target = std::string(part);
  }
  if (port == 0) return absl::InternalError(absl::StrCat("no port in '", line, "'"));
  s.target = absl::StrCat("127.0.0.1:", port);
  return s;
}

void Stop(const Server& s) {
  if (s.pid < 0) return;
  kill(s.pid, SIGTERM);
  int status = 0;
  waitpid(s.pid, &status, 0);
}

std::unique_ptr<SamplingRateClient> MakeClient(const std::string& target) {
  SamplingRateClientOptions o;
  o.target = target;
  o.deadline_seconds = 300;  // the first call waits for the version to load
  o.max_attempts = 50;
  auto c = SamplingRateClient::Create(o);
  return c.ok() ? *std::move(c) : nullptr;
}

uint64_t RssKiB(pid_t pid, const char* field) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view v(line);
    if (absl::ConsumePrefix(&v, field)) {
      uint64_t kib = 0;
      (void)absl::SimpleAtoi(absl::StripSuffix(absl::StripAsciiWhitespace(v), " kB"), &kib);
      return kib;
    }
  }
  return 0;
}

double ProcessCpuSeconds(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string text((std::istreambuf_iterator<char>(in)), {});
  const size_t close_paren = text.rfind(')');  // the command may hold spaces
  if (close_paren == std::string::npos) return 0;
  std::vector<std::string> fields = absl::StrSplit(text.substr(close_paren + 2), ' ');
  // Fields after "(comm) ": state is [0], utime [11], stime [12] (proc(5) 14, 15).
  uint64_t utime = 0, stime = 0;
  if (fields.size() < 13 || !absl::SimpleAtoi(fields[11], &utime) ||
      !absl::SimpleAtoi(fields[12], &stime)) {
    return 0;
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double SelfCpuSeconds() {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + u.ru_stime.tv_sec +
         u.ru_stime.tv_usec * 1e-6;
}

}  // namespace graphsieve
