// graphsieve-bench-server: pairs/s and p50/p99 latency of GetSamplingRate at
// several batch sizes against a real graphsieve-server process on loopback,
// and in the same run the same lookups as raw in-process
// SnapshotReader::LookupPairs through RocksDB and through the in-memory
// index (the baselines); the protocol's ceiling: a trivial callback service
// on the same proto (this binary with --trivial_service, its own process)
// that answers every pair with a constant and looks nothing up, measured
// in turn with the server on EXACT, INFERRED and mixed batches; server RSS
// at steady state and during a swap (PinVersion to another version on disk).
//
//   graphsieve-bench-server --snapshot_root DIR [--seconds 3] [--client_threads 4]
//
// Prints figures; asserts nothing. The load generator shares the machine.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "bench/load_loop.h"
#include "bench/trivial_service.h"
#include "civetweb.h"
#include "core/serving/batch_scorer.h"
#include "core/snapshot/snapshot_reader.h"
#include "core/snapshot/snapshot_store.h"
#include "core/snapshot/version_opener.h"
#include "graphsieve/v1/sampling.grpc.pb.h"
#include "grpcpp/create_channel.h"

ABSL_FLAG(std::string, snapshot_root, "", "Required. Snapshot root (CURRENT names the version).");
ABSL_FLAG(std::string, server_binary, GRAPHSIEVE_SERVER_BINARY, "graphsieve-server to spawn.");
ABSL_FLAG(std::string, batches, "1,64,1024,8192", "Comma-separated batch sizes.");
ABSL_FLAG(double, seconds, 3.0, "Measuring time per point.");
ABSL_FLAG(int, client_threads, 4, "Concurrent client threads for the throughput runs.");
ABSL_FLAG(std::string, server_lookup, "memory",
          "The server's --lookup: memory (default) | rocksdb.");
ABSL_FLAG(bool, raw, true, "Also measure raw in-process lookups (the baselines).");
ABSL_FLAG(int, pool_pairs, 1 << 20, "Stored pairs sampled as the query pool.");
ABSL_FLAG(bool, raw_huge_pages, false,
          "Raw lookups also on the index file mapped without huge pages (4 KiB pages, "
          "SnapshotReaderOptions::index_huge_pages = false) before the default mapping.");
ABSL_FLAG(bool, server_index_huge_pages, true,
          "The server's --index_huge_pages: map index.gsi with 2 MiB pages where the kernel can.");
ABSL_FLAG(int, server_lookup_helpers, -1,
          "The server's --lookup_helpers (threads that score a lone call's blocks beside it); "
          "-1 = the server's default (servers before the flag do not know it).");
ABSL_FLAG(bool, server_use_index_file, true,
          "The server's --use_index_file: map index.gsi (true) or build the index in memory.");
ABSL_FLAG(bool, ceiling, true,
          "Measure the share of the protocol's ceiling: graphsieve-server against the trivial "
          "service (same proto, a constant per pair, no lookup), alternating, on EXACT, INFERRED "
          "and mixed batches of --ceiling_batch pairs at 1 and --client_threads in flight.");
ABSL_FLAG(bool, throughput, true,
          "Measure the gRPC server's pairs/s and latency at every --batches size and the mixed "
          "pool's sources (false: go from the server's start to the ceiling comparison).");
ABSL_FLAG(int, ceiling_batch, 1024, "Batch size of the ceiling comparison.");
ABSL_FLAG(std::string, ceiling_pools, "EXACT,INFERRED,mixed",
          "Comma-separated pools of the ceiling comparison (of EXACT, INFERRED, mixed), in order.");
ABSL_FLAG(int, ceiling_rounds, 3,
          "Alternations per ceiling point (each side measured --seconds / rounds per round).");
ABSL_FLAG(bool, trivial_service, false,
          "Internal: serve the trivial service on 127.0.0.1 (an ephemeral port, printed as "
          "'port=N') until SIGTERM, and nothing else.");
ABSL_FLAG(std::string, pin_cpus, "",
          "CLIENT:SERVER, two CPU lists (e.g. 0:1 or 0-1:2-3): the bench's client threads run "
          "on the first, the spawned server and trivial service on the second, so neither side "
          "shares a core with the other (a stand-in for a client on another host). Empty = no "
          "pinning: both sides share every core.");
ABSL_FLAG(bool, evict_page_cache, false,
          "Drop the version's files from the page cache (posix_fadvise DONTNEED, file by file; "
          "no root needed) just before the server loads it and before the swap, for cold-cache "
          "load figures. Prints the bytes resident before and after.");
ABSL_FLAG(std::string, swap_version, "",
          "Version to swap to for the RSS-during-swap figure (default: another version on disk; "
          "none = skip).");

extern char** environ;

namespace graphsieve {
namespace {

using Point = bench::LoadPoint;
using bench::RunLoad;

// The FilePmdMapped / AnonHugePages lines of a process ("self" or a pid), as
// printed by the kernel.
std::string HugePageLines(const std::string& process = "self") {
  std::ifstream in(absl::StrCat("/proc/", process, "/smaps_rollup"));
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.rfind("FilePmdMapped:", 0) == 0 || line.rfind("AnonHugePages:", 0) == 0) {
      std::vector<std::string> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
      absl::StrAppend(&out, out.empty() ? "" : ", ", line.substr(0, line.find(':')), " ",
                      f.size() > 1 ? f[1] : "?", " kB");
    }
  }
  return out.empty() ? "unreadable" : out;
}

