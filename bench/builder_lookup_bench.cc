// graphsieve-bench-lookup: point-lookup throughput of the snapshot's pairs
// table per table format, on the same synthetic KuaiRec-sized pair set
// (default 11.7M pairs, 7,176 users x 10,728 items).
//
// For each format: write + publish a real snapshot (timed, bytes/pair), open
// it with full verification (timed), then time SnapshotReader::LookupPairs
// with batch 1 ("Get") and batch 1024 ("MultiGet", sorted batched path), with
// 1 and 2 threads, through RocksDB (every format) and through the server's
// in-memory index (block format). The baseline, measured in the same run, is an in-memory
// absl::flat_hash_map lookup of the same keys (the upper bound for any
// on-disk format). Prints lookups/s and ratios. Not a test: no assertions.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "core/snapshot/memory_index.h"
#include "core/snapshot/snapshot_reader.h"
#include "core/snapshot/snapshot_store.h"
#include "core/snapshot/snapshot_writer.h"
#include "core/snapshot/version_opener.h"

ABSL_FLAG(int64_t, pairs, 11700000, "Approximate number of pairs.");
ABSL_FLAG(int32_t, users, 7176, "Users.");
ABSL_FLAG(int32_t, items, 10728, "Items.");
ABSL_FLAG(int64_t, lookups, 4000000,
          "Lookups per batched measurement (batch-1 runs use a quarter).");
ABSL_FLAG(double, hit_fraction, 0.9,
          "Fraction of queried pairs that are stored (the rest are unseen pairs).");
ABSL_FLAG(std::string, formats, "block,cuckoo", "Table formats to measure.");
ABSL_FLAG(std::string, dir, "",
          "Scratch directory (default: a fresh one under /tmp, removed at the end).");
ABSL_FLAG(uint64_t, seed, 1, "Seed.");

