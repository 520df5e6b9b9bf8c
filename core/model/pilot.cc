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

void Step(float* param, float* accum, float grad, float lr) {
  *accum += grad * grad;
  *param -= lr * grad / std::sqrt(*accum);
}

// Which parameters an epoch moves: all (a fit), or only the rows of the
// nodes not marked fixed (a fold-in; the global bias stays).
struct Movable {
  const std::vector<uint8_t>* user_fixed = nullptr;
  const std::vector<uint8_t>* item_fixed = nullptr;
  bool bias = true;
};

void Epoch(const PilotData& data, const std::vector<uint32_t>& train, uint64_t seed, int epoch,
           float lr, const Movable& movable, PilotFactors* f, Accumulators* acc) {
  std::vector<uint32_t> order = train;
  Rng rng(Mix64(seed) ^ Mix64(0x5eedULL + static_cast<uint64_t>(epoch)));
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.Below(i)]);
  const int dim = f->dim, row = dim + 1;
  std::vector<float> gu(dim), gi(dim);
  for (uint32_t p : order) {
    const uint32_t u = data.user[p], v = data.item[p];
    float* pu = f->user_rows.data() + size_t(u) * row;
    float* qi = f->item_rows.data() + size_t(v) * row;
    float* au = acc->user_rows.data() + size_t(u) * row;
    float* ai = acc->item_rows.data() + size_t(v) * row;
    const double n = data.instances[p];
    // d(loss)/dg = n·σ(g) − y: the pair's instances at once.
    const float grad =
        static_cast<float>(n * PilotSigmoid(PilotLogit(f->bias, pu, qi, dim)) - data.positives[p]);
    if (movable.bias) {
      acc->bias += static_cast<double>(grad) * grad;
      f->bias -= lr * grad / std::sqrt(acc->bias);
    }
    const bool move_u = movable.user_fixed == nullptr || !(*movable.user_fixed)[u];
    const bool move_i = movable.item_fixed == nullptr || !(*movable.item_fixed)[v];
    for (int k = 1; k <= dim; ++k) gu[k - 1] = grad * qi[k], gi[k - 1] = grad * pu[k];
    if (move_u) Step(pu, au, grad, lr);
    if (move_i) Step(qi, ai, grad, lr);
    for (int k = 1; k <= dim; ++k) {
      if (move_u) Step(pu + k, au + k, gu[k - 1], lr);
      if (move_i) Step(qi + k, ai + k, gi[k - 1], lr);
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

uint32_t PilotFold(uint64_t user_id, uint64_t item_id, uint64_t seed, int folds) {
  const uint64_t h = Mix64(Mix64(Mix64(seed ^ 0xf01dULL) ^ user_id) ^ item_id);
  return static_cast<uint32_t>((static_cast<unsigned __int128>(h) * uint64_t(folds)) >> 64);
}

PilotFactors FitPilotModel(const PilotData& data, const PilotOptions& o, int index) {
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
  std::vector<uint32_t> train;
  double pos = 0, inst = 0;
  for (size_t p = 0; p < data.size(); ++p) {
    if (data.fold[p] == index) continue;  // index == folds: no pair is left out
    train.push_back(static_cast<uint32_t>(p));
    pos += data.positives[p], inst += data.instances[p];
  }
  const double base = std::clamp(inst > 0 ? pos / inst : 0.5, 1e-6, 1.0 - 1e-6);
  f.bias = std::log(base / (1.0 - base));
  const float a0 = static_cast<float>(o.initial_accumulator);
  Accumulators acc{o.initial_accumulator, std::vector<float>(f.user_rows.size(), a0),
                   std::vector<float>(f.item_rows.size(), a0)};
  const float lr = static_cast<float>(o.learning_rate);
  const uint64_t seed = Mix64(o.seed) ^ Mix64(0xab1eULL + static_cast<uint64_t>(index));
  for (int e = 1; e <= o.epochs; ++e) {
    Epoch(data, train, seed, e, lr, Movable(), &f, &acc);
    const float step = static_cast<float>(o.learning_rate * o.l2);
    ApplyL2(step, acc.user_rows, &f.user_rows, nullptr);
    ApplyL2(step, acc.item_rows, &f.item_rows, nullptr);
  }
  return f;
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
  std::vector<uint32_t> train;
  for (size_t p = 0; p < data.size(); ++p) {
    if (!user_fixed[data.user[p]] || !item_fixed[data.item[p]]) {
      train.push_back(static_cast<uint32_t>(p));
    }
  }
  const float a0 = static_cast<float>(o.initial_accumulator);
  Accumulators acc{o.initial_accumulator, std::vector<float>(f->user_rows.size(), a0),
                   std::vector<float>(f->item_rows.size(), a0)};
  const float lr = static_cast<float>(o.learning_rate);
  const Movable movable{&user_fixed, &item_fixed, /*bias=*/false};
  const uint64_t seed = Mix64(o.seed) ^ Mix64(0xf01d1bULL + 1);
  for (int e = 1; e <= o.epochs; ++e) {
    Epoch(data, train, seed, e, lr, movable, f, &acc);
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
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t t = next.fetch_add(1); t < mine.size(); t = next.fetch_add(1)) {
      models[mine[t]] = FitPilotModel(data, o, mine[t]);
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
