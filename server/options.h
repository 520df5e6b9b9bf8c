// Options of graphsieve-server (one plain struct, filled from flags by main()).
//
// Thread-safety: a plain value; copy it freely.
#ifndef GRAPHSIEVE_SERVER_OPTIONS_H_
#define GRAPHSIEVE_SERVER_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/serving/default_policy.h"
#include "core/snapshot/snapshot_reader.h"

namespace graphsieve {

struct ServerOptions {
  // Directory holding CURRENT and one sub-directory per snapshot version.
  std::string snapshot_root;
  // Address to bind the gRPC server to; port 0 picks a free port.
  std::string host = "0.0.0.0";
  int port = 50051;
  // Admin HTTP (/metrics, /healthz, /readyz, /status.json, dashboard "/"), read-only.
  // -1 disables it; 0 picks a free port. Loopback unless opened on purpose.
  int admin_port = 8080;
  std::string admin_host = "127.0.0.1";
  // Where the mutating RPC (PinVersion) is accepted: a second gRPC listener that
  // only the machine's (or pod's) own users reach. The data port refuses it with
  // PERMISSION_DENIED. "" = the default unix socket OperatorAddress() names;
  // "unix:/path"; a loopback "127.0.0.1:P" / "localhost:P" / "[::1]:P" (P = 0
  // picks one); "off" = no operator listener (pins only through --pin-version).
  std::string operator_address;
  // How often the refresher reads <root>/CURRENT. 0 = once at start, < 0 = never
  // (tests call PollOnce by hand).
  double poll_interval_seconds = 10.0;
  // With an interval > 0: also watch <root> with inotify and poll at once when
  // CURRENT is replaced; the interval is then the fallback (NFS, no inotify).
  bool watch_current = true;
  // After a swap, how long the version served before stays open for requests
  // that name it (GetSamplingRateRequest.snapshot_version; routing clients
  // during a swap, docs/CLIENTS.md "Partitioned deployments"). Ends early at
  // the next swap; 0 = not held. Only mapped-index (or RocksDB) versions are held.
  double previous_version_hold_seconds = 60.0;
  // Largest batch GetSamplingRate accepts; the gRPC receive limit is sized to fit.
  int max_batch_pairs = 100000;
  // Pairs handled between two cancellation / deadline checks of one request.
  int chunk_pairs = 4096;
  // Helper threads that score blocks of a call while it is the only one being
  // scored (core/serving/block_pool.h); 0 = every call on its own thread.
  int lookup_helpers = 1;
  DefaultPolicy default_policy;  // core/serving/default_policy.h
  // Serve this version and do not follow CURRENT (empty = follow CURRENT).
  std::string pin_version;
  // Versions the refresher must never adopt (e.g. rolled back before a restart).
  std::vector<std::string> reject_versions;
  // SIGTERM/SIGINT: how long in-flight calls get to finish before they are cancelled.
  double drain_grace_seconds = 10.0;
  // SIGTERM/SIGINT: how long to keep serving with readiness NOT_SERVING before
  // refusing new calls, so load balancers can take the replica out first.
  double drain_notice_seconds = 0.0;
  // RocksDB block cache per loaded snapshot version.
  size_t block_cache_bytes = size_t{256} << 20;
  // Verify checksums when a version is loaded (off only for experiments).
  bool verify_checksums = true;
  // Read every table of a new version once before it serves (lookup kRocksDb;
  // kMemory reads every table anyway to build its index).
  bool warm = true;
  // Where pair and node lookups are answered from (core/snapshot/snapshot_reader.h):
  // kMemory builds an index of ~10 bytes per pair when a version loads.
  LookupMode lookup = LookupMode::kMemory;
  // --partition: the part of partitioned versions this server serves
  // (docs/SNAPSHOT.md "Partitioned versions"); -1 = whole versions only.
  int partition = -1;
  // kMemory: map a version's index file (false: build the index in memory).
  bool use_index_file = true;
  // The mapped index file with 2 MiB pages where the kernel can
  // (MapFileOptions::huge_pages).
  bool index_huge_pages = true;
  // Optional TLS: PEM files. Both cert and key, or neither.
  std::string tls_cert_path;
  std::string tls_key_path;
  // Optional mTLS: PEM of the CA that client certificates must chain to (needs TLS).
  std::string tls_client_ca_path;
  // Refresh events kept for GetStatus and /status.json.
  int history_size = 50;
  // gRPC callback threads are managed by gRPC; this caps the synchronous
  // admin-HTTP worker threads.
  int admin_threads = 2;
  // Names the broken constraint ("--port must be in [0, 65535], got 70000").
  absl::Status Validate() const;
};

// The operator listener's gRPC address for `flag` (ServerOptions::operator_address)
// on a server whose data port is `grpc_port`: the flag itself, or for "" the
// default "unix:/tmp/graphsieve-operator-<grpc_port>.sock" (one per server on a
// machine; `graphsieve pin` uses the one of port 50051 when --server is not
// given). "" for "off".
std::string OperatorAddress(const std::string& flag, int grpc_port);

// "" when `policy` answers DEFAULT pairs as configured on a snapshot with
// `model`; otherwise why it does not, as graphsieve-server logs once per
// loaded version: positive-rate on a snapshot without the per-node fit of a
// side (written before snapshot format 3) answers that side with node-mean
// (core/serving/default_policy.h; docs/SERVER.md "Default policy").
std::string DefaultPolicyFallbackNote(const DefaultPolicy& policy, const UnseenModel& model);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_SERVER_OPTIONS_H_
