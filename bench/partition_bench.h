// Shared parts of graphsieve-bench-partitions (bench/partition_bench.cc, the
// one-server-vs-partitions table and pinned swap; bench/partition_campaign.cc,
// the swap campaign with independent polling): server processes on loopback,
// clients, and the processes' RSS and CPU from /proc.
//
// Not thread-safe unless stated; benchmark code.
#ifndef GRAPHSIEVE_BENCH_PARTITION_BENCH_H_
#define GRAPHSIEVE_BENCH_PARTITION_BENCH_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/sampling_rate_client.h"

namespace graphsieve {

struct Server {
  pid_t pid = -1;
  std::string target;
  std::string operator_target;  // PinVersion is accepted only there (docs/SERVER.md)
};

// Spawns `binary` --snapshot-root=root on 127.0.0.1 (free port, no admin
// port) with `flags` appended, and reads its "listening port=P" line.
absl::StatusOr<Server> Spawn(const std::string& binary, const std::string& root,
                             const std::vector<std::string>& flags);
// SIGTERM and wait.
void Stop(const Server& s);

// A client of `target` (comma-separated: routed) with a long first deadline
// (the first call waits for the version to load).
std::unique_ptr<SamplingRateClient> MakeClient(const std::string& target);

// VmRSS of a process in KiB (0 when unreadable); with `field` another line
// of /proc/<pid>/status ("RssAnon:", "RssFile:").
uint64_t RssKiB(pid_t pid, const char* field = "VmRSS:");
// User + system CPU seconds of a process so far (/proc/<pid>/stat).
double ProcessCpuSeconds(pid_t pid);
// User + system CPU seconds of this process so far.
double SelfCpuSeconds();

// The swap campaign (partition_campaign.cc): two or more part servers that
// each follow <root>/CURRENT on their own poll (independent phases), CURRENT
// flipped between two versions every swap_every_seconds, routed load until
// `requests` batches and `swaps` flips; prints errors, batches mixing
// versions, re-asks, per-part swap RSS. Returns the process exit code.
struct CampaignOptions {
  std::string server_binary;
  std::string root;  // partitioned root with >= 2 versions (CURRENT is rewritten)
  uint32_t parts = 2;
  size_t batch = 1024;
  int threads = 4;
  uint64_t requests = 1000000;  // routed GetRates batches, at least
  int swaps = 10;               // CURRENT flips, at least
  double swap_every_seconds = 3.0;
  double poll_seconds = 1.0;   // each server's --poll-interval-seconds
  double hold_seconds = 60.0;  // each server's --previous-version-hold-seconds (< 0: not passed)
};
int RunCampaign(const CampaignOptions& options, const std::vector<uint64_t>& users,
                const std::vector<uint64_t>& items);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_BENCH_PARTITION_BENCH_H_
