// graphsieve-server's main (server_main.h): serves per-(user, item) sampling
// rates from the snapshot that <snapshot-root>/CURRENT names, refreshing in
// the background. Flags are parsed into ServerOptions (options.h); see
// docs/SERVER.md.
#include "server/server_main.h"

#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "core/cli/flags.h"
#include "server/allocator.h"
#include "server/log.h"
#include "server/server.h"
#include "server/version.h"

ABSL_FLAG(std::string, snapshot_root, "",
          "Required. Snapshot directory written by graphsieve-build: <root>/CURRENT names the "
          "version to serve, <root>/<version>/ holds it.");
ABSL_FLAG(std::string, host, "0.0.0.0", "Address the gRPC server binds to.");
ABSL_FLAG(int, port, 50051, "gRPC port; 0 picks a free port (printed on stdout).");
ABSL_FLAG(int, admin_port, 8080,
          "Admin HTTP port: /metrics, /healthz, /readyz, /status.json, dashboard at /. "
          "0 picks a free port, -1 turns it off.");
ABSL_FLAG(std::string, admin_host, "127.0.0.1",
          "Address the admin HTTP server binds to. Loopback by default; 0.0.0.0 opens it (its "
          "pages are read-only: metrics, health, status, dashboard).");
ABSL_FLAG(std::string, operator_address, "",
          "Where PinVersion (pin, rollback, unpin) is accepted; the data port refuses it with "
          "PERMISSION_DENIED. Empty = unix:/tmp/graphsieve-operator-<port>.sock; or "
          "unix:/PATH, a loopback 127.0.0.1:P (0 picks one), or 'off'.");
ABSL_FLAG(double, poll_interval_seconds, 10.0,
          "How often the refresher reads <root>/CURRENT and swaps in a new version. 0 = once at "
          "start, negative = never (serve only --pin-version, or a version pinned via RPC).");
ABSL_FLAG(bool, watch_current, true,
          "With --poll_interval_seconds > 0: also watch the snapshot root with inotify and "
          "poll at once when CURRENT is replaced, so a published version is adopted within its "
          "load time; the periodic poll stays the fallback (filesystems whose changes inotify "
          "does not see, such as NFS). false = poll on the interval only.");
ABSL_FLAG(double, previous_version_hold_seconds, 60.0,
          "After a swap, keep the version served before open this long (or until the next "
          "swap) for GetSamplingRate calls that name it in snapshot_version: a routing client "
          "then gets one version per batch while partitions swap at different times. Only "
          "versions mapped from their index file (or served from RocksDB) are held; retention "
          "keeps a held version (<root>/holds/). 0 = hold nothing.");
ABSL_FLAG(int, max_batch_pairs, 100000,
          "Largest GetSamplingRate batch; larger ones get INVALID_ARGUMENT. The gRPC receive "
          "limit is sized to fit (32 bytes per pair + 1 MiB).");
ABSL_FLAG(int, lookup_helpers, 1,
          "Helper threads that score a GetSamplingRate batch alongside the call's own thread "
          "while it is the only call being scored (blocks of 128 pairs; the answers are the same). "
          "One call in flight then uses two cores; with more calls in flight each runs on its "
          "own thread. 0 = off. In [0, 64].");
ABSL_FLAG(std::string, default_policy, "node-mean",
          "Rate of pairs with an unknown user or item (RATE_SOURCE_DEFAULT): 'node-mean' (the "
          "known node's mean rate over its negatives, else the snapshot's alpha), 'alpha', 'model' "
          "(the snapshot's rate rule, the unknown node taken as a node with no pairs), "
          "'positive-rate' (the snapshot's rule applied to the known node's smoothed positive "
          "rate, fitted to alpha at build time; node-mean for snapshots before format 3), or a "
          "fixed rate in (0, 1] such as 0.25.");
ABSL_FLAG(std::string, pin_version, "",
          "Serve this version and do not follow CURRENT (operators can unpin with the "
          "PinVersion RPC).");
ABSL_FLAG(std::string, reject_versions, "",
          "Comma-separated versions the refresher must never adopt (e.g. rolled back before a "
          "restart).");
ABSL_FLAG(double, drain_grace_seconds, 10.0,
          "On SIGTERM/SIGINT: readiness goes NOT_SERVING, new calls are refused, and in-flight "
          "calls get this long to finish before they are cancelled; then exit 0.");
ABSL_FLAG(double, drain_notice_seconds, 0.0,
          "On SIGTERM/SIGINT: keep answering this long with readiness NOT_SERVING before new "
          "calls are refused (time for load balancers to take the replica out).");
