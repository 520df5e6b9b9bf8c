#include "core/model/pilot.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <numeric>
#include <thread>

#include "absl/strings/str_cat.h"
#include "core/model/pilot_row.h"

namespace graphsieve {
namespace {

// SplitMix64: the finaliser and the sequential generator (all randomness
// from the seed; the same factors on every machine).
uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    const uint64_t s = state_;
    state_ += 0x9e3779b97f4a7c15ULL;
    return Mix64(s);  // Mix64 adds the increment first: SplitMix64's next value
  }
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  uint64_t Below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
  }
  double Normal() {  // Box–Muller, one draw per call
    const double u1 = 1.0 - Uniform(), u2 = Uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }

 private:
  uint64_t state_;
};

// Adagrad state of one model: one accumulator per parameter, rows as the factors.
struct Accumulators {
  double bias;
  std::vector<float> user_rows, item_rows;
};

// One training pair, weighted: n and y are the instances and positives times
// the pair's weight (1, or 1/negative_rate for a sampled all-negative pair).
struct TrainRecord {
  uint32_t user, item;
  float n, y;
  uint32_t fold;
};

// The training order. Each record has a seeded hash key of its pair; the
// records are sorted by it and the key's top bits put them into blocks (about
// 1024 records each); each epoch visits the blocks in a new seeded order,
// the records of a block in key order. The place of a pair in a model's
// order depends on the pairs the model trains on only, never on whether a
// pair it leaves out (its held-out fold) was sampled: no label of the fold
// reaches the model that scores it, not even through the order.
constexpr size_t kBlock = 1024;

struct TrainingSetT {
  std::vector<TrainRecord> records;
  std::vector<size_t> block_start;  // blocks + 1 offsets into records
};

