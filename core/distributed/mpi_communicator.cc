#include "core/distributed/mpi_communicator.h"

#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <limits>

namespace graphsieve {
namespace {

constexpr size_t kChunk = size_t{1} << 26;  // elements per MPI call (counts are int)

template <typename T>
void AllReduceChunked(MPI_Comm comm, absl::Span<T> v, MPI_Datatype type, MPI_Op op) {
  for (size_t i = 0; i < v.size(); i += kChunk) {
    const int n = static_cast<int>(std::min(kChunk, v.size() - i));
    MPI_Allreduce(MPI_IN_PLACE, v.data() + i, n, type, op, comm);
  }
}

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator() {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiCommunicator() override { MPI_Comm_free(&comm_); }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void AllReduceSum(absl::Span<double> v) override {
    AllReduceChunked(comm_, v, MPI_DOUBLE, MPI_SUM);
  }
  void AllReduceSum(absl::Span<float> v) override {
    AllReduceChunked(comm_, v, MPI_FLOAT, MPI_SUM);
  }
  void AllReduceSum(absl::Span<uint64_t> v) override {
    AllReduceChunked(comm_, v, MPI_UINT64_T, MPI_SUM);
  }
  void AllReduceMax(absl::Span<double> v) override {
    AllReduceChunked(comm_, v, MPI_DOUBLE, MPI_MAX);
  }
  void AllReduceMin(absl::Span<double> v) override {
    AllReduceChunked(comm_, v, MPI_DOUBLE, MPI_MIN);
  }

  std::vector<std::string> AllGather(std::string_view mine) override {
    const int n = static_cast<int>(mine.size());
    std::vector<int> counts(size_), displs(size_);
    MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, comm_);
    std::string all = Receive(counts, &displs);
    MPI_Allgatherv(mine.data(), n, MPI_CHAR, all.data(), counts.data(), displs.data(), MPI_CHAR,
                   comm_);
    return Split(all, counts, displs);
  }

  std::vector<std::string> AllToAll(const std::vector<std::string>& out) override {
    std::vector<int> send_counts(size_), send_displs(size_), recv_counts(size_), recv_displs(size_);
    std::string send;
    for (int r = 0; r < size_; ++r) {
      send_counts[r] = static_cast<int>(out[r].size());
      send_displs[r] = static_cast<int>(send.size());
      send += out[r];
    }
    MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm_);
    std::string recv = Receive(recv_counts, &recv_displs);
    MPI_Alltoallv(send.data(), send_counts.data(), send_displs.data(), MPI_CHAR, recv.data(),
                  recv_counts.data(), recv_displs.data(), MPI_CHAR, comm_);
    return Split(recv, recv_counts, recv_displs);
  }

  std::vector<std::string> GatherToRoot(std::string_view mine) override {
    const int n = static_cast<int>(mine.size());
    std::vector<int> counts(size_), displs(size_);
    MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm_);
    std::string all;
    if (rank_ == 0) all = Receive(counts, &displs);
    MPI_Gatherv(mine.data(), n, MPI_CHAR, all.data(), counts.data(), displs.data(), MPI_CHAR, 0,
                comm_);
    if (rank_ != 0) return {};
    return Split(all, counts, displs);
  }

  void Barrier() override { MPI_Barrier(comm_); }

 private:
  // A buffer for the parts, with their displacements. The total must fit an int.
  static std::string Receive(const std::vector<int>& counts, std::vector<int>* displs) {
    int64_t total = 0;
    for (size_t r = 0; r < counts.size(); ++r) {
      (*displs)[r] = static_cast<int>(total);
      total += counts[r];
    }
    if (total > std::numeric_limits<int>::max()) {
      std::fprintf(stderr, "graphsieve: an MPI message of %lld bytes exceeds 2 GiB\n",
                   static_cast<long long>(total));
      MpiSession::Abort(70);
    }
    return std::string(static_cast<size_t>(total), '\0');
  }
  static std::vector<std::string> Split(const std::string& all, const std::vector<int>& counts,
                                        const std::vector<int>& displs) {
    std::vector<std::string> parts(counts.size());
    for (size_t r = 0; r < counts.size(); ++r) parts[r] = all.substr(displs[r], counts[r]);
    return parts;
  }

  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
};

}  // namespace

bool LaunchedByMpirun() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"}) {
    if (std::getenv(v) != nullptr) return true;
  }
  return false;
}

MpiSession::MpiSession(int* argc, char*** argv) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
}

MpiSession::~MpiSession() { MPI_Finalize(); }

std::unique_ptr<Communicator> MpiSession::World() const {
  return std::make_unique<MpiCommunicator>();
}

void MpiSession::Abort(int exit_code) {
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::abort();
}

}  // namespace graphsieve