ABSL_FLAG(int64_t, block_cache_mb, 256, "RocksDB block cache per loaded snapshot version, MiB.");
ABSL_FLAG(bool, verify_checksums, true, "Verify manifest and RocksDB checksums on load.");
ABSL_FLAG(bool, warm, true,
          "With --lookup=rocksdb: read every table of a new version once before it serves.");
ABSL_FLAG(int32_t, partition, -1,
          "Serve part I (0-based) of partitioned snapshot versions (graphsieve-build "
          "--partitions N); users of other parts get FAILED_PRECONDITION. -1: whole versions.");
ABSL_FLAG(bool, use_index_file, true,
          "With --lookup=memory: map a version's index file (index.gsi); false builds the "
          "index in memory by a scan of RocksDB (the pre-index-file behaviour, for comparison).");
ABSL_FLAG(bool, index_huge_pages, true,
          "With the mapped index file: drop its small page-cache pages, map it with "
          "MADV_HUGEPAGE and read it once at load, so lookups find it in 2 MiB pages (fewer "
          "TLB misses; about a quarter faster on stored pairs, docs/SERVER.md). A hint: kernels "
          "or file systems that cannot keep 4 KiB pages. false: map it as it is cached.");
ABSL_FLAG(std::string, lookup, "memory",
          "Where pair rates and node data are read from: 'memory' (an index built from the "
          "snapshot when a version loads, ~10 bytes of RAM per pair, the fast path) or "
          "'rocksdb' (point reads per batch: RAM bounded by --block-cache-mb, 10-50x slower).");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM certificate chain: serve gRPC over TLS (with --tls-key).");
ABSL_FLAG(std::string, tls_key, "", "PEM private key for --tls-cert.");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM CA bundle: require and verify client certificates (mTLS). Needs --tls-cert.");
ABSL_FLAG(int, history_size, 50, "Refresh events kept for GetStatus and the dashboard.");
ABSL_FLAG(int, admin_threads, 2, "Worker threads of the admin HTTP server.");
namespace {

int Fail(const std::string& message, int code) {
  std::fprintf(stderr, "graphsieve-server: %s\n", message.c_str());
  return code;
}

}  // namespace