// Every pair with a positive, and each all-negative pair with probability
// negative_rate (a hash of its indices and the seed) at weight 1/rate. The
// same set on every rank (the indices are global).
TrainingSetT TrainingSet(const PilotData& d, const PilotOptions& o) {
  TrainingSetT out;
  std::vector<std::pair<uint64_t, TrainRecord>> keyed;
  const double rate = o.negative_rate > 0.0 ? o.negative_rate : AutoNegativeRate(d);
  const float weight = static_cast<float>(1.0 / rate);
  const uint64_t sample_key = Mix64(o.seed ^ 0x5a3b1eULL), order_key = Mix64(o.seed ^ 0x0bdeULL);
  for (size_t p = 0; p < d.size(); ++p) {
    const bool positive = d.positives[p] > 0;
    if (!positive && rate < 1.0) {
      const uint64_t h = Mix64(Mix64(sample_key ^ d.user[p]) ^ d.item[p]);
      if (static_cast<double>(h >> 11) * 0x1.0p-53 >= rate) continue;
    }
    const float w = positive || rate >= 1.0 ? 1.0f : weight;
    keyed.push_back(
        {Mix64(Mix64(order_key ^ d.user[p]) ^ d.item[p]),
         {d.user[p], d.item[p], float(d.instances[p]) * w, float(d.positives[p]), d.fold[p]}});
  }
  std::sort(keyed.begin(), keyed.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  // The block count from the label-free expected size: every pair at the rate.
  const uint64_t blocks =
      std::max<uint64_t>(1, static_cast<uint64_t>(double(d.size()) * rate / kBlock));
  out.records.reserve(keyed.size());
  out.block_start.assign(blocks + 1, keyed.size());
  uint64_t next_block = 0;
  for (size_t r = 0; r < keyed.size(); ++r) {
    const uint64_t b =
        static_cast<uint64_t>((static_cast<unsigned __int128>(keyed[r].first) * blocks) >> 64);
    while (next_block <= b) out.block_start[next_block++] = r;
    out.records.push_back(keyed[r].second);
  }
  return out;
}

// One Adagrad step of a row pair (1 + dim floats each: bias, embedding) for
// d(loss)/dg = grad; the embedding's gradients use the rows before the step.
void StepRows(float* __restrict pu, float* __restrict qi, float* __restrict au,
              float* __restrict ai, int dim, float grad, float lr, bool move_u, bool move_i) {
  if (move_u) au[0] += grad * grad, pu[0] -= lr * grad / std::sqrt(au[0]);
  if (move_i) ai[0] += grad * grad, qi[0] -= lr * grad / std::sqrt(ai[0]);
  if (move_u && move_i) {
    for (int k = 1; k <= dim; ++k) {
      const float gu = grad * qi[k], gi = grad * pu[k];
      au[k] += gu * gu;
      ai[k] += gi * gi;
      pu[k] -= lr * gu / std::sqrt(au[k]);
      qi[k] -= lr * gi / std::sqrt(ai[k]);
    }
  } else if (move_u) {
    for (int k = 1; k <= dim; ++k) {
      const float gu = grad * qi[k];
      au[k] += gu * gu;
      pu[k] -= lr * gu / std::sqrt(au[k]);
    }
  } else if (move_i) {
    for (int k = 1; k <= dim; ++k) {
      const float gi = grad * pu[k];
      ai[k] += gi * gi;
      qi[k] -= lr * gi / std::sqrt(ai[k]);
    }
  }
}

// Which parameters an epoch moves: all (a fit), or only the rows of the
// nodes not marked fixed (a fold-in; the global bias stays).
struct Movable {
  const std::vector<uint8_t>* user_fixed = nullptr;
  const std::vector<uint8_t>* item_fixed = nullptr;
  bool bias = true;
};

// One pass over the records not in fold `skip` (skip > any fold: all).
void Epoch(const TrainingSetT& set, uint32_t skip, uint64_t seed, int epoch, float lr,
           const Movable& movable, PilotFactors* f, Accumulators* acc) {
  const std::vector<TrainRecord>& train = set.records;
  const size_t blocks = set.block_start.size() - 1;
  std::vector<uint32_t> order(blocks);
  std::iota(order.begin(), order.end(), 0u);
  Rng rng(Mix64(seed) ^ Mix64(0x5eedULL + static_cast<uint64_t>(epoch)));
  for (size_t i = blocks; i > 1; --i) std::swap(order[i - 1], order[rng.Below(i)]);
  const int dim = f->dim, row = dim + 1;
  for (uint32_t b : order) {
    for (size_t r = set.block_start[b]; r < set.block_start[b + 1]; ++r) {
      const TrainRecord& t = train[r];
      if (t.fold == skip) continue;
      float* pu = f->user_rows.data() + size_t(t.user) * row;
      float* qi = f->item_rows.data() + size_t(t.item) * row;
      float dot = 0.0f;
      for (int k = 1; k <= dim; ++k) dot += pu[k] * qi[k];
      const double g = f->bias + double(pu[0]) + double(qi[0]) + double(dot);
      // d(loss)/dg = n·σ(g) − y: the pair's instances at once.
      const float grad = static_cast<float>(t.n * PilotSigmoid(g) - t.y);
      if (movable.bias) {
        acc->bias += static_cast<double>(grad) * grad;
        f->bias -= lr * grad / std::sqrt(acc->bias);
      }
      const bool move_u = movable.user_fixed == nullptr || !(*movable.user_fixed)[t.user];
      const bool move_i = movable.item_fixed == nullptr || !(*movable.item_fixed)[t.item];
      StepRows(pu, qi, acc->user_rows.data() + size_t(t.user) * row,
               acc->item_rows.data() + size_t(t.item) * row, dim, grad, lr, move_u, move_i);
    }
  }
}

// One proximal Adagrad step of the L2 penalty per coordinate.
// `fixed` (may be null) marks the rows (of param->size() / fixed->size()
// floats) that stay.
void ApplyL2(float step, const std::vector<float>& accum, std::vector<float>* param,
             const std::vector<uint8_t>* fixed) {
  if (step == 0.0f) return;
  const size_t row = fixed == nullptr || fixed->empty() ? 1 : param->size() / fixed->size();
  for (size_t c = 0; c < param->size(); ++c) {
    if (fixed != nullptr && (*fixed)[c / row]) continue;
    (*param)[c] /= 1.0f + step / std::sqrt(accum[c]);
  }
}

}  // namespace

