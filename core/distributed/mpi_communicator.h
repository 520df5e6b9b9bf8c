// MPI implementation of Communicator (communicator.h) over OpenMPI's
// MPI_COMM_WORLD. Built only when CMake found MPI (GRAPHSIEVE_HAVE_MPI).
//
// Lifetime: MpiSession initialises MPI in its constructor and finalises it
// in its destructor; create one per process, before any MpiCommunicator.
// Abort() ends every rank of the job (MPI_Abort) — the fallback when a rank
// fails outside an agreement point, so no rank waits forever.
//
// Thread-safety: one thread at a time (MPI_THREAD_FUNNELED).
#ifndef GRAPHSIEVE_CORE_DISTRIBUTED_MPI_COMMUNICATOR_H_
#define GRAPHSIEVE_CORE_DISTRIBUTED_MPI_COMMUNICATOR_H_

#include <memory>

#include "core/distributed/communicator.h"

namespace graphsieve {

// True when this process was started by mpirun/mpiexec (OpenMPI, PMIx or
// Hydra environment variables), so MPI should be initialised.
bool LaunchedByMpirun();

class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  std::unique_ptr<Communicator> World() const;
  [[noreturn]] static void Abort(int exit_code);
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_DISTRIBUTED_MPI_COMMUNICATOR_H_
