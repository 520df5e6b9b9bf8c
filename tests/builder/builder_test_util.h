// Helpers for the builder tests: a small deterministic impression log written
// as CSV, and running the real graphsieve-build binary (path from the
// GRAPHSIEVE_BUILD_BINARY compile definition) with captured output.
#ifndef GRAPHSIEVE_TESTS_BUILDER_BUILDER_TEST_UTIL_H_
#define GRAPHSIEVE_TESTS_BUILDER_BUILDER_TEST_UTIL_H_

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/snapshot/file_util.h"

extern char** environ;

namespace graphsieve {
namespace testing_util {

// users x items grid, `per_user` distinct items per user, ~1 in 8 positive,
// ~5% of instances repeated; string ids for users ("u<k>") so --export must
// restore the original text.
inline void WriteSmallLog(const std::string& path, int users, int items, int per_user,
                          uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::ofstream out(path);
  out << "user_id,item_id,clicked\n";
  for (int u = 0; u < users; ++u) {
    for (int k = 0; k < per_user; ++k) {
      const int item = static_cast<int>((u * 7 + k * 13 + rng() % 5) % items);
      const int label = rng() % 8 == 0;
      const int repeat = rng() % 20 == 0 ? 2 : 1;
      for (int r = 0; r < repeat; ++r) out << "u" << u << "," << item << "," << label << "\n";
    }
  }
}

struct RunResult {
  int exit_code = -1;  // -1: killed by a signal
  int signal = 0;
  std::string out, err;
};

// Starts the binary with `args`; stdout/stderr go to files under `scratch`.
inline pid_t SpawnBuild(const std::vector<std::string>& args, const std::string& scratch) {
  std::vector<std::string> all = {GRAPHSIEVE_BUILD_BINARY};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, (scratch + "/stdout").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, (scratch + "/stderr").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

inline RunResult Wait(pid_t pid, const std::string& scratch) {
  RunResult r;
  int status = 0;
  if (pid > 0 && waitpid(pid, &status, 0) == pid) {
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  }
  r.out = snapshot::ReadFileToString(scratch + "/stdout").value_or("");
  r.err = snapshot::ReadFileToString(scratch + "/stderr").value_or("");
  return r;
}

inline RunResult RunBuildBinary(const std::vector<std::string>& args, const std::string& scratch) {
  return Wait(SpawnBuild(args, scratch), scratch);
}

}  // namespace testing_util
}  // namespace graphsieve

#endif  // GRAPHSIEVE_TESTS_BUILDER_BUILDER_TEST_UTIL_H_