absl::Status PilotOptions::Validate() const {
  if (dim < 1 || dim > 256) {
    return absl::InvalidArgumentError(absl::StrCat("--pilot_dim must be in [1, 256], got ", dim));
  }
  if (epochs < 1 || epochs > 1000) {
    return absl::InvalidArgumentError(
        absl::StrCat("--pilot_epochs must be in [1, 1000], got ", epochs));
  }
  if (folds < 2 || folds > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("--pilot_folds must be in [2, 64], got ", folds));
  }
  if (!(learning_rate > 0.0 && learning_rate <= 10.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--pilot_learning_rate must be in (0, 10], got ", learning_rate));
  }
  if (!(initial_accumulator > 0.0 && std::isfinite(initial_accumulator))) {
    return absl::InvalidArgumentError(
        absl::StrCat("pilot initial_accumulator must be > 0, got ", initial_accumulator));
  }
  if (!(l2 >= 0.0 && l2 <= 1e6)) {
    return absl::InvalidArgumentError(absl::StrCat("--pilot_l2 must be in [0, 1e6], got ", l2));
  }
  if (!(init_std >= 0.0 && init_std <= 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("pilot init_std must be in [0, 1], got ", init_std));
  }
  if (!(negative_rate >= 0.0 && negative_rate <= 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--pilot_negative_rate must be in [0, 1] (0 = auto), got ", negative_rate));
  }
  if (threads < 1) {
    return absl::InvalidArgumentError(absl::StrCat("--threads must be >= 1, got ", threads));
  }
  return absl::OkStatus();
}

absl::Status PilotData::Validate(int folds) const {
  const size_t n = user.size();
  if (item.size() != n || instances.size() != n || positives.size() != n || fold.size() != n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "pilot data: columns differ in length (users ", n, ", items ", item.size(), ", instances ",
        instances.size(), ", positives ", positives.size(), ", folds ", fold.size(), ")"));
  }
  for (size_t p = 0; p < n; ++p) {
    if (user[p] >= num_users || item[p] >= num_items || instances[p] == 0 ||
        positives[p] > instances[p] || fold[p] >= folds) {
      return absl::InvalidArgumentError(
          absl::StrCat("pilot data: pair ", p, " has user ", user[p], " / item ", item[p], " (of ",
                       num_users, " / ", num_items, "), ", positives[p], " positives of ",
                       instances[p], " instances, fold ", int(fold[p]), " (of ", folds, ")"));
    }
  }
  return absl::OkStatus();
}

double PilotFactors::Logit(uint32_t u, uint32_t i) const {
  return PilotLogit(bias, UserRow(u), ItemRow(i), dim);
}

double PilotFactors::Probability(uint32_t u, uint32_t i) const { return PilotSigmoid(Logit(u, i)); }

double AutoNegativeRate(const PilotData& data) {
  size_t negative_pairs = 0;
  for (uint32_t y : data.positives) negative_pairs += y == 0;
  if (negative_pairs == 0) return 1.0;
  return std::clamp(kAutoNegativePairs / double(negative_pairs), 0.1, 1.0);
}

uint32_t PilotFold(uint64_t user_id, uint64_t item_id, uint64_t seed, int folds) {
  const uint64_t h = Mix64(Mix64(Mix64(seed ^ 0xf01dULL) ^ user_id) ^ item_id);
  return static_cast<uint32_t>((static_cast<unsigned __int128>(h) * uint64_t(folds)) >> 64);
}

namespace {

PilotFactors FitOnTrainingSet(const PilotData& data, const TrainingSetT& train,
                              const PilotOptions& o, int index) {
  PilotFactors f;
  f.dim = o.dim;
  const size_t row = size_t(o.dim) + 1;
  f.user_rows.assign(size_t(data.num_users) * row, 0.0f);
  f.item_rows.assign(size_t(data.num_items) * row, 0.0f);
  Rng init(Mix64(o.seed) ^ Mix64(0x1417ULL + static_cast<uint64_t>(index)));
  for (std::vector<float>* rows : {&f.user_rows, &f.item_rows}) {
    for (size_t c = 0; c < rows->size(); ++c) {
      if (c % row != 0) (*rows)[c] = static_cast<float>(o.init_std * init.Normal());
    }
  }
  double pos = 0, inst = 0;  // the base rate of the pairs it trains on (weighted)
  for (const TrainRecord& t : train.records) {
    if (t.fold == static_cast<uint32_t>(index)) continue;  // index == folds: no pair is left out
    pos += t.y, inst += t.n;
  }
  const double base = std::clamp(inst > 0 ? pos / inst : 0.5, 1e-6, 1.0 - 1e-6);
  f.bias = std::log(base / (1.0 - base));
  const float a0 = static_cast<float>(o.initial_accumulator);
  Accumulators acc{o.initial_accumulator, std::vector<float>(f.user_rows.size(), a0),
                   std::vector<float>(f.item_rows.size(), a0)};
  const float lr = static_cast<float>(o.learning_rate);
  const uint64_t seed = Mix64(o.seed) ^ Mix64(0xab1eULL + static_cast<uint64_t>(index));
  for (int e = 1; e <= o.epochs; ++e) {
    Epoch(train, static_cast<uint32_t>(index), seed, e, lr, Movable(), &f, &acc);
    const float step = static_cast<float>(o.learning_rate * o.l2);
    ApplyL2(step, acc.user_rows, &f.user_rows, nullptr);
    ApplyL2(step, acc.item_rows, &f.item_rows, nullptr);
  }
  return f;
}

}  // namespace

