// See tests/distributed/mpi_test_main.h.
#include "tests/distributed/mpi_test_main.h"

#include <memory>

#include "absl/types/span.h"
#include "core/distributed/mpi_communicator.h"
#include "gtest/gtest.h"

namespace graphsieve {
Communicator* g_comm = nullptr;
}  // namespace graphsieve

int main(int argc, char** argv) {
  graphsieve::MpiSession session(&argc, &argv);
  std::unique_ptr<graphsieve::Communicator> world = session.World();
  graphsieve::g_comm = world.get();
  ::testing::InitGoogleTest(&argc, argv);
  const int failed = RUN_ALL_TESTS();
  // Every rank must pass: a failure on rank 1 alone fails the job.
  double any = failed != 0;
  world->AllReduceMax(absl::MakeSpan(&any, 1));
  graphsieve::g_comm = nullptr;
  world.reset();
  return any != 0 ? 1 : 0;
}
