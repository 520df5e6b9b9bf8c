// graphsieve-bench-partitions: one graphsieve-server against a partitioned
// deployment (one graphsieve-server --partition I per part) on this machine,
// both through the routing SamplingRateClient (client/sampling_rate_client.h),
// same run: pairs/s and p50/p99 at one batch size; then a swap of the parts
// to another version under routed load (both parts pinned at once): batches,
// pairs, errors, and batches answered from more than one version (must be 0).
//
//   graphsieve-bench-partitions --single_root A --parts_root B [--batch 1024]
//                               [--seconds 5] [--client_threads 4]
//
// A: an unpartitioned root; B: a root built from the same log with
// graphsieve-build --partitions N, holding at least two versions for the swap.
// With --campaign_root C (a copy of B: its CURRENT is rewritten), then the
// swap campaign of partition_campaign.cc: parts polling CURRENT on their own,
// >= --campaign_requests routed batches across >= --campaign_swaps flips.
// Prints figures (and CPU seconds next to wall time); asserts nothing.
// Servers and load generator share the machine.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "bench/load_loop.h"
#include "bench/partition_bench.h"
#include "client/sampling_rate_client.h"
#include "core/snapshot/snapshot_reader.h"
#include "core/snapshot/snapshot_store.h"
#include "core/snapshot/version_opener.h"

ABSL_FLAG(std::string, single_root, "", "Required. Unpartitioned snapshot root.");
ABSL_FLAG(std::string, parts_root, "", "Required. Partitioned snapshot root (same log).");
ABSL_FLAG(std::string, server_binary, GRAPHSIEVE_SERVER_BINARY, "graphsieve-server to spawn.");
ABSL_FLAG(int, batch, 1024, "Pairs per GetRates call.");
ABSL_FLAG(double, seconds, 5.0, "Measuring time per configuration.");
ABSL_FLAG(int, client_threads, 4, "Concurrent client threads.");
ABSL_FLAG(double, swap_seconds, 10.0, "Routed load before, during and after the swap.");
ABSL_FLAG(std::string, baseline_server_binary, "",
          "Optional: another graphsieve-server (e.g. built from main) measured as a third "
          "'1 server' configuration in the same run.");
ABSL_FLAG(std::string, campaign_root, "",
          "Optional: a partitioned root with >= 2 versions for the swap campaign (its CURRENT "
          "is rewritten: use a copy, e.g. cp -al).");
ABSL_FLAG(uint64_t, campaign_requests, 1000000, "Campaign: routed batches, at least.");
ABSL_FLAG(int, campaign_swaps, 10, "Campaign: CURRENT flips, at least.");
ABSL_FLAG(double, campaign_swap_every_seconds, 3.0, "Campaign: seconds between flips.");
ABSL_FLAG(double, campaign_poll_seconds, 1.0, "Campaign: each part's --poll-interval-seconds.");
ABSL_FLAG(double, campaign_hold_seconds, 60.0,
          "Campaign: each part's --previous-version-hold-seconds (0: the behaviour before "
          "held versions; < 0: not passed, for a --server_binary from before the flag).");
ABSL_FLAG(bool, campaign_control, true,
          "Campaign: then the same flips again (--campaign_swaps, no request minimum) with "
          "--previous-version-hold-seconds=0, the behaviour before held versions, as the "
          "control of the same run.");
ABSL_FLAG(int, campaign_batch, 0, "Campaign: pairs per batch (0: --batch).");
ABSL_FLAG(double, settle_seconds, 40.0,
          "Table: pause after the warm-up, before measuring: each server's version profiler "
          "scans every pair once a version loads (~25 s for 11.7M pairs on this machine) and "
          "would compete with the first configurations.");
ABSL_FLAG(bool, table, true, "Measure the one-server-vs-partitions table and the pinned swap.");
ABSL_FLAG(bool, compare_all, true,
          "Ask both deployments for every stored pair of the single version (and as many "
          "unseen pairs) and count differing answers.");