PilotFactors FitPilotModel(const PilotData& data, const PilotOptions& o, int index) {
  return FitOnTrainingSet(data, TrainingSet(data, o), o, index);
}

absl::Status FoldInPilotRows(const PilotData& data, const PilotOptions& o,
                             const std::vector<uint8_t>& user_fixed,
                             const std::vector<uint8_t>& item_fixed, PilotFactors* f) {
  if (absl::Status s = o.Validate(); !s.ok()) return s;
  if (absl::Status s = data.Validate(o.folds); !s.ok()) return s;
  const size_t row = size_t(f->dim) + 1;
  if (f->dim < 1 || user_fixed.size() != data.num_users || item_fixed.size() != data.num_items ||
      f->user_rows.size() != data.num_users * row || f->item_rows.size() != data.num_items * row) {
    return absl::InvalidArgumentError(absl::StrCat(
        "pilot fold-in: factors of dim ", f->dim, " with ", f->user_rows.size(), " + ",
        f->item_rows.size(), " floats for ", data.num_users, " users and ", data.num_items,
        " items (", user_fixed.size(), " + ", item_fixed.size(), " fixed marks)"));
  }
  // The moving rows start as a fit's do: bias 0, a small seeded embedding.
  Rng init(Mix64(o.seed) ^ Mix64(0xf01d1bULL));
  for (auto [rows, fixed] : {std::pair{&f->user_rows, &user_fixed}, {&f->item_rows, &item_fixed}}) {
    for (size_t n = 0; n < fixed->size(); ++n) {
      if ((*fixed)[n]) continue;
      (*rows)[n * row] = 0.0f;
      for (size_t k = 1; k < row; ++k) {
        (*rows)[n * row + k] = static_cast<float>(o.init_std * init.Normal());
      }
    }
  }
  PilotOptions every = o;
  every.negative_rate = 1.0;  // a delta's new nodes have few pairs: all of them
  const TrainingSetT train = TrainingSet(data, every);  // pairs of fixed nodes only: no step
  const float a0 = static_cast<float>(o.initial_accumulator);
  Accumulators acc{o.initial_accumulator, std::vector<float>(f->user_rows.size(), a0),
                   std::vector<float>(f->item_rows.size(), a0)};
  const float lr = static_cast<float>(o.learning_rate);
  const Movable movable{&user_fixed, &item_fixed, /*bias=*/false};
  const uint64_t seed = Mix64(o.seed) ^ Mix64(0xf01d1bULL + 1);
  for (int e = 1; e <= o.epochs; ++e) {
    Epoch(train, ~0u, seed, e, lr, movable, f, &acc);
    const float step = static_cast<float>(o.learning_rate * o.l2);
    ApplyL2(step, acc.user_rows, &f->user_rows, &user_fixed);
    ApplyL2(step, acc.item_rows, &f->item_rows, &item_fixed);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<PilotFactors>> FitPilotModels(const PilotData& data,
                                                         const PilotOptions& o, int rank,
                                                         int ranks) {
  if (absl::Status s = o.Validate(); !s.ok()) return s;
  if (absl::Status s = data.Validate(o.folds); !s.ok()) return s;
  if (ranks < 1 || rank < 0 || rank >= ranks) {
    return absl::InvalidArgumentError(absl::StrCat("pilot fit: rank ", rank, " of ", ranks));
  }
  std::vector<PilotFactors> models(size_t(o.folds) + 1);
  std::vector<int> mine;
  for (int m = rank; m <= o.folds; m += ranks) mine.push_back(m);
  const TrainingSetT train = TrainingSet(data, o);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t t = next.fetch_add(1); t < mine.size(); t = next.fetch_add(1)) {
      models[mine[t]] = FitOnTrainingSet(data, train, o, mine[t]);
    }
  };
  std::vector<std::thread> pool;
  const int threads = std::min<int>(o.threads, static_cast<int>(mine.size()));
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  return models;
}

