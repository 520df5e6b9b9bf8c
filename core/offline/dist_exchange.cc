#include "core/offline/dist_exchange.h"

#include <malloc.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/io/partition.h"

namespace graphsieve {
namespace dist_internal {
namespace {

constexpr size_t kRowBytes = 8 + 8 + 1 + 4;         // user, item, label, pilot score
constexpr size_t kPairsPerRound = size_t{1} << 20;  // pairs gathered per rank per round (17-29 MB)

template <typename T>
void Put(std::string* out, const T& v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof v);
}

template <typename T>
T Take(const std::string& in, size_t* off) {
  T v;
  std::memcpy(&v, in.data() + *off, sizeof v);
  *off += sizeof v;
  return v;
}

// Rounds every rank runs: the largest count over the ranks, in chunks.
size_t Rounds(Communicator& comm, size_t count, size_t per_round) {
  double r = static_cast<double>((count + per_round - 1) / per_round);
  comm.AllReduceMax(absl::MakeSpan(&r, 1));
  return static_cast<size_t>(r);
}

// Ids of every rank, sorted and unique.
std::vector<uint64_t> AllIds(Communicator& comm, const std::vector<uint64_t>& mine) {
  const std::vector<std::string> parts =
      comm.AllGather(std::string(reinterpret_cast<const char*>(mine.data()), mine.size() * 8));
  std::vector<uint64_t> all;
  for (const std::string& p : parts) {
    const size_t n = p.size() / 8;
    const size_t old = all.size();
    all.resize(old + n);
    std::memcpy(all.data() + old, p.data(), n * 8);
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

// Local index -> global index of the same id.
std::vector<uint32_t> IndexMap(const std::vector<uint64_t>& local,
                               const std::vector<uint64_t>& global) {
  std::vector<uint32_t> map(local.size());
  for (size_t i = 0; i < local.size(); ++i) {
    map[i] = static_cast<uint32_t>(std::lower_bound(global.begin(), global.end(), local[i]) -
                                   global.begin());
  }
  return map;
}

void PutNames(std::string* out, const absl::flat_hash_map<uint64_t, std::string>& names) {
  Put<uint64_t>(out, names.size());
  for (const auto& [id, name] : names) {
    Put<uint64_t>(out, id);
    Put<uint64_t>(out, name.size());
    out->append(name);
  }
}

void TakeNames(const std::string& in, size_t* off,
               absl::flat_hash_map<uint64_t, std::string>* names) {
  const uint64_t n = Take<uint64_t>(in, off);
  for (uint64_t k = 0; k < n; ++k) {
    const uint64_t id = Take<uint64_t>(in, off), len = Take<uint64_t>(in, off);
    names->emplace(id, in.substr(*off, len));
    *off += len;
  }
}

void PutPairs(const PairTable& t, const PipelineResult& r, bool with_export, size_t begin,
              size_t end, std::string* out) {
  for (size_t p = begin; p < end; ++p) {
    Put(out, t.pair_user[p]);
    Put(out, t.pair_item[p]);
    Put(out, t.instances[p]);
    Put(out, t.negatives[p]);
    Put(out, t.label[p]);
    Put(out, r.rate[p]);
    if (with_export) {
      Put(out, r.geff[p]);
      Put(out, r.hardness[p]);
      Put(out, r.score[p]);
    }
  }
}

// Rank 0's whole table in (user, item) order, filled in place: every user's
// pairs live on one rank and arrive in item order, so the k-th pair of user u
// goes to first[u] + k. No per-rank copy is held besides the chunk in flight.
class Placer {
 public:
  Placer(const std::vector<uint64_t>& per_user, bool with_export, GatheredPairs* out)
      : with_export_(with_export), out_(out), next_(per_user.size()) {
    uint64_t total = 0;
    for (size_t u = 0; u < per_user.size(); ++u) next_[u] = total, total += per_user[u];
    PairTable& t = out->pairs;
    for (auto* v : {&t.pair_user, &t.pair_item, &t.instances, &t.negatives}) v->resize(total);
    t.label.resize(total);
    out->result.rate.resize(total);
    if (with_export) {
      for (auto* v : {&out->result.geff, &out->result.hardness, &out->result.score})
        v->resize(total);
    }
  }
  void Place(const PairTable& t, const PipelineResult& r, size_t p) {
    Put(t.pair_user[p], t.pair_item[p], t.instances[p], t.negatives[p], t.label[p], r.rate[p],
        with_export_ ? r.geff[p] : 0.f, with_export_ ? r.hardness[p] : 0.f,
        with_export_ ? r.score[p] : 0.f);
  }
  void PlaceChunk(const std::string& in) {
    for (size_t off = 0; off < in.size();) {
      const uint32_t u = Take<uint32_t>(in, &off), i = Take<uint32_t>(in, &off);
      const uint32_t inst = Take<uint32_t>(in, &off), neg = Take<uint32_t>(in, &off);
      const uint8_t label = Take<uint8_t>(in, &off);
      const float rate = Take<float>(in, &off);
      float g = 0, h = 0, sc = 0;
      if (with_export_)
        g = Take<float>(in, &off), h = Take<float>(in, &off), sc = Take<float>(in, &off);
      Put(u, i, inst, neg, label, rate, g, h, sc);
    }
  }

 private:
  void Put(uint32_t u, uint32_t i, uint32_t inst, uint32_t neg, uint8_t label, float rate, float g,
           float h, float sc) {
    const uint64_t at = next_[u]++;
    PairTable& t = out_->pairs;
    t.pair_user[at] = u, t.pair_item[at] = i, t.instances[at] = inst, t.negatives[at] = neg;
    t.label[at] = label;
    t.total_instances += inst;
    t.total_negatives += neg;
    out_->result.rate[at] = rate;
    if (with_export_)
      out_->result.geff[at] = g, out_->result.hardness[at] = h, out_->result.score[at] = sc;
  }
  bool with_export_;
  GatheredPairs* out_;
  std::vector<uint64_t> next_;
};

// Pairs per user (global index) over every rank.
std::vector<uint64_t> PairsPerUser(Communicator& comm, const PairTable& pairs) {
  std::vector<uint64_t> count(pairs.num_users(), 0);
  for (uint32_t u : pairs.pair_user) ++count[u];
  comm.AllReduceSum(absl::MakeSpan(count));
  return count;
}

// Frees the per-pair columns of the local table and result.
void ReleasePairs(PairTable* t, PipelineResult* r) {
  std::vector<uint32_t>().swap(t->pair_user);
  std::vector<uint32_t>().swap(t->pair_item);
  std::vector<uint32_t>().swap(t->instances);
  std::vector<uint32_t>().swap(t->negatives);
  std::vector<uint8_t>().swap(t->label);
  for (auto* v : {&r->rate, &r->geff, &r->hardness, &r->score}) std::vector<float>().swap(*v);
}

// Where the rows from each rank start among the rows this rank will hold,
// and their total: the counts from every rank to every rank, all-reduced, so
// the columns are sized once (no doubling growth) and rows from rank s land
// at their final place whatever the rounds.
std::vector<uint64_t> FirstRowFrom(Communicator& comm, const ImpressionLog& log, uint64_t* total) {
  const int n = comm.size(), me = comm.rank();
  std::vector<uint64_t> matrix(size_t(n) * n, 0);  // [source][destination]
  for (uint64_t u : log.user_ids) ++matrix[size_t(me) * n + PartitionOfUser(u, n)];
  comm.AllReduceSum(absl::MakeSpan(matrix));
  std::vector<uint64_t> first(n, 0);
  *total = 0;
  for (int r = 0; r < n; ++r) first[r] = *total, *total += matrix[size_t(r) * n + me];
  return first;
}

}  // namespace

void RouteNames(Communicator& comm, ImpressionLog* log, ImpressionLog* names) {
  const int n = comm.size();
  if (n == 1) {
    names->user_names = std::move(log->user_names);
    names->item_names = std::move(log->item_names);
    return;
  }
  // A user's name goes to the rank that will hold the user's rows (the
  // partition ExchangeRowsByUser uses); a name read on several ranks arrives
  // several times, the same text each time.
  std::vector<absl::flat_hash_map<uint64_t, std::string>> by_rank(n);
  for (auto& [id, name] : log->user_names) {
    by_rank[PartitionOfUser(id, n)].emplace(id, std::move(name));
  }
  absl::flat_hash_map<uint64_t, std::string>().swap(log->user_names);
  std::vector<std::string> out(n);
  for (int r = 0; r < n; ++r) {
    PutNames(&out[r], by_rank[r]);
    absl::flat_hash_map<uint64_t, std::string>().swap(by_rank[r]);
  }
  for (const std::string& in : comm.AllToAll(out)) {
    size_t off = 0;
    TakeNames(in, &off, &names->user_names);
  }
  std::string mine;
  PutNames(&mine, log->item_names);
  absl::flat_hash_map<uint64_t, std::string>().swap(log->item_names);
  for (const std::string& in : comm.AllGather(mine)) {
    size_t off = 0;
    TakeNames(in, &off, &names->item_names);
  }
}

void ExchangeRowsByUser(Communicator& comm, ImpressionLog* log, size_t rows_per_round) {
  const int n = comm.size(), me = comm.rank();
  // One rank: every row is already this rank's, in the order the exchange
  // would leave it (rank order, file order) — nothing to copy.
  if (n == 1) return;
  double any_pilot = log->pilot_scores.empty() ? 0 : 1;  // a rank may have read no file
  comm.AllReduceMax(absl::MakeSpan(&any_pilot, 1));
  const bool pilot = any_pilot > 0;
  uint64_t total = 0;
  std::vector<uint64_t> at = FirstRowFrom(comm, *log, &total);  // next row of `mine` from rank s
  ImpressionLog mine;
  mine.user_ids.resize(total);
  mine.item_ids.resize(total);
  mine.labels.resize(total);
  if (pilot) mine.pilot_scores.resize(total);
  auto put = [&](size_t i, char* o) {
    const float score = log->pilot_scores.empty() ? 0.0f : log->pilot_scores[i];
    std::memcpy(o, &log->user_ids[i], 8);
    std::memcpy(o + 8, &log->item_ids[i], 8);
    std::memcpy(o + 16, &log->labels[i], 1);
    std::memcpy(o + 17, &score, 4);
  };
  auto take = [&](const char* p, uint64_t k) {
    std::memcpy(&mine.user_ids[k], p, 8);
    std::memcpy(&mine.item_ids[k], p + 8, 8);
    std::memcpy(&mine.labels[k], p + 16, 1);
    if (pilot) std::memcpy(&mine.pilot_scores[k], p + 17, 4);
  };
  const size_t rounds = Rounds(comm, log->size(), rows_per_round);
  std::vector<uint32_t> dest;
  char own[kRowBytes];
  for (size_t round = 0; round < rounds; ++round) {
    const size_t begin = std::min(log->size(), round * rows_per_round);
    const size_t end = std::min(log->size(), begin + rows_per_round);
    // Destinations and counts first, so each rank's buffer is sized once and
    // filled with fixed-size copies; this rank's own rows skip the buffers.
    dest.resize(end - begin);
    std::vector<size_t> count(n, 0);
    for (size_t i = begin; i < end; ++i)
      ++count[dest[i - begin] = PartitionOfUser(log->user_ids[i], n)];
    std::vector<std::string> out(n);
    std::vector<char*> o(n);
    for (int r = 0; r < n; ++r) {
      if (r != me) out[r].resize(count[r] * kRowBytes);
      o[r] = out[r].data();
    }
    for (size_t i = begin; i < end; ++i) {
      const uint32_t d = dest[i - begin];
      if (d == uint32_t(me)) {
        put(i, own);
        take(own, at[me]++);
      } else {
        put(i, o[d]);
        o[d] += kRowBytes;
      }
    }
    std::vector<std::string> got = comm.AllToAll(out);
    std::vector<std::string>().swap(out);
    for (int r = 0; r < n; ++r) {
      if (r == me) continue;
      const std::string& in = got[r];
      for (size_t off = 0; off + kRowBytes <= in.size(); off += kRowBytes)
        take(in.data() + off, at[r]++);
    }
  }
  log->user_ids = std::move(mine.user_ids);
  log->item_ids = std::move(mine.item_ids);
  log->labels = std::move(mine.labels);
  log->pilot_scores = std::move(mine.pilot_scores);
  ::malloc_trim(0);  // the round buffers' pages back to the system before the pair table
}

absl::Status BuildGlobalPairTable(Communicator& comm, int threads, ImpressionLog* log,
                                  PairTable* pairs) {
  absl::Status status;
  if (log->size() > 0) {  // a rank may hold no user at all
    absl::StatusOr<PairTable> t = BuildPairTableConsuming(log, threads);
    if (t.ok())
      *pairs = std::move(*t);
    else
      status = t.status();
  }
  std::vector<uint64_t>().swap(log->user_ids);
  std::vector<uint64_t>().swap(log->item_ids);
  std::vector<uint8_t>().swap(log->labels);
  std::vector<float>().swap(log->pilot_scores);
  ::malloc_trim(0);  // the rows' pages back before the pipeline
  status = AgreeOnStatus(comm, status);
  if (!status.ok() || comm.size() == 1) return status;  // one rank: the indices are global
  std::vector<uint64_t> users = AllIds(comm, pairs->user_ids),
                        items = AllIds(comm, pairs->item_ids);
  const std::vector<uint32_t> umap = IndexMap(pairs->user_ids, users),
                              imap = IndexMap(pairs->item_ids, items);
  for (uint32_t& u : pairs->pair_user) u = umap[u];
  for (uint32_t& i : pairs->pair_item) i = imap[i];
  pairs->user_ids = std::move(users);
  pairs->item_ids = std::move(items);
  return absl::OkStatus();
}

PositiveGraph AllGatherPositiveGraph(Communicator& comm, const PairTable& pairs) {
  std::string mine;
  for (size_t p = 0; p < pairs.num_pairs(); ++p) {
    if (!pairs.label[p]) continue;
    Put(&mine, (uint64_t{pairs.pair_user[p]} << 32) | pairs.pair_item[p]);
  }
  std::vector<uint64_t> edges;
  for (const std::string& part : comm.AllGather(mine)) {
    const size_t old = edges.size();
    edges.resize(old + part.size() / 8);
    std::memcpy(edges.data() + old, part.data(), part.size());
  }
  std::sort(edges.begin(), edges.end());
  PairTable positives;
  positives.user_ids = pairs.user_ids;
  positives.item_ids = pairs.item_ids;
  positives.pair_user.resize(edges.size());
  positives.pair_item.resize(edges.size());
  positives.label.assign(edges.size(), 1);
  for (size_t e = 0; e < edges.size(); ++e) {
    positives.pair_user[e] = static_cast<uint32_t>(edges[e] >> 32);
    positives.pair_item[e] = static_cast<uint32_t>(edges[e]);
  }
  // Indices come from this table's own id lists: the build cannot fail.
  return *BuildPositiveGraph(positives);
}

// Everything of the local result but what the gather sends.
void KeepOnlyGathered(bool with_export, PairTable* pairs, PipelineResult* result) {
  std::vector<float>().swap(result->uncertainty);
  std::vector<float>().swap(result->propagated_score);
  std::vector<float>().swap(pairs->pilot_mean);
  if (!with_export) {
    std::vector<float>().swap(result->geff);
    std::vector<float>().swap(result->hardness);
    std::vector<float>().swap(result->score);
  }
}

void GatherToRoot(Communicator& comm, bool with_export, PairTable pairs, PipelineResult result,
                  GatheredPairs* out) {
  const bool root = comm.rank() == 0;
  KeepOnlyGathered(with_export, &pairs, &result);
  if (comm.size() == 1) {  // one rank: already the whole table, in order
    out->pairs = std::move(pairs);
    out->result = std::move(result);
    return;
  }
  const std::vector<uint64_t> per_user = PairsPerUser(comm, pairs);
  std::unique_ptr<Placer> placer;
  if (root) {  // rank 0 places its own pairs first, then frees them
    placer = std::make_unique<Placer>(per_user, with_export, out);
    for (size_t p = 0; p < pairs.num_pairs(); ++p) placer->Place(pairs, result, p);
    ReleasePairs(&pairs, &result);
  }
  const size_t rounds = Rounds(comm, pairs.num_pairs(), kPairsPerRound);
  for (size_t round = 0; round < rounds; ++round) {
    const size_t begin = std::min(pairs.num_pairs(), round * kPairsPerRound);
    const size_t end = std::min(pairs.num_pairs(), begin + kPairsPerRound);
    std::string chunk;
    PutPairs(pairs, result, with_export, begin, end, &chunk);
    const std::vector<std::string> got = comm.GatherToRoot(chunk);
    for (size_t r = 1; r < got.size(); ++r) placer->PlaceChunk(got[r]);
  }
  if (!root) return;
  out->pairs.user_ids = std::move(pairs.user_ids);
  out->pairs.item_ids = std::move(pairs.item_ids);
  PipelineResult& r = out->result;
  r.nodes = std::move(result.nodes);
  r.model = result.model;
  r.achieved_negative_mean_rate = result.achieved_negative_mean_rate;
  r.num_components = result.num_components;
  r.positive_pairs = result.positive_pairs;
  r.solves = std::move(result.solves);
  r.uncertainty_iterations = result.uncertainty_iterations;
  r.score_iterations = result.score_iterations;
  r.uncertainty_converged = result.uncertainty_converged;
  r.score_converged = result.score_converged;
  r.resistance_route = result.resistance_route;
  r.rho = result.rho;
  r.timings = std::move(result.timings);
}

}  // namespace dist_internal
}  // namespace graphsieve