namespace graphsieve {
namespace {

// Spawns graphsieve-server pinned to `version` (no refresher) and reads its port.
absl::StatusOr<Server> SpawnPinned(const std::string& root, const std::string& version,
                                   int partition) {
  return Spawn(absl::GetFlag(FLAGS_server_binary), root,
               {"--poll-interval-seconds=-1", "--pin-version=" + version,
                absl::StrCat("--partition=", partition)});
}

using Point = bench::LoadPoint;

// `threads` workers call the client for `seconds` with windows of the pool.
Point Measure(const SamplingRateClient& client, const std::vector<uint64_t>& users,
              const std::vector<uint64_t>& items, size_t batch, int threads, double seconds) {
  return bench::RunLoad(threads, seconds, batch, [&](int, uint64_t n) {
    const size_t off = (n * batch) % (users.size() - batch);
    return client
        .GetRates(absl::MakeConstSpan(users.data() + off, batch),
                  absl::MakeConstSpan(items.data() + off, batch))
        .ok();
  });
}

// The one-server-vs-partitions table, the all-pairs comparison and the
// pinned swap of every part at once.
int RunTable(const std::string& single_root, const std::string& single_version,
             const std::string& parts_root, const std::string& parts_version,
             const std::vector<std::string>& parts_versions, uint32_t parts,
             const std::vector<uint64_t>& users, const std::vector<uint64_t>& items) {
  const size_t batch = static_cast<size_t>(absl::GetFlag(FLAGS_batch));
  const int threads = absl::GetFlag(FLAGS_client_threads);
  const double seconds = absl::GetFlag(FLAGS_seconds);
  const std::string* single_v = &single_version;
  const std::string* parts_v = &parts_version;
  const std::vector<std::string>* parts_versions_p = &parts_versions;
  auto single = SpawnPinned(single_root, *single_v, -1);
  if (!single.ok()) return std::fprintf(stderr, "%s\n", single.status().ToString().c_str()), 1;
  Server baseline;  // optional: another binary, same snapshot
  std::unique_ptr<SamplingRateClient> baseline_client;
  if (const std::string bin = absl::GetFlag(FLAGS_baseline_server_binary); !bin.empty()) {
    auto b = Spawn(bin, single_root, {"--poll-interval-seconds=-1", "--pin-version=" + *single_v});
    if (!b.ok()) return std::fprintf(stderr, "%s\n", b.status().ToString().c_str()), 1;
    baseline = *b;
    baseline_client = MakeClient(baseline.target);
  }
  std::vector<Server> part_servers;
  std::string routed_target;
  for (uint32_t p = 0; p < parts; ++p) {
    auto s = SpawnPinned(parts_root, *parts_v, static_cast<int>(p));
    if (!s.ok()) return std::fprintf(stderr, "%s\n", s.status().ToString().c_str()), 1;
    part_servers.push_back(*s);
    absl::StrAppend(&routed_target, p ? "," : "", s->target);
  }
  auto single_client = MakeClient(single->target);
  auto routed_client = MakeClient(routed_target);
  // Warm up (waits for the loads).
  for (auto* c : {single_client.get(), routed_client.get(), baseline_client.get()}) {
    if (c == nullptr) continue;
    auto r = c->GetRates(absl::MakeConstSpan(users.data(), batch),
                         absl::MakeConstSpan(items.data(), batch));
    if (!r.ok()) return std::fprintf(stderr, "warm-up: %s\n", r.status().ToString().c_str()), 1;
  }
  if (absl::GetFlag(FLAGS_compare_all)) {
    // Every stored pair, plus the same users with the items shifted by one
    // (mostly unseen pairs: INFERRED), in batches of 50000.
    auto reader = VersionOpener().OpenStored(single_root, *single_v, SnapshotReaderOptions());
    if (!reader.ok()) return std::fprintf(stderr, "%s\n", reader.status().ToString().c_str()), 1;
    std::vector<uint64_t> all_users, all_items;
    (*reader)
        ->ForEachPair([&](uint64_t u, uint64_t i, float) {
          all_users.push_back(u);
          all_items.push_back(i);
        })
        .IgnoreError();
    const size_t stored = all_users.size();
    for (size_t k = 0; k < stored; ++k) {
      all_users.push_back(all_users[k]);
      all_items.push_back(all_items[(k + 1) % stored]);
    }
    uint64_t differ = 0, failed = 0;
    constexpr size_t kChunk = 50000;
    for (size_t b = 0; b < all_users.size(); b += kChunk) {
      const size_t m = std::min(kChunk, all_users.size() - b);
      auto u = absl::MakeConstSpan(all_users.data() + b, m);
      auto it = absl::MakeConstSpan(all_items.data() + b, m);
      auto x = single_client->GetRates(u, it);
      auto y = routed_client->GetRates(u, it);
      if (!x.ok() || !y.ok()) {
        ++failed;
        continue;
      }
      for (size_t k = 0; k < m; ++k) {
        differ += x->rates[k] != y->rates[k] || x->sources[k] != y->sources[k];
      }
    }
    std::printf(
        "\nevery stored pair (%zu) and %zu shifted pairs through both: %llu answers "
        "differ, %llu failed batches\n",
        stored, all_users.size() - stored, static_cast<unsigned long long>(differ),
        static_cast<unsigned long long>(failed));
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(absl::GetFlag(FLAGS_settle_seconds)));
  std::printf("\n%-40s %14s %9s %9s %8s %10s\n", "configuration", "pairs/s", "p50 ms", "p99 ms",
              "errors", "server CPU");
  for (int t : {1, threads}) {
    for (int which : {0, 2, 1}) {  // the two single servers back to back
      if (which == 2 && baseline_client == nullptr) continue;
      const SamplingRateClient& c = which == 0   ? *single_client
                                    : which == 1 ? *routed_client
                                                 : *baseline_client;
      std::vector<pid_t> pids;
      if (which == 0) pids = {single->pid};
      if (which == 2) pids = {baseline.pid};
      if (which == 1) {
        for (const Server& s : part_servers) pids.push_back(s.pid);
      }
      double cpu0 = 0;
      for (pid_t pid : pids) cpu0 -= ProcessCpuSeconds(pid);
      Point p = Measure(c, users, items, batch, t, seconds);
      for (pid_t pid : pids) cpu0 += ProcessCpuSeconds(pid);
      const char* name = which == 0 ? "1 server" : which == 2 ? "1 server (baseline binary)" : "";
      std::printf("%-40s %14.0f %9.3f %9.3f %8llu %8.2f s\n",
                  absl::StrCat(which == 1 ? absl::StrCat(parts, " partitions, routed") : name, ", ",
                               t, " in flight")
                      .c_str(),
                  p.pairs_per_second, p.p50_ms, p.p99_ms, static_cast<unsigned long long>(p.errors),
                  cpu0);
    }
  }

  // Swap under routed load: every part pinned to another version at once.
  std::string swap_to;
  for (const std::string& v : *parts_versions_p) {
    if (v != *parts_v) swap_to = v;
  }
  if (swap_to.empty()) {
    std::printf("\nswap: skipped (one version under --parts_root)\n");
  } else {
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> calls{0}, errors{0}, mixed{0}, version_retries{0}, old_v{0}, new_v{0};
    std::string first_error;
    std::vector<std::thread> load;
    for (int t = 0; t < threads; ++t) {
      load.emplace_back([&, t] {
        for (uint64_t n = static_cast<uint64_t>(t) * 7919; !stop.load(); ++n) {
          const size_t off = (n * batch) % (users.size() - batch);
          auto r = routed_client->GetRates(absl::MakeConstSpan(users.data() + off, batch),
                                           absl::MakeConstSpan(items.data() + off, batch));
          ++calls;
          if (!r.ok()) {
            if (errors++ == 0) first_error = r.status().ToString();
            continue;
          }
          version_retries += static_cast<uint64_t>(r->version_retries);
          if (r->snapshot_versions.size() != 1) {
            ++mixed;
          } else {
            (r->snapshot_versions[0] == swap_to ? new_v : old_v)++;
          }
        }
      });
    }
    const double third = absl::GetFlag(FLAGS_swap_seconds) / 3;
    std::this_thread::sleep_for(std::chrono::duration<double>(third));
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pins;
    std::atomic<int> pin_errors{0};
    for (const Server& s : part_servers) {
      pins.emplace_back([&, target = s.operator_target] {
        auto c = MakeClient(target);
        if (!c->PinVersion(swap_to, false).ok()) ++pin_errors;
      });
    }
    for (auto& p : pins) p.join();
    const double swap_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::this_thread::sleep_for(std::chrono::duration<double>(2 * third));
    stop = true;
    for (auto& t : load) t.join();
    std::printf(
        "\nswap of %u parts to %s under routed load (%d threads, batch %zu): pins took %.2f s "
        "(%d failed)\n  %llu batches = %llu pairs; %llu errors; %llu batches mixing versions; "
        "%llu from the old version, %llu from the new; %llu version re-asks\n",
        parts, swap_to.c_str(), threads, batch, swap_s, pin_errors.load(),
        static_cast<unsigned long long>(calls.load()),
        static_cast<unsigned long long>(calls.load() * batch),
        static_cast<unsigned long long>(errors.load()),
        static_cast<unsigned long long>(mixed.load()),
        static_cast<unsigned long long>(old_v.load()),
        static_cast<unsigned long long>(new_v.load()),
        static_cast<unsigned long long>(version_retries.load()));
    if (!first_error.empty()) std::printf("  first error: %s\n", first_error.c_str());
  }
  Stop(*single);
  for (const Server& s : part_servers) Stop(s);
  if (baseline.pid >= 0) Stop(baseline);
  return 0;
}

int Main() {
  const std::string single_root = absl::GetFlag(FLAGS_single_root);
  const std::string parts_root = absl::GetFlag(FLAGS_parts_root);
  if (single_root.empty() || parts_root.empty()) {
    std::fprintf(stderr, "--single_root and --parts_root are required\n");
    return 2;
  }
  auto single_store = SnapshotStore::Create({single_root, false});
  auto parts_store = SnapshotStore::Create({parts_root, false});
  if (!single_store.ok() || !parts_store.ok()) return std::fprintf(stderr, "bad roots\n"), 1;
  auto single_v = (*single_store)->ReadCurrent();
  auto parts_v = (*parts_store)->ReadCurrent();
  auto parts_versions = (*parts_store)->ListVersions();
  if (!single_v.ok() || !parts_v.ok() || !parts_versions.ok()) {
    return std::fprintf(stderr, "no CURRENT\n"), 1;
  }
  // The part count and the query pool (stored pairs of the single version, shuffled).
  SnapshotReaderOptions ro;
  ro.partition = 0;
  auto part0 = VersionOpener().OpenStored(parts_root, *parts_v, ro);
  if (!part0.ok()) return std::fprintf(stderr, "%s\n", part0.status().ToString().c_str()), 1;
  const uint32_t parts = (*part0)->manifest().num_partitions;
  part0->reset();
  std::vector<uint64_t> users, items;
  {
    auto reader = VersionOpener().OpenStored(single_root, *single_v, SnapshotReaderOptions());
    if (!reader.ok()) return std::fprintf(stderr, "%s\n", reader.status().ToString().c_str()), 1;
    uint64_t k = 0;
    const uint64_t stride = std::max<uint64_t>(1, (*reader)->manifest().pairs >> 20);
    (*reader)
        ->ForEachPair([&](uint64_t u, uint64_t i, float) {
          if (k++ % stride == 0) {
            users.push_back(u);
            items.push_back(i);
          }
        })
        .IgnoreError();
    std::mt19937_64 rng(42);
    for (size_t j = users.size(); j > 1; --j) {
      const size_t r = rng() % j;
      std::swap(users[j - 1], users[r]);
      std::swap(items[j - 1], items[r]);
    }
  }
  const size_t batch = static_cast<size_t>(absl::GetFlag(FLAGS_batch));
  std::printf("query pool %zu stored pairs; %u partitions; batch %zu; hardware threads %u\n",
              users.size(), parts, batch, std::thread::hardware_concurrency());

  int rc = 0;
  if (absl::GetFlag(FLAGS_table)) {
    rc = RunTable(single_root, *single_v, parts_root, *parts_v, *parts_versions, parts, users,
                  items);
    if (rc != 0) return rc;
  }
  if (!absl::GetFlag(FLAGS_campaign_root).empty()) {
    CampaignOptions c;
    c.server_binary = absl::GetFlag(FLAGS_server_binary);
    c.root = absl::GetFlag(FLAGS_campaign_root);
    c.parts = parts;
    c.batch = absl::GetFlag(FLAGS_campaign_batch) > 0
                  ? static_cast<size_t>(absl::GetFlag(FLAGS_campaign_batch))
                  : static_cast<size_t>(absl::GetFlag(FLAGS_batch));
    c.threads = absl::GetFlag(FLAGS_client_threads);
    c.requests = absl::GetFlag(FLAGS_campaign_requests);
    c.swaps = absl::GetFlag(FLAGS_campaign_swaps);
    c.swap_every_seconds = absl::GetFlag(FLAGS_campaign_swap_every_seconds);
    c.poll_seconds = absl::GetFlag(FLAGS_campaign_poll_seconds);
    c.hold_seconds = absl::GetFlag(FLAGS_campaign_hold_seconds);
    rc = RunCampaign(c, users, items);
    if (rc == 0 && absl::GetFlag(FLAGS_campaign_control)) {
      c.hold_seconds = 0;
      c.requests = 0;
      rc = RunCampaign(c, users, items);
    }
  }
  return rc;
}

}  // namespace
}  // namespace graphsieve

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "One server vs a partitioned deployment through the routing client.\n"
      "  graphsieve-bench-partitions --single_root A --parts_root B [--batch 1024]");
  absl::ParseCommandLine(argc, argv);
  return graphsieve::Main();
}