std::vector<float> CrossFittedScores(const PilotData& data,
                                     const std::vector<PilotFactors>& models) {
  std::vector<float> out(data.size());
  for (size_t p = 0; p < data.size(); ++p) {
    out[p] = static_cast<float>(models[data.fold[p]].Probability(data.user[p], data.item[p]));
  }
  return out;
}

double CrossFittedLogLoss(const PilotData& data, const std::vector<float>& scores) {
  double loss = 0, n = 0;
  for (size_t p = 0; p < data.size(); ++p) {
    const double s = std::clamp<double>(scores[p], 1e-7, 1.0 - 1e-7);
    const double y = data.positives[p], m = data.instances[p];
    loss -= y * std::log(s) + (m - y) * std::log(1.0 - s);
    n += m;
  }
  return n > 0 ? loss / n : 0.0;
}

PilotData PilotDataFromPairs(const PairTable& pairs, const PilotOptions& o) {
  PilotData d;
  d.num_users = static_cast<uint32_t>(pairs.num_users());
  d.num_items = static_cast<uint32_t>(pairs.num_items());
  d.user = pairs.pair_user, d.item = pairs.pair_item, d.instances = pairs.instances;
  d.positives.resize(pairs.num_pairs());
  d.fold.resize(pairs.num_pairs());
  for (size_t p = 0; p < pairs.num_pairs(); ++p) {
    d.positives[p] = pairs.instances[p] - pairs.negatives[p];
    d.fold[p] = static_cast<uint8_t>(PilotFold(
        pairs.user_ids[pairs.pair_user[p]], pairs.item_ids[pairs.pair_item[p]], o.seed, o.folds));
  }
  return d;
}

absl::StatusOr<std::vector<float>> CrossFittedPilotScores(const PairTable& pairs,
                                                          const PilotOptions& o,
                                                          PilotFactors* full) {
  if (absl::Status s = o.Validate(); !s.ok()) return s;
  const PilotData data = PilotDataFromPairs(pairs, o);
  absl::StatusOr<std::vector<PilotFactors>> models = FitPilotModels(data, o);
  if (!models.ok()) return models.status();
  std::vector<float> scores = CrossFittedScores(data, *models);
  if (full != nullptr) *full = std::move(models->back());
  return scores;
}

std::string SerializePilotFactors(const PilotFactors& f) {
  const uint64_t head[3] = {static_cast<uint64_t>(f.dim), f.user_rows.size(), f.item_rows.size()};
  std::string out(sizeof head + sizeof(double) + 4 * (f.user_rows.size() + f.item_rows.size()),
                  '\0');
  char* p = out.data();
  std::memcpy(p, head, sizeof head), p += sizeof head;
  std::memcpy(p, &f.bias, sizeof(double)), p += sizeof(double);
  std::memcpy(p, f.user_rows.data(), 4 * f.user_rows.size()), p += 4 * f.user_rows.size();
  std::memcpy(p, f.item_rows.data(), 4 * f.item_rows.size());
  return out;
}

absl::StatusOr<PilotFactors> ParsePilotFactors(std::string_view bytes) {
  uint64_t head[3];
  if (bytes.size() < sizeof head + sizeof(double)) {
    return absl::DataLossError(absl::StrCat("pilot factors: ", bytes.size(), " bytes"));
  }
  std::memcpy(head, bytes.data(), sizeof head);
  if (head[0] > 256 || bytes.size() != sizeof head + sizeof(double) + 4 * (head[1] + head[2])) {
    return absl::DataLossError(absl::StrCat("pilot factors: ", bytes.size(), " bytes for dim ",
                                            head[0], ", ", head[1], " + ", head[2], " floats"));
  }
  PilotFactors f;
  f.dim = static_cast<int>(head[0]);
  const char* p = bytes.data() + sizeof head;
  std::memcpy(&f.bias, p, sizeof(double)), p += sizeof(double);
  f.user_rows.resize(head[1]);
  f.item_rows.resize(head[2]);
  std::memcpy(f.user_rows.data(), p, 4 * head[1]), p += 4 * head[1];
  std::memcpy(f.item_rows.data(), p, 4 * head[2]);
  return f;
}

}  // namespace graphsieve
