#include "core/distributed/communicator.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace graphsieve {

absl::Status AgreeOnStatus(Communicator& comm, const absl::Status& local) {
  if (comm.size() == 1) return local;
  // One byte "is it ok" per rank first, so the message travels only on failure.
  std::vector<double> failed(comm.size(), 0.0);
  failed[comm.rank()] = local.ok() ? 0.0 : 1.0;
  comm.AllReduceSum(absl::MakeSpan(failed));
  int first = -1;
  for (int r = 0; r < comm.size() && first < 0; ++r) {
    if (failed[r] > 0) first = r;
  }
  if (first < 0) return absl::OkStatus();
  std::string mine;
  if (comm.rank() == first) {
    const int code = static_cast<int>(local.code());
    mine.assign(reinterpret_cast<const char*>(&code), sizeof code);
    mine.append(local.message().data(), local.message().size());
  }
  const std::vector<std::string> all = comm.AllGather(mine);
  const std::string& msg = all[first];
  int code = 0;
  std::memcpy(&code, msg.data(), sizeof code);
  return absl::Status(static_cast<absl::StatusCode>(code),
                      absl::StrCat("rank ", first, ": ", msg.substr(sizeof code)));
}

uint64_t SumOverRanks(Communicator& comm, uint64_t value) {
  comm.AllReduceSum(absl::MakeSpan(&value, 1));
  return value;
}

double SumOverRanks(Communicator& comm, double value) {
  comm.AllReduceSum(absl::MakeSpan(&value, 1));
  return value;
}

}  // namespace graphsieve