int graphsieve::ServerMain(int argc, char** argv, const ServerFactory& create) {
  // Fixed malloc thresholds: without them the anonymous RSS grows with every
  // version swap (server/allocator.h, docs/SERVER.md "Memory across many swaps").
  std::string allocator_note;
  if (absl::Status s = graphsieve::ConfigureServerAllocator({}, &allocator_note); !s.ok()) {
    return Fail(absl::StrCat("malloc settings: ", s.message()), 1);
  }
  // Debian's Abseil is built with Mutex deadlock detection on, which keeps a
  // global lock-order graph updated on every Lock() (gRPC's locks included).
  // Lock ordering is checked in the tests; the server does not pay for it.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  graphsieve::ConfigureFlagUsage(
      "Serves MA-EC sampling rates over gRPC (graphsieve.v1.SamplingRateService).\n"
      "  graphsieve-server --snapshot-root DIR [--port 50051] [--admin-port 8080]\n"
      "                    [--poll-interval-seconds 10] [--default-policy node-mean] ...\n"
      "Flag names may use '-' or '_'. On start it prints 'graphsieve-server listening "
      "port=P admin_port=Q operator=ADDRESS' on stdout. SIGTERM/SIGINT drain and exit 0. See "
      "docs/SERVER.md.",
      "server/server_main.cc", graphsieve::kServerVersion);
  std::vector<std::string> args = graphsieve::NormaliseFlagNames(argc, argv);
  std::vector<char*> arg_ptrs = graphsieve::ArgvPointers(args);
  // An unknown or ill-typed flag is a usage error (2); --help and --version exit 0.
  graphsieve::ParsedFlags parsed = graphsieve::ParseFlags(arg_ptrs);
  if (parsed.exit_now) return 0;
  if (!parsed.status.ok()) return Fail(std::string(parsed.status.message()), 2);
  const std::vector<char*>& rest = parsed.positional;
  if (rest.size() > 1) {
    return Fail(absl::StrCat("unexpected argument '", rest[1], "' (all options are --flags)"), 2);
  }

  graphsieve::ServerOptions o;
  o.snapshot_root = absl::GetFlag(FLAGS_snapshot_root);
  o.host = absl::GetFlag(FLAGS_host);
  o.port = absl::GetFlag(FLAGS_port);
  o.admin_port = absl::GetFlag(FLAGS_admin_port);
  o.admin_host = absl::GetFlag(FLAGS_admin_host);
  o.operator_address = absl::GetFlag(FLAGS_operator_address);
  o.poll_interval_seconds = absl::GetFlag(FLAGS_poll_interval_seconds);
  o.watch_current = absl::GetFlag(FLAGS_watch_current);
  o.previous_version_hold_seconds = absl::GetFlag(FLAGS_previous_version_hold_seconds);
  o.max_batch_pairs = absl::GetFlag(FLAGS_max_batch_pairs);
  o.lookup_helpers = absl::GetFlag(FLAGS_lookup_helpers);
  absl::StatusOr<graphsieve::DefaultPolicy> policy =
      graphsieve::DefaultPolicy::Parse(absl::GetFlag(FLAGS_default_policy));
  if (!policy.ok()) return Fail(std::string(policy.status().message()), 2);
  o.default_policy = *policy;
  o.pin_version = absl::GetFlag(FLAGS_pin_version);
  for (absl::string_view v :
       absl::StrSplit(absl::GetFlag(FLAGS_reject_versions), ',', absl::SkipWhitespace())) {
    o.reject_versions.emplace_back(v);
  }
  o.drain_grace_seconds = absl::GetFlag(FLAGS_drain_grace_seconds);
  o.drain_notice_seconds = absl::GetFlag(FLAGS_drain_notice_seconds);
  const int64_t cache_mb = absl::GetFlag(FLAGS_block_cache_mb);
  if (cache_mb < 0 || cache_mb > (int64_t{1} << 30)) {  // bytes = MiB << 20 must fit
    return Fail(absl::StrCat("--block-cache-mb must be in [0, 1073741824], got ", cache_mb), 2);
  }
  o.block_cache_bytes = static_cast<size_t>(cache_mb) << 20;
  o.verify_checksums = absl::GetFlag(FLAGS_verify_checksums);
  o.warm = absl::GetFlag(FLAGS_warm);
  absl::StatusOr<graphsieve::LookupMode> lookup =
      graphsieve::ParseLookupMode(absl::GetFlag(FLAGS_lookup));
  if (!lookup.ok()) return Fail(absl::StrCat("--lookup: ", lookup.status().message()), 2);
  o.lookup = *lookup;
  o.partition = absl::GetFlag(FLAGS_partition);
  o.use_index_file = absl::GetFlag(FLAGS_use_index_file);
  o.index_huge_pages = absl::GetFlag(FLAGS_index_huge_pages);
  if (o.partition < -1) return Fail("--partition must be >= 0 (or -1: whole versions)", 2);
  o.tls_cert_path = absl::GetFlag(FLAGS_tls_cert);
  o.tls_key_path = absl::GetFlag(FLAGS_tls_key);
  o.tls_client_ca_path = absl::GetFlag(FLAGS_tls_client_ca);
  o.history_size = absl::GetFlag(FLAGS_history_size);
  o.admin_threads = absl::GetFlag(FLAGS_admin_threads);
  absl::Status valid = o.Validate();
  if (!valid.ok()) return Fail(std::string(valid.message()), 2);
  // A root that is not there is a typo or a missing mount, not a wait for the
  // first build: an empty directory is (the refresher adopts CURRENT once it appears).
  {
    std::error_code ec;
    const std::filesystem::file_status root = std::filesystem::status(o.snapshot_root, ec);
    if (!std::filesystem::exists(root)) {
      return Fail(absl::StrCat("--snapshot-root '", o.snapshot_root,
                               "' does not exist: give the directory graphsieve-build publishes "
                               "to, or create it empty to wait for the first build"),
                  2);
    }
    if (!std::filesystem::is_directory(root)) {
      return Fail(absl::StrCat("--snapshot-root '", o.snapshot_root, "' is not a directory"), 2);
    }
  }

  // Signals are taken by sigwait below; block them before any thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  graphsieve::ServerLog(allocator_note);
  absl::StatusOr<std::unique_ptr<graphsieve::GraphsieveServer>> server = create(o);
  if (!server.ok()) return Fail(server.status().ToString(), 1);
  const std::string& op = (*server)->operator_address();
  std::printf("graphsieve-server listening port=%d admin_port=%d operator=%s\n", (*server)->port(),
              (*server)->admin_port(), op.empty() ? "off" : op.c_str());
  std::fflush(stdout);

  int sig = 0;
  sigwait(&signals, &sig);
  std::fprintf(stderr, "graphsieve-server: got %s, draining\n", strsignal(sig));
  (*server)->Shutdown();
  server->reset();
  return 0;
}