// One field of /proc/PID/status ("VmRSS:", "Cpus_allowed_list:"), its value
// trimmed; empty when the file or the field is missing.
std::string ProcStatusField(pid_t pid, absl::string_view field) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view rest = line;
    if (absl::ConsumePrefix(&rest, field)) return std::string(absl::StripAsciiWhitespace(rest));
  }
  return "";
}

// The CPUs a process may run on, as the kernel lists them ("?" if unreadable).
std::string CpusAllowed(pid_t pid) {
  const std::string cpus = ProcStatusField(pid, "Cpus_allowed_list:");
  return cpus.empty() ? "?" : cpus;
}

// A memory field of /proc/PID/status in kB ("VmRSS:", "VmHWM:"), or -1.
long RssKb(pid_t pid, const char* field) {
  const std::string text = ProcStatusField(pid, field);
  absl::string_view value = text;
  long kb = 0;
  if (!absl::ConsumeSuffix(&value, " kB") || !absl::SimpleAtoi(value, &kb)) return -1;
  return kb;
}

struct Pool {
  std::vector<uint64_t> users, items;

  // Fills `req` with the n-th window of `batch` pairs (wrapping around).
  void Fill(uint64_t n, size_t batch, v1::GetSamplingRateRequest* req) const {
    const size_t off = (n * batch) % (users.size() - batch);
    req->mutable_user_ids()->Resize(static_cast<int>(batch), 0);
    req->mutable_item_ids()->Resize(static_cast<int>(batch), 0);
    std::copy_n(users.data() + off, batch, req->mutable_user_ids()->mutable_data());
    std::copy_n(items.data() + off, batch, req->mutable_item_ids()->mutable_data());
  }
};

// Starts `args` (args[0] the binary) with its standard output on a pipe and
// reads the first line the child prints (a server's "port=N ..." line).
// With `stderr_fd`, the child's standard error goes to a second pipe whose
// read end is returned there (the caller reads and closes it). Returns the
// pid, or -1 when it cannot start.
// Bytes of `path`'s pages in the page cache (mincore over a read-only map).
uint64_t ResidentBytes(int fd, uint64_t size) {
  if (size == 0) return 0;
  void* map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) return 0;
  const long page = sysconf(_SC_PAGESIZE);
  std::vector<unsigned char> vec((size + page - 1) / page);
  uint64_t resident = 0;
  if (mincore(map, size, vec.data()) == 0) {
    for (unsigned char v : vec) resident += (v & 1) ? page : 0;
  }
  munmap(map, size);
  return std::min<uint64_t>(resident, size);
}

// Evicts every file under `dir` from the page cache (clean pages: the
// version's files are never written after publish) and prints the resident
// bytes before and after, so a cold figure shows it really was cold.
void EvictPageCache(const std::string& dir, const char* what) {
  uint64_t files = 0, bytes = 0, before = 0, after = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir, ec)) {
    if (!e.is_regular_file()) continue;
    const int fd = open(e.path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st;
    if (fstat(fd, &st) == 0) {
      const uint64_t size = static_cast<uint64_t>(st.st_size);
      before += ResidentBytes(fd, size);
      posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
      after += ResidentBytes(fd, size);
      bytes += size;
      ++files;
    }
    close(fd);
  }
  std::printf(
      "page cache of %s (%s): %llu files, %.1f MiB; resident before eviction %.1f MiB, after "
      "%.1f MiB\n",
      what, dir.c_str(), static_cast<unsigned long long>(files), bytes / 1048576.0,
      before / 1048576.0, after / 1048576.0);
}

pid_t SpawnAndReadLine(std::vector<std::string> args, std::string* line, int* stderr_fd = nullptr) {
  int out[2], err[2] = {-1, -1};
  if (pipe(out) != 0) return -1;
  if (stderr_fd != nullptr && pipe(err) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  if (stderr_fd != nullptr) {
    posix_spawn_file_actions_adddup2(&actions, err[1], 2);
    posix_spawn_file_actions_addclose(&actions, err[0]);
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0].c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (stderr_fd != nullptr) {
    close(err[1]);
    *stderr_fd = err[0];
  }
  if (rc != 0) {
    close(out[0]);
    std::fprintf(stderr, "cannot start %s\n", args[0].c_str());
    return -1;
  }
  char c;
  while (line->size() < 512 && read(out[0], &c, 1) == 1 && c != '\n') line->push_back(c);
  close(out[0]);
  return pid;
}

// A CPU list as taskset writes it ("0", "0,2", "0-3"); false when malformed
// or naming a CPU this process may not run on.
bool ParseCpuList(absl::string_view text, cpu_set_t* set) {
  CPU_ZERO(set);
  cpu_set_t allowed;
  if (text.empty() || sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return false;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    std::pair<absl::string_view, absl::string_view> range = absl::StrSplit(part, '-');
    int lo = 0, hi = 0;
    if (!absl::SimpleAtoi(range.first, &lo)) return false;
    hi = lo;
    if (!range.second.empty() && !absl::SimpleAtoi(range.second, &hi)) return false;
    if (lo < 0 || hi < lo || hi >= CPU_SETSIZE) return false;
    for (int c = lo; c <= hi; ++c) {
      if (!CPU_ISSET(c, &allowed)) return false;
      CPU_SET(c, set);
    }
  }
  return true;
}

// Moves every thread of this process (gRPC's included) onto `set`.
void PinAllThreads(const cpu_set_t& set) {
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    int tid = 0;
    if (absl::SimpleAtoi(task.path().filename().string(), &tid)) {
      sched_setaffinity(tid, sizeof(set), &set);
    }
  }
}

