// Test fixture helpers: publish REAL snapshot versions (the snapshot
// engineer's writer + store, real RocksDB) with known rates, talk to a real
// server over loopback, and read the admin HTTP port.
#ifndef GRAPHSIEVE_TESTS_SERVER_TEST_SNAPSHOTS_H_
#define GRAPHSIEVE_TESTS_SERVER_TEST_SNAPSHOTS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/maec/pipeline.h"
#include "graphsieve/v1/sampling.grpc.pb.h"
#include "server/options.h"

namespace graphsieve::testing {

// A small synthetic snapshot: users 1..num_users, items 1001..1000+num_items;
// the pair (u, i) is stored when (u + i) % 3 == 0. Every stored rate encodes
// `generation` (rate = 0.05 + 0.001*generation + small per-pair term), so a
// response's rates tell which version produced them.
struct SyntheticSnapshot {
  int generation = 1;
  int num_users = 12;
  int num_items = 15;
  int sketch_dim = 4;
  uint64_t seed = 7;
  PairTable pairs;
  PipelineResult result;

  static SyntheticSnapshot Make(int generation, int num_users = 12, int num_items = 15);
  // The stored rate of (user, item) or -1 when the pair is not stored.
  float StoredRate(uint64_t user, uint64_t item) const;
  // Index of a node in result.nodes or -1.
  int UserNode(uint64_t user) const;
  int ItemNode(uint64_t item) const;

 private:
  std::map<std::pair<uint64_t, uint64_t>, float> stored_;
};

// Writes `snapshot` under `root` with the real writer and publishes it
// (CURRENT := it) unless `publish` is false. `corrupt` flips bytes in one of
// the version's db files before publishing. Returns the version id.
absl::StatusOr<std::string> PublishSnapshot(const std::string& root, const SyntheticSnapshot& s,
                                            bool corrupt = false, bool publish = true);

// Points CURRENT at an existing version.
absl::Status SetCurrent(const std::string& root, const std::string& version);

// GET http://127.0.0.1:port/path through civetweb's client (a 5 s timeout for the
// response); returns (status code, body).
absl::StatusOr<std::pair<int, std::string>> HttpGet(int port, const std::string& path);

// grpc.health.v1.Health/Check through a generic stub: "SERVING",
// "NOT_SERVING", "SERVICE_UNKNOWN" or the RPC error.
std::string HealthCheck(const std::shared_ptr<grpc::Channel>& channel, const std::string& service);

std::unique_ptr<v1::SamplingRateService::Stub> Connect(int port);

// `o` for a server on 127.0.0.1 serving `root`: a free gRPC port, the admin
// port off (-1; admin_host loopback), polls by hand (interval -1). Tests set
// what they need differently afterwards.
inline ServerOptions LoopbackOptions(const std::string& root, ServerOptions o = {}) {
  o.snapshot_root = root;
  o.host = "127.0.0.1";
  o.port = 0;
  o.admin_host = "127.0.0.1";
  o.admin_port = -1;
  o.poll_interval_seconds = -1;
  return o;
}

}  // namespace graphsieve::testing

#endif  // GRAPHSIEVE_TESTS_SERVER_TEST_SNAPSHOTS_H_
