// graphsieve-build-testing: graphsieve-build's main (builder/build_main.h)
// with a fault observer: GRAPHSIEVE_TEST_KILL_RANK_AT=R:STAGE makes rank R
// kill itself with SIGKILL when STAGE (a stage name of
// core/offline/build_job.h) has ended on every rank — how dist_build_test
// checks that a lost rank publishes nothing. Built only with the tests.
#include <csignal>
#include <cstdlib>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "builder/build_main.h"

int main(int argc, char** argv) {
  const char* at = std::getenv("GRAPHSIEVE_TEST_KILL_RANK_AT");
  if (at == nullptr) return graphsieve::BuildMain(argc, argv, {});
  const std::string kill_at = at;
  return graphsieve::BuildMain(argc, argv, [kill_at](graphsieve::BuildObserver observer, int rank) {
    observer.stage_done = [kill_at, rank, done = std::move(observer.stage_done)](
                              const std::string& stage, double seconds) {
      if (done) done(stage, seconds);
      if (kill_at == absl::StrCat(rank, ":", stage)) std::raise(SIGKILL);
    };
    return observer;
  });
}