// Spawns as SpawnAndReadLine does, the child on `child_cpus` when given (it
// inherits the spawning thread's CPUs), this process's threads on
// `own_cpus` after.
pid_t SpawnPinned(std::vector<std::string> args, std::string* line, int* stderr_fd,
                  const cpu_set_t* child_cpus, const cpu_set_t* own_cpus) {
  if (child_cpus != nullptr) sched_setaffinity(0, sizeof(*child_cpus), child_cpus);
  const pid_t pid = SpawnAndReadLine(std::move(args), line, stderr_fd);
  if (own_cpus != nullptr) PinAllThreads(*own_cpus);
  return pid;
}

// Copies a child's standard error to ours line by line until it closes, and
// notes when the server says it profiled a version (server/version_profiler.h:
// a full scan of the version on a background thread after it starts serving,
// which takes a core for a while; the load waits for it to end).
class StderrWatcher {
 public:
  explicit StderrWatcher(int fd) : fd_(fd), thread_([this] { Run(); }) {}
  ~StderrWatcher() {
    thread_.join();
    close(fd_);
  }
  // Waits until a "profiled " line or `timeout`; false on timeout.
  bool WaitForProfile(absl::Duration timeout) {
    return profiled_.WaitForNotificationWithTimeout(timeout);
  }

 private:
  void Run() {
    std::string line;
    char c;
    while (read(fd_, &c, 1) == 1) {
      line.push_back(c);
      if (c != '\n') continue;
      std::fputs(line.c_str(), stderr);
      if (line.find(" profiled ") != std::string::npos && !profiled_.HasBeenNotified()) {
        profiled_.Notify();
      }
      line.clear();
    }
  }

  const int fd_;
  absl::Notification profiled_;
  std::thread thread_;
};

int PortOf(const std::string& line) {
  int port = 0;
  for (absl::string_view part : absl::StrSplit(line, ' ')) {
    if (absl::ConsumePrefix(&part, "port=")) absl::SimpleAtoi(part, &port);
  }
  return port;
}

// One client channel (one TCP connection) per worker.
std::unique_ptr<v1::SamplingRateService::Stub> MakeStub(int port, int id) {
  grpc::ChannelArguments a;
  a.SetInt("graphsieve.bench.channel", id);  // one TCP connection per client thread
  a.SetMaxReceiveMessageSize(64 << 20);
  return v1::SamplingRateService::NewStub(grpc::CreateCustomChannel(
      absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials(), a));
}

using Stubs = std::vector<std::unique_ptr<v1::SamplingRateService::Stub>>;

// Closed-loop GetSamplingRate calls of `batch` pairs from `pool` on the first
// `in_flight` stubs.
Point RunCalls(const Stubs& stubs, int in_flight, double seconds, size_t batch, const Pool& pool) {
  std::vector<v1::GetSamplingRateRequest> reqs(static_cast<size_t>(in_flight));
  return RunLoad(in_flight, seconds, batch, [&](int w, uint64_t n) {
    v1::GetSamplingRateRequest& req = reqs[w];
    pool.Fill(n, batch, &req);
    v1::GetSamplingRateResponse resp;
    grpc::ClientContext ctx;
    return stubs[w]->GetSamplingRate(&ctx, req, &resp).ok() &&
           resp.rates_size() == static_cast<int>(batch);
  });
}

// The server's time in its GetSamplingRate handler so far: the sum and count
// of graphsieve_request_latency_seconds from its /metrics (admin port), read
// with civetweb's client (5 s for the answer). ok false when the page or the lines are
// missing.
struct HandlerTotals {
  double seconds = 0, calls = 0;
  bool ok = false;
};

