// The swap campaign of graphsieve-bench-partitions (partition_bench.h): part
// servers that each follow <root>/CURRENT on their own poll, started half a
// poll interval apart so their swaps do not line up; CURRENT flipped between
// two versions; the routing client under load across every flip. Counts
// errors and batches whose answers came from more than one version (both must
// be 0: docs/CLIENTS.md "Partitioned deployments"), the re-asks that kept them
// at 0, and each part's RSS during the flips against its steady RSS.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/partition_bench.h"
#include "core/snapshot/snapshot_store.h"

namespace graphsieve {
namespace {

using Clock = std::chrono::steady_clock;

absl::Status SetCurrent(const SnapshotStore& store, const std::string& version) {
  auto lock = store.AcquirePublishLock(30);
  if (!lock.ok()) return lock.status();
  return store.SetCurrent(**lock, version);
}

struct Tally {
  std::atomic<uint64_t> batches{0}, errors{0}, mixed{0}, reasked_batches{0}, reasks{0},
      fresh_retries{0};
  std::mutex mu;
  std::map<std::string, uint64_t> by_version;  // guarded by mu
  std::string first_error;                     // guarded by mu
};

void LoadThread(const SamplingRateClient& client, const std::vector<uint64_t>& users,
                const std::vector<uint64_t>& items, size_t batch, int t,
                const std::atomic<bool>& stop, Tally* tally) {
  std::map<std::string, uint64_t> mine;
  for (uint64_t n = static_cast<uint64_t>(t) * 7919; !stop.load(); ++n) {
    const size_t off = (n * batch) % (users.size() - batch);
    auto r = client.GetRates(absl::MakeConstSpan(users.data() + off, batch),
                             absl::MakeConstSpan(items.data() + off, batch));
    ++tally->batches;
    if (!r.ok()) {
      if (tally->errors++ == 0) {
        std::lock_guard<std::mutex> lock(tally->mu);
        tally->first_error = r.status().ToString();
      }
      continue;
    }
    tally->reasks += static_cast<uint64_t>(r->version_reasks);
    tally->reasked_batches += r->version_reasks > 0;
    tally->fresh_retries += static_cast<uint64_t>(r->version_retries);
    if (r->snapshot_versions.size() != 1) {
      ++tally->mixed;
    } else {
      ++mine[r->snapshot_versions[0]];
    }
  }
  std::lock_guard<std::mutex> lock(tally->mu);
  for (const auto& [v, k] : mine) tally->by_version[v] += k;
}

}  // namespace

int RunCampaign(const CampaignOptions& o, const std::vector<uint64_t>& users,
                const std::vector<uint64_t>& items) {
  auto store = SnapshotStore::Create({o.root, false});
  if (!store.ok()) return std::fprintf(stderr, "%s\n", store.status().ToString().c_str()), 1;
  auto versions = (*store)->ListVersions();
  if (!versions.ok() || versions->size() < 2) {
    return std::fprintf(stderr, "campaign: --campaign_root needs >= 2 versions\n"), 1;
  }
  const std::string va = (*versions)[versions->size() - 2], vb = versions->back();
  if (absl::Status st = SetCurrent(**store, va); !st.ok()) {
    return std::fprintf(stderr, "campaign: %s\n", st.ToString().c_str()), 1;
  }
  std::vector<Server> parts;
  std::string target;
  for (uint32_t p = 0; p < o.parts; ++p) {
    if (p > 0) {  // independent phases: part p polls p/parts of an interval later
      std::this_thread::sleep_for(std::chrono::duration<double>(o.poll_seconds / o.parts));
    }
    std::vector<std::string> flags = {absl::StrCat("--poll-interval-seconds=", o.poll_seconds),
                                      absl::StrCat("--partition=", p)};
    if (o.hold_seconds >= 0) {  // < 0: a server binary from before the flag
      flags.push_back(absl::StrCat("--previous-version-hold-seconds=", o.hold_seconds));
    }
    auto s = Spawn(o.server_binary, o.root, flags);
    if (!s.ok()) return std::fprintf(stderr, "%s\n", s.status().ToString().c_str()), 1;
    parts.push_back(*s);
    absl::StrAppend(&target, p ? "," : "", s->target);
  }
  auto client = MakeClient(target);
  for (;;) {  // warm-up: every part serves va (bounded by the client's deadline)
    auto r = client->GetRates(absl::MakeConstSpan(users.data(), o.batch),
                              absl::MakeConstSpan(items.data(), o.batch));
    if (!r.ok()) return std::fprintf(stderr, "warm-up: %s\n", r.status().ToString().c_str()), 1;
    if (r->snapshot_versions == std::vector<std::string>{va} && r->version_reasks == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // RSS sampler: steady = peak before the first flip; swap = peak after it.
  std::atomic<bool> stop_rss{false}, flipped{false};
  // [part][0 = VmRSS, 1 = RssAnon, 2 = RssFile]
  std::vector<std::array<uint64_t, 3>> steady(o.parts, {0, 0, 0}), peak(o.parts, {0, 0, 0});
  std::thread rss([&] {
    while (!stop_rss.load()) {
      for (uint32_t p = 0; p < o.parts; ++p) {
        std::array<uint64_t, 3>& m = flipped.load() ? peak[p] : steady[p];
        m[0] = std::max(m[0], RssKiB(parts[p].pid));
        m[1] = std::max(m[1], RssKiB(parts[p].pid, "RssAnon:"));
        m[2] = std::max(m[2], RssKiB(parts[p].pid, "RssFile:"));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  std::vector<double> server_cpu0(o.parts);
  for (uint32_t p = 0; p < o.parts; ++p) server_cpu0[p] = ProcessCpuSeconds(parts[p].pid);
  const double self_cpu0 = SelfCpuSeconds();
  const auto t0 = Clock::now();
  Tally tally;
  std::atomic<bool> stop{false};
  std::vector<std::thread> load;
  for (int t = 0; t < o.threads; ++t) {
    load.emplace_back([&, t] { LoadThread(*client, users, items, o.batch, t, stop, &tally); });
  }
  int swaps = 0;
  std::string now_current = va;
  while (swaps < o.swaps || tally.batches.load() < o.requests) {
    std::this_thread::sleep_for(std::chrono::duration<double>(o.swap_every_seconds));
    now_current = now_current == va ? vb : va;
    if (absl::Status st = SetCurrent(**store, now_current); !st.ok()) {
      std::fprintf(stderr, "flip: %s\n", st.ToString().c_str());
      break;
    }
    flipped = true;
    ++swaps;
  }
  // Let the last flip reach every part under load, then stop.
  std::this_thread::sleep_for(std::chrono::duration<double>(o.poll_seconds + 0.5));
  stop = true;
  for (auto& t : load) t.join();
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  const double self_cpu = SelfCpuSeconds() - self_cpu0;
  stop_rss = true;
  rss.join();
  // Anonymous RSS after the flips, once the last version's profile is done
  // (idle servers): growth with the number of flips shows here, a scan's
  // transient buffers only in the peak.
  std::this_thread::sleep_for(std::chrono::seconds(8));
  std::vector<uint64_t> anon_after(o.parts);
  for (uint32_t p = 0; p < o.parts; ++p) anon_after[p] = RssKiB(parts[p].pid, "RssAnon:");
  double server_cpu = 0;
  for (uint32_t p = 0; p < o.parts; ++p) {
    server_cpu += ProcessCpuSeconds(parts[p].pid) - server_cpu0[p];
  }
  for (const Server& s : parts) Stop(s);

  const uint64_t batches = tally.batches.load();
  std::printf(
      "\nswap campaign: %u part servers each following CURRENT on its own %.2f s poll "
      "(started %.2f s apart), --previous-version-hold-seconds=%g; CURRENT flipped %d times "
      "between %s and %s, every %.1f s; %d client threads, batch %zu\n"
      "  %llu routed batches = %llu pairs in %.1f s (%.0f batches/s); CPU: bench %.1f s, "
      "servers %.1f s\n"
      "  errors %llu; batches mixing versions %llu; batches re-asked for one version %llu "
      "(%llu part calls); fresh whole-batch re-asks %llu\n",
      o.parts, o.poll_seconds, o.poll_seconds / o.parts, o.hold_seconds, swaps, va.c_str(),
      vb.c_str(), o.swap_every_seconds, o.threads, o.batch,
      static_cast<unsigned long long>(batches), static_cast<unsigned long long>(batches * o.batch),
      wall, batches / wall, self_cpu, server_cpu,
      static_cast<unsigned long long>(tally.errors.load()),
      static_cast<unsigned long long>(tally.mixed.load()),
      static_cast<unsigned long long>(tally.reasked_batches.load()),
      static_cast<unsigned long long>(tally.reasks.load()),
      static_cast<unsigned long long>(tally.fresh_retries.load()));
  for (const auto& [v, k] : tally.by_version) {
    std::printf("  answered from %s: %llu batches\n", v.c_str(),
                static_cast<unsigned long long>(k));
  }
  for (uint32_t p = 0; p < o.parts; ++p) {
    auto ratio = [](uint64_t a, uint64_t b) { return b ? static_cast<double>(a) / b : 0.0; };
    std::printf(
        "  part %u RSS (sampled every 10 ms): steady %.1f MiB, peak across the flips %.1f MiB "
        "= %.2fx; anonymous %.1f -> %.1f MiB = %.2fx; file-backed (mapped index) %.1f -> %.1f "
        "MiB = %.2fx\n",
        p, steady[p][0] / 1024.0, peak[p][0] / 1024.0, ratio(peak[p][0], steady[p][0]),
        steady[p][1] / 1024.0, peak[p][1] / 1024.0, ratio(peak[p][1], steady[p][1]),
        steady[p][2] / 1024.0, peak[p][2] / 1024.0, ratio(peak[p][2], steady[p][2]));
  }
  for (uint32_t p = 0; p < o.parts; ++p) {
    std::printf("  part %u anonymous RSS 8 s after the last flip (idle): %.1f MiB = %.2fx steady\n",
                p, anon_after[p] / 1024.0,
                steady[p][1] ? static_cast<double>(anon_after[p]) / steady[p][1] : 0.0);
  }
  if (!tally.first_error.empty()) std::printf("  first error: %s\n", tally.first_error.c_str());
  SetCurrent(**store, vb).IgnoreError();
  return 0;
}

}  // namespace graphsieve
