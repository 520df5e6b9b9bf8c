// The gtest main of the tests that mpirun starts on several ranks
// (tests/distributed/mpi_test_main.cc): it opens the MPI session, sets g_comm to
// the world communicator, runs every test on every rank and fails the job
// when any rank failed.
#ifndef GRAPHSIEVE_TESTS_DIST_MPI_TEST_MAIN_H_
#define GRAPHSIEVE_TESTS_DIST_MPI_TEST_MAIN_H_

#include "core/distributed/communicator.h"

namespace graphsieve {

// The world communicator while the tests run; owned by the main.
extern Communicator* g_comm;

}  // namespace graphsieve

#endif  // GRAPHSIEVE_TESTS_DIST_MPI_TEST_MAIN_H_
