#include "core/offline/build_pilot.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/maec/pipeline_options.h"

namespace graphsieve {
namespace build_internal {
namespace {

// One pair as it travels between ranks.
struct PairRecord {
  uint32_t user, item, instances, positives;
};
static_assert(sizeof(PairRecord) == 16);

void Append(PilotData* d, const PairRecord& r) {
  d->user.push_back(r.user), d->item.push_back(r.item);
  d->instances.push_back(r.instances), d->positives.push_back(r.positives);
}

// Every rank's pairs in the single process's order: (user index, item
// index), the order of the pair table of one process. One rank: the table.
PilotData GatherPilotData(Communicator& comm, const PairTable& pairs, const PilotOptions& o) {
  if (comm.size() == 1) return PilotDataFromPairs(pairs, o);
  PilotData d;
  d.num_users = static_cast<uint32_t>(pairs.num_users());
  d.num_items = static_cast<uint32_t>(pairs.num_items());
  const size_t n = pairs.num_pairs();
  std::vector<PairRecord> mine(n);
  for (size_t p = 0; p < n; ++p) {
    mine[p] = {pairs.pair_user[p], pairs.pair_item[p], pairs.instances[p],
               pairs.instances[p] - pairs.negatives[p]};
  }
  std::vector<PairRecord> all;
  if (comm.size() == 1) {
    all = std::move(mine);
  } else {
    const std::vector<std::string> parts = comm.AllGather(
        std::string_view(reinterpret_cast<const char*>(mine.data()), n * sizeof(PairRecord)));
    size_t total = 0;
    for (const std::string& part : parts) total += part.size() / sizeof(PairRecord);
    all.resize(total);
    size_t at = 0;
    for (const std::string& part : parts) {
      std::memcpy(all.data() + at, part.data(), part.size());
      at += part.size() / sizeof(PairRecord);
    }
    std::sort(all.begin(), all.end(), [](const PairRecord& a, const PairRecord& b) {
      return a.user != b.user ? a.user < b.user : a.item < b.item;
    });
  }
  const size_t total = all.size();
  d.user.reserve(total), d.item.reserve(total);
  d.instances.reserve(total), d.positives.reserve(total), d.fold.reserve(total);
  for (const PairRecord& r : all) {
    Append(&d, r);
    d.fold.push_back(static_cast<uint8_t>(
        PilotFold(pairs.user_ids[r.user], pairs.item_ids[r.item], o.seed, o.folds)));
  }
  return d;
}

// Every rank's fitted models to every rank: model m from rank m mod N.
absl::Status ShareModels(Communicator& comm, std::vector<PilotFactors>* models) {
  if (comm.size() == 1) return absl::OkStatus();
  std::string mine;
  for (size_t m = comm.rank(); m < models->size(); m += comm.size()) {
    const std::string bytes = SerializePilotFactors((*models)[m]);
    const uint64_t len = bytes.size();
    mine.append(reinterpret_cast<const char*>(&len), sizeof len);
    mine.append(bytes);
  }
  const std::vector<std::string> parts = comm.AllGather(mine);
  for (size_t r = 0; r < parts.size(); ++r) {
    size_t off = 0;
    for (size_t m = r; m < models->size(); m += comm.size()) {
      uint64_t len = 0;
      if (off + sizeof len > parts[r].size()) {
        return absl::DataLossError(absl::StrCat("pilot: rank ", r, " sent too few models"));
      }
      std::memcpy(&len, parts[r].data() + off, sizeof len);
      off += sizeof len;
      if (off + len > parts[r].size()) {
        return absl::DataLossError(absl::StrCat("pilot: rank ", r, "'s model ", m, " truncated"));
      }
      absl::StatusOr<PilotFactors> f =
          ParsePilotFactors(std::string_view(parts[r].data() + off, len));
      if (!f.ok()) return f.status();
      if (r != static_cast<size_t>(comm.rank())) (*models)[m] = std::move(*f);
      off += len;
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool UsesBuiltInPilot(const BuildOptions& o) {
  return NeedsPilot(o.pipeline.method) && o.reader.pilot_column.empty();
}

PilotOptions BuiltInPilotOptions(const BuildOptions& o) {
  PilotOptions p = o.pilot;
  p.seed = o.pipeline.seed;
  p.threads = o.pipeline.threads;
  return p;
}

absl::Status FitBuiltInPilot(const BuildOptions& options, Communicator& comm, PairTable* pairs,
                             PilotFactors* full, double* cross_fitted_log_loss) {
  const PilotOptions o = BuiltInPilotOptions(options);
  const PilotData data = GatherPilotData(comm, *pairs, o);
  absl::StatusOr<std::vector<PilotFactors>> models =
      FitPilotModels(data, o, comm.rank(), comm.size());
  absl::Status s = AgreeOnStatus(comm, models.status());
  if (!s.ok()) return s;
  s = AgreeOnStatus(comm, ShareModels(comm, &*models));
  if (!s.ok()) return s;
  const std::vector<float> all_scores = CrossFittedScores(data, *models);
  *cross_fitted_log_loss = CrossFittedLogLoss(data, all_scores);
  // This rank's pairs, by their place in the gathered order.
  pairs->pilot_mean.resize(pairs->num_pairs());
  size_t at = 0;
  for (size_t p = 0; p < pairs->num_pairs(); ++p) {
    const auto key = [](uint32_t u, uint32_t i) { return (uint64_t{u} << 32) | i; };
    const uint64_t want = key(pairs->pair_user[p], pairs->pair_item[p]);
    while (at < data.size() && key(data.user[at], data.item[at]) < want) ++at;
    pairs->pilot_mean[p] = all_scores[at];
  }
  *full = std::move(models->back());
  return absl::OkStatus();
}

void AttachPilotRows(const PilotFactors& full, PipelineResult* result) {
  NodeTable& nt = result->nodes;
  const size_t nodes = nt.ids.size();
  const size_t users = full.user_rows.size() / (full.dim + 1);
  const int old_dim = nt.sketch_dim, row = full.dim + 1, dim = old_dim + row;
  std::vector<float> rows(nodes * dim);
  for (size_t n = 0; n < nodes; ++n) {
    float* out = rows.data() + n * dim;
    if (old_dim > 0) std::copy_n(nt.sketch.data() + n * old_dim, old_dim, out);
    const float* pilot = n < users ? full.UserRow(static_cast<uint32_t>(n))
                                   : full.ItemRow(static_cast<uint32_t>(n - users));
    std::copy_n(pilot, row, out + old_dim);
  }
  nt.sketch = std::move(rows);
  nt.sketch_dim = dim;
  result->model.sketch_dim = dim;
  result->model.pilot_dim = full.dim;
  result->model.pilot_bias = full.bias;
}

}  // namespace build_internal
}  // namespace graphsieve