HandlerTotals ReadHandlerTotals(int admin_port) {
  HandlerTotals t;
  if (admin_port <= 0) return t;
  char error[256] = "";
  mg_connection* conn =
      mg_connect_client("127.0.0.1", admin_port, /*use_ssl=*/0, error, sizeof(error));
  if (conn == nullptr) return t;
  mg_printf(conn, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  // A server that stops answering costs this round its handler times, not the run.
  if (mg_get_response(conn, error, sizeof(error), /*timeout ms=*/5000) < 0 ||
      mg_get_response_info(conn)->status_code != 200) {
    mg_close_connection(conn);
    return t;
  }
  std::string body;
  char buf[16384];
  for (int n; (n = mg_read(conn, buf, sizeof(buf))) > 0;) body.append(buf, static_cast<size_t>(n));
  mg_close_connection(conn);
  bool sum = false, count = false;
  for (absl::string_view line : absl::StrSplit(body, '\n')) {
    if (absl::ConsumePrefix(&line, "graphsieve_request_latency_seconds_sum ")) {
      sum = absl::SimpleAtod(line, &t.seconds);
    } else if (absl::ConsumePrefix(&line, "graphsieve_request_latency_seconds_count ")) {
      count = absl::SimpleAtod(line, &t.calls);
    }
  }
  t.ok = sum && count;
  return t;
}

// The share of the protocol's ceiling: graphsieve-server and the trivial
// service measured in turn (rounds × seconds/rounds each) on the same pools,
// batch and client; pairs/s summed over the rounds, p99 over the rounds'
// p99s (the largest). Then the mean time of a call on each side (Little's
// law: in flight × batch / pairs/s) and, from the server's metrics (its
// `admin_port`), how much of the server's call is its handler: the rest,
// outside the handler, is what the protocol took around it, to set beside
// the trivial service's call (docs/SERVER.md "Inside and outside the
// handler").
void PrintCeiling(const Stubs& server, const Stubs& trivial, int admin_port, int threads,
                  double seconds, const std::vector<std::pair<std::string, const Pool*>>& pools) {
  const size_t batch = static_cast<size_t>(absl::GetFlag(FLAGS_ceiling_batch));
  const int rounds = std::max(1, absl::GetFlag(FLAGS_ceiling_rounds));
  std::printf(
      "\nshare of the protocol's ceiling (trivial service: same proto, a constant per pair, no "
      "lookup), batch %zu, %d alternating rounds of %.2f s per side:\n",
      batch, rounds, seconds / rounds);
  std::printf("%-10s %9s %14s %14s %7s %11s %11s\n", "pairs", "in flight", "trivial pairs/s",
              "server pairs/s", "share", "trivial p99", "server p99");
  struct CallTimes {
    std::string pairs;
    int in_flight;
    double trivial_us, server_us, handler_us;  // handler_us < 0: not read
  };
  std::vector<CallTimes> calls;
  for (const auto& [name, pool] : pools) {
    for (int t : {1, threads}) {
      double trivial_pairs = 0, server_pairs = 0, trivial_p99 = 0, server_p99 = 0;
      double handler_seconds = 0, handler_calls = 0;
      bool handler_ok = true;
      uint64_t errors = 0;
      for (int r = 0; r < rounds; ++r) {
        const Point a = RunCalls(trivial, t, seconds / rounds, batch, *pool);
        const HandlerTotals before = ReadHandlerTotals(admin_port);
        const Point b = RunCalls(server, t, seconds / rounds, batch, *pool);
        const HandlerTotals after = ReadHandlerTotals(admin_port);
        handler_ok = handler_ok && before.ok && after.ok;
        handler_seconds += after.seconds - before.seconds;
        handler_calls += after.calls - before.calls;
        trivial_pairs += a.pairs_per_second / rounds;
        server_pairs += b.pairs_per_second / rounds;
        trivial_p99 = std::max(trivial_p99, a.p99_ms);
        server_p99 = std::max(server_p99, b.p99_ms);
        errors += a.errors + b.errors;
      }
      std::printf("%-10s %9d %14.0f %14.0f %6.0f%% %8.3f ms %8.3f ms%s\n", name.c_str(), t,
                  trivial_pairs, server_pairs, 100.0 * server_pairs / trivial_pairs, trivial_p99,
                  server_p99, errors ? absl::StrCat("  (", errors, " errors)").c_str() : "");
      const double per_call = 1e6 * t * static_cast<double>(batch);
      calls.push_back(
          {name, t, per_call / trivial_pairs, per_call / server_pairs,
           handler_ok && handler_calls > 0 ? 1e6 * handler_seconds / handler_calls : -1.0});
    }
  }
  std::printf(
      "\nmean time of a call (us; in flight x batch / pairs/s), and of the server's handler "
      "(its graphsieve_request_latency_seconds):\n");
  std::printf("%-10s %9s %13s %12s %11s %16s\n", "pairs", "in flight", "trivial call",
              "server call", "in handler", "outside handler");
  for (const CallTimes& c : calls) {
    if (c.handler_us < 0) {
      std::printf("%-10s %9d %13.1f %12.1f %11s %16s\n", c.pairs.c_str(), c.in_flight, c.trivial_us,
                  c.server_us, "n/a", "n/a");
    } else {
      std::printf("%-10s %9d %13.1f %12.1f %11.1f %16.1f\n", c.pairs.c_str(), c.in_flight,
                  c.trivial_us, c.server_us, c.handler_us, c.server_us - c.handler_us);
    }
  }
}

int Main() {
  const std::string root = absl::GetFlag(FLAGS_snapshot_root);
  if (root.empty()) {
    std::fprintf(stderr, "graphsieve-bench-server: --snapshot_root is required\n");
    return 2;
  }
  std::vector<size_t> batches;
  for (absl::string_view b : absl::StrSplit(absl::GetFlag(FLAGS_batches), ',')) {
    size_t v = 0;
    if (!absl::SimpleAtoi(b, &v) || v == 0 || v > 100000) {
      std::fprintf(stderr, "graphsieve-bench-server: --batches: '%s' is not in [1, 100000]\n",
                   std::string(b).c_str());
      return 2;
    }
    batches.push_back(v);
  }
  cpu_set_t client_cpus, server_cpus;
  const bool pinned = !absl::GetFlag(FLAGS_pin_cpus).empty();
  std::string client_list, server_list;
  if (pinned) {
    std::pair<std::string, std::string> lists = absl::StrSplit(absl::GetFlag(FLAGS_pin_cpus), ':');
    client_list = lists.first;
    server_list = lists.second;
    if (!ParseCpuList(client_list, &client_cpus) || !ParseCpuList(server_list, &server_cpus)) {
      std::fprintf(
          stderr,
          "graphsieve-bench-server: --pin_cpus=%s: expected CLIENT:SERVER, two CPU "
          "lists such as 0:1 or 0-1:2-3, of CPUs this process may run on (taskset -p PID)\n",
          absl::GetFlag(FLAGS_pin_cpus).c_str());
      return 2;
    }
  }
  for (absl::string_view name : absl::StrSplit(absl::GetFlag(FLAGS_ceiling_pools), ',')) {
    if (name != "EXACT" && name != "INFERRED" && name != "mixed") {
      std::fprintf(stderr,
                   "graphsieve-bench-server: --ceiling_pools: '%s' is not EXACT, INFERRED or "
                   "mixed\n",
                   std::string(name).c_str());
      return 2;
    }
  }
  const double seconds = absl::GetFlag(FLAGS_seconds);
  const int threads = absl::GetFlag(FLAGS_client_threads);
  auto store = SnapshotStore::Create({root, false});
  if (!store.ok()) return std::fprintf(stderr, "%s\n", store.status().ToString().c_str()), 1;
  auto version = (*store)->ReadCurrent();
  if (!version.ok()) return std::fprintf(stderr, "%s\n", version.status().ToString().c_str()), 1;
  std::string swap_to = absl::GetFlag(FLAGS_swap_version);
  if (swap_to.empty()) {
    auto versions = (*store)->ListVersions();
    if (versions.ok()) {
      for (const std::string& v : *versions) {
        if (v != *version) swap_to = v;
      }
    }
  }

  // --- Baseline: raw in-process LookupPairs on the same snapshot, through
  // RocksDB (sorted MultiGet) and through the in-memory index the server uses.
  Pool pool, mixed, inferred;
  // kMemory two or three times: (with --raw_huge_pages the index file mapped
  // with 4 KiB pages,) the mapped index file, then the index built in memory.
  // Each prints the process's FilePmdMapped / AnonHugePages after its lookups.
  int memory_runs = 0;
  std::vector<LookupMode> modes = {LookupMode::kRocksDb, LookupMode::kMemory, LookupMode::kMemory};
  const bool huge_run = absl::GetFlag(FLAGS_raw_huge_pages);
  if (huge_run) modes.push_back(LookupMode::kMemory);
  for (LookupMode mode : modes) {
    const absl::Time t0 = absl::Now();
    SnapshotReaderOptions ro;
    ro.lookup = mode;
    const int memory_run = mode == LookupMode::kMemory ? memory_runs++ : -1;
    ro.use_index_file = memory_run != (huge_run ? 2 : 1);
    // Without --raw_huge_pages the mapped run maps as the server will.
    ro.index_huge_pages = huge_run ? memory_run != 0 : absl::GetFlag(FLAGS_server_index_huge_pages);
    auto reader = VersionOpener().OpenStored(root, *version, ro);
    if (!reader.ok()) return std::fprintf(stderr, "%s\n", reader.status().ToString().c_str()), 1;
    const double open_s = absl::ToDoubleSeconds(absl::Now() - t0);
    const auto& m = (*reader)->manifest();
    std::printf(
        "snapshot %s: %llu pairs, %llu users, %llu items, pairs table '%s', %.0f MiB; "
        "in-process open+verify+%s (lookup=%s) %.2f s\n",
        version->c_str(), static_cast<unsigned long long>(m.pairs),
        static_cast<unsigned long long>(m.users), static_cast<unsigned long long>(m.items),
        m.pairs_table_format.c_str(), static_cast<double>(m.db_bytes) / (1 << 20),
        mode == LookupMode::kMemory ? "index" : "warm", LookupModeName(mode), open_s);
    const SnapshotLoadStats& ls = (*reader)->load_stats();
    const char* index_what = mode != LookupMode::kMemory ? "warm"
                             : ls.index_mapped           ? "index file check+map"
                                                         : "index scan+build";
    std::printf(
        "  load: verify files %.2f s, rocksdb VerifyChecksum %.2f s, open %.2f s, %s %.2f s\n",
        ls.verify_files_seconds, ls.verify_rocksdb_seconds, ls.open_seconds, index_what,
        ls.index_seconds);
    if (pool.users.empty()) {
      const uint64_t want = static_cast<uint64_t>(absl::GetFlag(FLAGS_pool_pairs));
      const uint64_t stride = std::max<uint64_t>(1, m.pairs / std::max<uint64_t>(1, want));
      uint64_t k = 0;
      (*reader)
          ->ForEachPair([&](uint64_t u, uint64_t i, float) {
            if (k++ % stride == 0) {
              pool.users.push_back(u);
              pool.items.push_back(i);
            }
          })
          .IgnoreError();
      std::mt19937_64 rng(42);
      for (size_t j = pool.users.size(); j > 1; --j) {
        const size_t r = rng() % j;
        std::swap(pool.users[j - 1], pool.users[r]);
        std::swap(pool.items[j - 1], pool.items[r]);
      }
      std::printf("query pool: %zu stored pairs (every %llu-th), shuffled\n", pool.users.size(),
                  static_cast<unsigned long long>(stride));
      // Random (user, item) combinations of known ids: mostly unseen pairs
      // (INFERRED), the rest stored (EXACT) — the ingestion-time mix; and
      // its unseen pairs alone.
      mixed = pool;
      std::mt19937_64 mix_rng(7);
      std::shuffle(mixed.items.begin(), mixed.items.end(), mix_rng);
      std::unique_ptr<bool[]> stored(new bool[mixed.users.size()]);
      std::vector<float> unused(mixed.users.size());
      absl::Status looked = (*reader)->LookupPairs(mixed.users, mixed.items,
                                                   absl::MakeSpan(stored.get(), mixed.users.size()),
                                                   absl::MakeSpan(unused));
      if (!looked.ok()) return std::fprintf(stderr, "%s\n", looked.ToString().c_str()), 1;
      for (size_t j = 0; j < mixed.users.size(); ++j) {
        if (stored[j]) continue;
        inferred.users.push_back(mixed.users[j]);
        inferred.items.push_back(mixed.items[j]);
      }
      std::printf(
          "mixed pool: the same users, items shuffled (%.0f%% stored); unseen pool: its "
          "%zu unseen pairs\n\n",
          100.0 - 100.0 * static_cast<double>(inferred.users.size()) /
                      static_cast<double>(mixed.users.size()),
          inferred.users.size());
      std::printf("%-34s %7s %14s %9s %9s\n", "path", "batch", "pairs/s", "p50 ms", "p99 ms");
    }
    // The stored pool, and with the in-memory index the unseen pool too: an
    // absent pair's probe runs on past its home slot (docs/SNAPSHOT.md
    // "Ordered regions").
    for (const Pool* q : {&pool, &inferred}) {
      if (q == &inferred && mode != LookupMode::kMemory) break;
      for (int t : {1, 2}) {
        if (!absl::GetFlag(FLAGS_raw)) break;
        for (size_t b : batches) {
          if (q->users.size() <= b) continue;
          std::vector<std::unique_ptr<bool[]>> found;
          std::vector<std::vector<float>> rates;
          for (int w = 0; w < t; ++w) {
            found.emplace_back(new bool[b]);
            rates.emplace_back(b);
          }
          const SnapshotReader& r = **reader;
          Point p = RunLoad(t, seconds, b, [&](int w, uint64_t n) {
            const size_t off = (n * b) % (q->users.size() - b);
            return r
                .LookupPairs(absl::MakeConstSpan(q->users.data() + off, b),
                             absl::MakeConstSpan(q->items.data() + off, b),
                             absl::MakeSpan(found[w].get(), b), absl::MakeSpan(rates[w]))
                .ok();
          });
          std::printf(
              "%-34s %7zu %14.0f %9.3f %9.3f\n",
              absl::StrCat("raw ",
                           mode != LookupMode::kMemory ? "rocksdb"
                           : ls.index_mapped ? (ro.index_huge_pages ? "mapped" : "mapped 4KiB")
                                             : "built",
                           " lookup, ", q == &inferred ? "unseen, " : "", t, " thr")
                  .c_str(),
              b, p.pairs_per_second, p.p50_ms, p.p99_ms);
        }
      }
    }
    // The whole scoring of unseen pairs as the server runs it on one thread
    // (BatchScorer: the lookup, then each pair's node rows and score), for
    // the mapped index: the INFERRED path without the RPC.
    if (absl::GetFlag(FLAGS_raw) && mode == LookupMode::kMemory && ls.index_mapped) {
      const BatchScorer scorer(DefaultPolicy(), /*chunk_pairs=*/1 << 20);
      for (size_t b : batches) {
        if (inferred.users.size() <= b) continue;
        std::vector<float> rates(b);
        std::vector<RateSource> sources(b);
        const SnapshotReader& r = **reader;
        Point p = RunLoad(1, seconds, b, [&](int, uint64_t n) {
          const size_t off = (n * b) % (inferred.users.size() - b);
          return scorer
              .Score(r, absl::MakeConstSpan(inferred.users.data() + off, b),
                     absl::MakeConstSpan(inferred.items.data() + off, b), {}, absl::MakeSpan(rates),
                     absl::MakeSpan(sources), nullptr)
              .ok();
        });
        std::printf("%-34s %7zu %14.0f %9.3f %9.3f\n", "raw mapped score, unseen, 1 thr", b,
                    p.pairs_per_second, p.p50_ms, p.p99_ms);
      }
    }
    if (mode == LookupMode::kMemory) {
      std::printf("  huge pages mapped now (/proc/self/smaps_rollup): %s\n",
                  HugePageLines().c_str());
    }
  }

  // --- The real server process. ---
  const std::string binary = absl::GetFlag(FLAGS_server_binary);
  std::string line;
  int server_stderr = -1;
  std::vector<std::string> server_argv = {
      binary,
      "--snapshot-root",
      root,
      "--host",
      "127.0.0.1",
      "--port",
      "0",
      "--admin-port",
      "0",  // the ceiling comparison reads the handler's time from /metrics
      "--poll-interval-seconds",
      "-1",
      "--pin-version",
      *version,
      "--lookup",
      absl::GetFlag(FLAGS_server_lookup),
      absl::StrCat("--use_index_file=", absl::GetFlag(FLAGS_server_use_index_file)),
      absl::StrCat("--index_huge_pages=", absl::GetFlag(FLAGS_server_index_huge_pages))};
  if (absl::GetFlag(FLAGS_server_lookup_helpers) >= 0) {
    server_argv.push_back(
        absl::StrCat("--lookup_helpers=", absl::GetFlag(FLAGS_server_lookup_helpers)));
  }
  if (pinned) {
    std::printf("\npinned: client threads on CPUs %s, server and trivial service on CPUs %s\n",
                client_list.c_str(), server_list.c_str());
  }
  // The server loads the version at start (--pin-version): a cold figure
  // evicts its files before the spawn.
  const bool evict = absl::GetFlag(FLAGS_evict_page_cache);
  if (evict) EvictPageCache((*store)->VersionDir(*version), version->c_str());
  const absl::Time spawned = absl::Now();
  const pid_t pid = SpawnPinned(server_argv, &line, &server_stderr, pinned ? &server_cpus : nullptr,
                                pinned ? &client_cpus : nullptr);
  if (pid < 0) return 1;
  if (pinned) {
    std::printf("server pid %d on CPUs %s, this client on CPUs %s\n", static_cast<int>(pid),
                CpusAllowed(pid).c_str(), CpusAllowed(getpid()).c_str());
  }
  StderrWatcher watcher(server_stderr);
  const int port = PortOf(line);
  int admin_port = 0;
  std::string operator_address;  // PinVersion is accepted only there (docs/SERVER.md)
  for (absl::string_view part : absl::StrSplit(line, ' ')) {
    if (absl::ConsumePrefix(&part, "operator=")) operator_address = std::string(part);
    if (absl::ConsumePrefix(&part, "admin_port=")) absl::SimpleAtoi(part, &admin_port);
  }
  if (port == 0) {
    std::fprintf(stderr, "server did not start: %s\n", line.c_str());
    kill(pid, SIGTERM);
    waitpid(pid, nullptr, 0);
    return 1;
  }
  // --pin-version with polling off: PollOnce never runs, so pin it by RPC.
  auto admin = v1::SamplingRateService::NewStub(
      grpc::CreateChannel(operator_address, grpc::InsecureChannelCredentials()));
  {
    const absl::Time t0 = absl::Now();
    grpc::ClientContext ctx;
    ctx.set_wait_for_ready(true);
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(5));
    v1::PinVersionRequest req;
    req.set_version(*version);
    v1::PinVersionResponse resp;
    grpc::Status st = admin->PinVersion(&ctx, req, &resp);
    if (!st.ok()) {
      std::fprintf(stderr, "PinVersion: %s\n", st.error_message().c_str());
      kill(pid, SIGTERM);
      return 1;
    }
    const double load_s = absl::ToDoubleSeconds(absl::Now() - t0);
    // The first answer: one batch of 1024 stored pairs after the load.
    v1::GetSamplingRateRequest first_req;
    pool.Fill(0, 1024, &first_req);
    v1::GetSamplingRateResponse first_resp;
    grpc::ClientContext first_ctx;
    auto first_stub = MakeStub(port, 0);
    const grpc::Status first_st = first_stub->GetSamplingRate(&first_ctx, first_req, &first_resp);
    std::printf(
        "\nserver pid %d port %d: %s pinned in %.2f s (the server's own load time is in its "
        "log line above); first answer (batch 1024) %s %.2f s after the server was spawned (%s "
        "page cache)\n",
        pid, port, version->c_str(), load_s,
        first_st.ok() ? "ok" : first_st.error_message().c_str(),
        absl::ToDoubleSeconds(absl::Now() - spawned), evict ? "cold" : "warm");
    const absl::Time p0 = absl::Now();
    const bool profiled = watcher.WaitForProfile(absl::Minutes(5));
    std::printf("waited %.1f s for the server's background profile scan of the version%s\n",
                absl::ToDoubleSeconds(absl::Now() - p0), profiled ? "" : " (timed out)");
  }
  Stubs stubs;
  for (int t = 0; t < threads; ++t) stubs.push_back(MakeStub(port, t));
  for (int t : {1, threads}) {
    for (size_t b : batches) {
      if (!absl::GetFlag(FLAGS_throughput)) break;
      const Point p = RunCalls(stubs, t, seconds, b, pool);
      std::printf("%-28s %7zu %14.0f %9.3f %9.3f%s\n",
                  absl::StrCat("gRPC server, ", t, " in flight").c_str(), b, p.pairs_per_second,
                  p.p50_ms, p.p99_ms,
                  p.errors ? absl::StrCat("  (", p.errors, " errors)").c_str() : "");
    }
  }
  // The mixed pool's sources as the server reports them.
  if (absl::GetFlag(FLAGS_throughput)) {
    const size_t b = 1024;
    v1::GetSamplingRateRequest req;
    std::array<uint64_t, 4> sources{};
    Point p = RunLoad(1, seconds, b, [&](int, uint64_t n) {
      mixed.Fill(n, b, &req);
      v1::GetSamplingRateResponse resp;
      grpc::ClientContext ctx;
      const bool ok = stubs[0]->GetSamplingRate(&ctx, req, &resp).ok();
      for (int s : resp.sources()) sources[static_cast<size_t>(s) & 3]++;
      return ok;
    });
    const double total = static_cast<double>(sources[1] + sources[2] + sources[3]);
    std::printf("%-28s %7zu %14.0f %9.3f %9.3f  (exact %.0f%%, inferred %.0f%%)\n",
                "gRPC server, mixed, 1 in fl", b, p.pairs_per_second, p.p50_ms, p.p99_ms,
                100.0 * static_cast<double>(sources[1]) / total,
                100.0 * static_cast<double>(sources[2]) / total);
  }
  if (absl::GetFlag(FLAGS_ceiling)) {
    std::string trivial_line;
    const pid_t trivial_pid =
        SpawnPinned({"/proc/self/exe", "--trivial_service"}, &trivial_line, nullptr,
                    pinned ? &server_cpus : nullptr, pinned ? &client_cpus : nullptr);
    const int trivial_port = PortOf(trivial_line);
    if (pinned && trivial_pid > 0) {
      std::printf("trivial service pid %d on CPUs %s\n", static_cast<int>(trivial_pid),
                  CpusAllowed(trivial_pid).c_str());
    }
    if (trivial_pid > 0 && trivial_port > 0) {
      Stubs trivial;
      for (int t = 0; t < threads; ++t) trivial.push_back(MakeStub(trivial_port, t));
      std::vector<std::pair<std::string, const Pool*>> pools;
      for (absl::string_view name : absl::StrSplit(absl::GetFlag(FLAGS_ceiling_pools), ',')) {
        if (name == "EXACT") pools.push_back({"EXACT", &pool});
        if (name == "INFERRED") pools.push_back({"INFERRED", &inferred});
        if (name == "mixed") pools.push_back({"mixed", &mixed});
      }
      mg_init_library(0);  // civetweb's client, for the server's /metrics
      PrintCeiling(stubs, trivial, admin_port, threads, seconds, pools);
      mg_exit_library();
    } else {
      std::printf("trivial service did not start: %s\n", trivial_line.c_str());
    }
    if (trivial_pid > 0) {
      kill(trivial_pid, SIGTERM);
      waitpid(trivial_pid, nullptr, 0);
    }
  }
  const long steady = RssKb(pid, "VmRSS:");
  const long hwm_before = RssKb(pid, "VmHWM:");
  std::printf("\nserver huge pages (/proc/%d/smaps_rollup): %s\n", static_cast<int>(pid),
              HugePageLines(std::to_string(pid)).c_str());
  std::printf("server RSS steady state: %.1f MiB (kernel's peak so far, VmHWM: %.1f MiB)\n",
              steady / 1024.0, hwm_before / 1024.0);
  if (!swap_to.empty() && swap_to != "none") {
    std::atomic<bool> done{false};
    long peak = steady;
    std::thread sampler([&] {
      while (!done.load()) {
        peak = std::max(peak, RssKb(pid, "VmRSS:"));
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    });
    // The load during the swap counts every call: errors, and the answers
    // from each version (every answer names the one version it came from).
    uint64_t calls = 0, errors = 0, from_old = 0, from_new = 0, from_other = 0;
    double max_ms = 0;
    std::string first_error;
    std::thread load([&] {
      const size_t b = 1024;
      v1::GetSamplingRateRequest req;
      for (uint64_t n = 0; !done.load(); ++n) {
        pool.Fill(n, b, &req);
        v1::GetSamplingRateResponse resp;
        grpc::ClientContext ctx;
        const auto a = std::chrono::steady_clock::now();
        const grpc::Status call = stubs[0]->GetSamplingRate(&ctx, req, &resp);
        max_ms = std::max(
            max_ms, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a)
                        .count());
        ++calls;
        if (!call.ok() || resp.rates_size() != static_cast<int>(b)) {
          if (errors++ == 0) first_error = call.ok() ? "short answer" : call.error_message();
        } else if (resp.snapshot_version() == *version) {
          ++from_old;
        } else if (resp.snapshot_version() == swap_to) {
          ++from_new;
        } else {
          ++from_other;
        }
      }
    });
    if (evict) EvictPageCache((*store)->VersionDir(swap_to), swap_to.c_str());
    const absl::Time t0 = absl::Now();
    grpc::ClientContext ctx;
    v1::PinVersionRequest req;
    req.set_version(swap_to);
    v1::PinVersionResponse resp;
    grpc::Status st = admin->PinVersion(&ctx, req, &resp);
    const double swap_s = absl::ToDoubleSeconds(absl::Now() - t0);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // old version released
    done = true;
    sampler.join();
    load.join();
    const long after = RssKb(pid, "VmRSS:");
    if (!st.ok()) {
      std::printf("swap to %s failed: %s\n", swap_to.c_str(), st.error_message().c_str());
    } else {
      std::printf(
          "swap to %s under load (batch 1024): %.2f s; RSS peak during swap %.1f MiB = "
          "%.2fx steady (target <= 1.2x); after swap %.1f MiB\n",
          swap_to.c_str(), swap_s, peak / 1024.0, static_cast<double>(peak) / steady,
          after / 1024.0);
      std::printf(
          "calls during the swap (batch 1024, 1 in flight, from before the pin to 0.5 s after "
          "it): %llu, errors %llu%s%s; answered by %s %llu, by %s %llu, by another version "
          "%llu; slowest call %.1f ms\n",
          static_cast<unsigned long long>(calls), static_cast<unsigned long long>(errors),
          errors ? " — first: " : "", first_error.c_str(), version->c_str(),
          static_cast<unsigned long long>(from_old), swap_to.c_str(),
          static_cast<unsigned long long>(from_new), static_cast<unsigned long long>(from_other),
          max_ms);
      std::printf(
          "kernel's peak RSS (VmHWM, not sampled) after the swap: %.1f MiB = %.2fx steady\n",
          RssKb(pid, "VmHWM:") / 1024.0, static_cast<double>(RssKb(pid, "VmHWM:")) / steady);
    }
  } else {
    std::printf("swap: skipped (--swap_version=none, or only one version on disk)\n");
  }
  // Close the client's connections first: the server's drain waits for every
  // open connection to answer its GOAWAY (docs/SERVER.md "Health, readiness,
  // drain"), and idle channels nobody polls would hold it to its deadline.
  stubs.clear();
  admin.reset();
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  std::printf("server exited with %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return 0;
}

}  // namespace
}  // namespace graphsieve

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Benchmarks graphsieve-server against raw in-process LookupPairs on one snapshot.\n"
      "  graphsieve-bench-server --snapshot_root DIR [--seconds 3] [--client_threads 4]");
  absl::ParseCommandLine(argc, argv);
  if (absl::GetFlag(FLAGS_trivial_service)) return graphsieve::bench::RunTrivialService();
  // A line at a time even into a file or a pipe: the spawned servers write
  // to the same stderr, and a block-buffered table would be cut by their lines.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  return graphsieve::Main();
}
