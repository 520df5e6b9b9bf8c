// The few collective operations the distributed builder needs
// (docs/DESIGN.md §5), behind an interface so that core/maec and builder/
// call a communicator, never MPI directly. Two implementations:
//   SingleProcessCommunicator (this header): one rank; every collective is
//     the identity. What a build without mpirun uses.
//   MpiCommunicator (mpi_communicator.h, only when MPI was found at
//     configure time): MPI_COMM_WORLD through OpenMPI.
//
// Contract (as MPI): a collective must be called by every rank, in the same
// order, with the same element counts; a rank that skips one hangs the
// others. Code that may fail between collectives agrees first
// (AgreeOnStatus) so every rank leaves together.
//
// Thread-safety: call a communicator from one thread at a time.
#ifndef GRAPHSIEVE_CORE_DISTRIBUTED_COMMUNICATOR_H_
#define GRAPHSIEVE_CORE_DISTRIBUTED_COMMUNICATOR_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace graphsieve {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Element-wise reductions over all ranks, in place (every rank gets the result).
  virtual void AllReduceSum(absl::Span<double> values) = 0;
  virtual void AllReduceSum(absl::Span<float> values) = 0;
  virtual void AllReduceSum(absl::Span<uint64_t> values) = 0;
  virtual void AllReduceMax(absl::Span<double> values) = 0;
  virtual void AllReduceMin(absl::Span<double> values) = 0;
  // Every rank's bytes to every rank: result[r] is rank r's `mine`.
  // REQUIRES: mine.size() < 2 GiB.
  virtual std::vector<std::string> AllGather(std::string_view mine) = 0;
  // outgoing[r] goes to rank r; result[r] came from rank r.
  // REQUIRES: outgoing.size() == size(), each < 2 GiB.
  virtual std::vector<std::string> AllToAll(const std::vector<std::string>& outgoing) = 0;
  // Rank 0 gets every rank's bytes (result[r] from rank r); the others get {}.
  virtual std::vector<std::string> GatherToRoot(std::string_view mine) = 0;
  virtual void Barrier() = 0;
};

// One rank; collectives return their input.
class SingleProcessCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void AllReduceSum(absl::Span<double>) override {}
  void AllReduceSum(absl::Span<float>) override {}
  void AllReduceSum(absl::Span<uint64_t>) override {}
  void AllReduceMax(absl::Span<double>) override {}
  void AllReduceMin(absl::Span<double>) override {}
  std::vector<std::string> AllGather(std::string_view mine) override { return {std::string(mine)}; }
  std::vector<std::string> AllToAll(const std::vector<std::string>& out) override { return out; }
  std::vector<std::string> GatherToRoot(std::string_view mine) override {
    return {std::string(mine)};
  }
  void Barrier() override {}
};

// Every rank passes its own status; every rank gets the status of the lowest
// failing rank (its message prefixed "rank R: " when size() > 1), or OK.
absl::Status AgreeOnStatus(Communicator& comm, const absl::Status& local);

// Sum of one number over all ranks.
uint64_t SumOverRanks(Communicator& comm, uint64_t value);
double SumOverRanks(Communicator& comm, double value);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_DISTRIBUTED_COMMUNICATOR_H_