namespace graphsieve {
namespace {

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Data {
  PairTable pairs;
  PipelineResult result;
  std::vector<uint64_t> qu, qi;  // query stream
};

Data MakeData() {
  Data d;
  std::mt19937_64 rng(absl::GetFlag(FLAGS_seed));
  const int users = absl::GetFlag(FLAGS_users), items = absl::GetFlag(FLAGS_items);
  const double p = std::min(1.0, double(absl::GetFlag(FLAGS_pairs)) / (double(users) * items));
  PairTable& t = d.pairs;
  for (int u = 0; u < users; ++u) t.user_ids.push_back(1000 + 3 * uint64_t(u));
  for (int i = 0; i < items; ++i) t.item_ids.push_back(500000 + 7 * uint64_t(i));
  std::uniform_real_distribution<double> unit(0, 1);
  for (uint32_t u = 0; u < uint32_t(users); ++u) {
    for (uint32_t i = 0; i < uint32_t(items); ++i) {
      if (unit(rng) >= p) continue;
      t.pair_user.push_back(u);
      t.pair_item.push_back(i);
      d.result.rate.push_back(float(0.01 + 0.99 * unit(rng)));
    }
  }
  const size_t n = t.pair_user.size();
  t.label.assign(n, 0);
  t.instances.assign(n, 1);
  t.negatives.assign(n, 1);
  t.total_instances = t.total_negatives = n;
  NodeTable& nodes = d.result.nodes;
  nodes.sketch_dim = 8;
  d.result.model.sketch_dim = 8;
  for (int k = 0; k < users + items; ++k) {
    nodes.ids.push_back(k < users ? t.user_ids[k] : t.item_ids[k - users]);
    nodes.is_item.push_back(k >= users);
    nodes.records.push_back(NodeRecord{});
  }
  nodes.sketch.assign(nodes.ids.size() * 8, 0.5f);
  const int64_t q = absl::GetFlag(FLAGS_lookups);
  const double hit = absl::GetFlag(FLAGS_hit_fraction);
  for (int64_t k = 0; k < q; ++k) {
    if (unit(rng) < hit) {
      size_t j = rng() % n;
      d.qu.push_back(t.user_ids[t.pair_user[j]]);
      d.qi.push_back(t.item_ids[t.pair_item[j]]);
    } else {  // an item id between stored ids: never stored
      d.qu.push_back(t.user_ids[rng() % users]);
      d.qi.push_back(t.item_ids[rng() % items] + 1);
    }
  }
  return d;
}

// Runs `threads` threads over disjoint slices of the query stream.
template <typename Fn>
double Throughput(const Data& d, int threads, size_t batch, size_t total, Fn fn) {
  std::vector<std::thread> ts;
  auto t0 = Clock::now();
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      const size_t begin = total * t / threads, end = total * (t + 1) / threads;
      std::unique_ptr<bool[]> found(new bool[batch]);
      std::vector<float> rates(batch);
      for (size_t k = begin; k + batch <= end; k += batch) fn(k, batch, found.get(), rates.data());
    });
  }
  for (auto& t : ts) t.join();
  return double(total) / Since(t0);
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage("Measures snapshot point-lookup throughput per table format.");
  absl::ParseCommandLine(argc, argv);
  std::string dir = absl::GetFlag(FLAGS_dir);
  bool remove_dir = false;
  if (dir.empty()) {
    std::string templ = "/tmp/graphsieve-bench-lookup-XXXXXX";
    dir = ::mkdtemp(templ.data());
    remove_dir = true;
  }
  auto t0 = Clock::now();
  Data d = MakeData();
  const size_t n = d.pairs.num_pairs(), total = d.qu.size();
  std::printf(
      "data: %zu pairs, %zu users, %zu items; %zu queries (hit fraction %.2f); built in %.1fs\n", n,
      d.pairs.num_users(), d.pairs.num_items(), total, absl::GetFlag(FLAGS_hit_fraction),
      Since(t0));

  // Baseline: in-memory hash map.
  absl::flat_hash_map<std::pair<uint64_t, uint64_t>, float> map;
  map.reserve(n);
  for (size_t j = 0; j < n; ++j) {
    map[{d.pairs.user_ids[d.pairs.pair_user[j]], d.pairs.item_ids[d.pairs.pair_item[j]]}] =
        d.result.rate[j];
  }
  double base[3];
  for (int threads : {1, 2}) {
    base[threads] = Throughput(d, threads, 1024, total, [&](size_t k, size_t b, bool* f, float* r) {
      for (size_t x = 0; x < b; ++x) {
        auto it = map.find({d.qu[k + x], d.qi[k + x]});
        f[x] = it != map.end();
        r[x] = f[x] ? it->second : 0;
      }
    });
    std::printf("baseline in-memory flat_hash_map, %d thread(s): %.2fM lookups/s\n", threads,
                base[threads] / 1e6);
  }
  std::printf("\n%-15s %9s %9s %9s %12s %12s %12s %12s\n", "format/lookup", "write_s", "B/pair",
              "open_s", "get_1t", "get_2t", "mget1024_1t", "mget1024_2t");
  double block_mget2 = 0;
  for (absl::string_view name : absl::StrSplit(absl::GetFlag(FLAGS_formats), ',')) {
    auto format = snapshot::ParseTableFormat(name);
    if (!format.ok()) {
      std::fprintf(stderr, "--formats: %s\n", std::string(format.status().message()).c_str());
      return 2;
    }
    const std::string root = dir + "/" + std::string(name);
    auto store = SnapshotStore::Create({root, true});
    auto lock = (*store)->AcquirePublishLock(0);
    snapshot::ManifestInfo info;
    info.version = (*store)->NewVersionId(**lock, absl::Now(), 1);
    info.created_at = "bench";
    info.parameters = {{"method", "maec"}, {"resistance", "sketch"}, {"alpha", 0.2},
                       {"floor", 0.01},    {"gamma", 0.5},           {"sketch_dim", 8},
                       {"seed", 1}};
    SnapshotWriterOptions wo;
    wo.pairs_format = *format;
    t0 = Clock::now();
    auto stats = WriteSnapshotDir((*store)->TempDir(info.version), d.pairs, d.result, info, wo);
    if (!stats.ok()) {
      std::fprintf(stderr, "write %s: %s\n", std::string(name).c_str(),
                   stats.status().ToString().c_str());
      return 1;
    }
    absl::Status s = (*store)->Publish(**lock, info.version);
    const double write_s = Since(t0);
    // RocksDB point reads for every format; the server's in-memory index
    // (built by a scan) for the block-based format it is meant for.
    for (LookupMode mode : {LookupMode::kRocksDb, LookupMode::kMemory}) {
      if (mode == LookupMode::kMemory && name != "block") continue;
      t0 = Clock::now();
      SnapshotReaderOptions ro;
      ro.block_cache_bytes = size_t{1} << 30;
      ro.lookup = mode;
      auto reader = VersionOpener().OpenStored(root, info.version, ro);
      if (!s.ok() || !reader.ok()) {
        std::fprintf(stderr, "open %s: %s\n", std::string(name).c_str(),
                     reader.status().ToString().c_str());
        return 1;
      }
      const double open_s = Since(t0);
      const SnapshotReader& r = **reader;
      auto lookup = [&](size_t k, size_t b, bool* f, float* rt) {
        (void)r.LookupPairs(absl::MakeConstSpan(&d.qu[k], b), absl::MakeConstSpan(&d.qi[k], b),
                            absl::MakeSpan(f, b), absl::MakeSpan(rt, b));
      };
      double get[3], mget[3];
      for (int threads : {1, 2}) {
        get[threads] = Throughput(d, threads, 1, total / 4, lookup);
        mget[threads] = Throughput(d, threads, 1024, total, lookup);
      }
      // Correctness check of the batched path against the map.
      size_t wrong = 0;
      {
        const size_t b = 1024;
        std::unique_ptr<bool[]> f(new bool[b]);
        std::vector<float> rt(b);
        for (size_t k = 0; k + b <= std::min<size_t>(total, 64 * b); k += b) {
          lookup(k, b, f.get(), rt.data());
          for (size_t x = 0; x < b; ++x) {
            auto it = map.find({d.qu[k + x], d.qi[k + x]});
            if (f[x] != (it != map.end()) || (f[x] && rt[x] != it->second)) ++wrong;
          }
        }
      }
      const std::string label = absl::StrCat(name, "/", LookupModeName(mode));
      std::printf("%-15s %9.2f %9.2f %9.2f %11.2fM %11.2fM %11.2fM %11.2fM%s\n", label.c_str(),
                  write_s, double(stats->db_bytes) / n, open_s, get[1] / 1e6, get[2] / 1e6,
                  mget[1] / 1e6, mget[2] / 1e6, wrong ? "  WRONG RESULTS" : "");
      if (mode == LookupMode::kRocksDb) {
        std::printf("                write: sst %.2fs, ingest/compact %.2fs, checksum+sync %.2fs\n",
                    stats->seconds_sst, stats->seconds_ingest, stats->seconds_checksum);
      } else {
        std::printf("                in-memory index: %.0f MiB (%.1f B/pair)\n",
                    double(ServingIndex(r)->memory_bytes()) / (1 << 20),
                    double(ServingIndex(r)->memory_bytes()) / n);
      }
      std::printf(
          "                ratio to in-memory flat_hash_map baseline (mget1024): 1t %.3f, "
          "2t %.3f\n",
          mget[1] / base[1], mget[2] / base[2]);
      if (label == "block/rocksdb") block_mget2 = mget[2];
      if (label != "block/rocksdb" && block_mget2 > 0) {
        std::printf("                ratio to block/rocksdb (mget1024, 2t): %.2fx\n",
                    mget[2] / block_mget2);
      }
    }
  }
  if (remove_dir) std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace graphsieve

int main(int argc, char** argv) { return graphsieve::Main(argc, argv); }
