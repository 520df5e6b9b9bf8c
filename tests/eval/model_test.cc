#include "eval/model.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "eval/metrics.h"
#include "eval/random.h"
#include "gtest/gtest.h"

namespace graphsieve::eval {
namespace {

constexpr uint32_t kUsers = 200, kItems = 100;

// Labels from a known logistic model with user/item effects and a rare positive class.
struct Synthetic {
  Instances all;
  double true_base_rate = 0.0;
};

Synthetic MakeSynthetic(uint64_t seed, int copies) {
  SplitMix64 rng(seed);
  std::vector<double> a(kUsers), c(kItems);
  for (double& x : a) x = 0.7 * rng.Normal();
  for (double& x : c) x = 0.7 * rng.Normal();
  Synthetic s;
  double sum_p = 0.0;
  for (int r = 0; r < copies; ++r) {
    for (uint32_t u = 0; u < kUsers; ++u) {
      for (uint32_t v = 0; v < kItems; ++v) {
        const double p = 1.0 / (1.0 + std::exp(-(-3.0 + a[u] + c[v])));
        s.all.user.push_back(u);
        s.all.item.push_back(v);
        s.all.label.push_back(rng.Uniform() < p ? 1 : 0);
        sum_p += p;
      }
    }
  }
  s.true_base_rate = sum_p / static_cast<double>(s.all.size());
  return s;
}

double MeanPrediction(const CtrModel& model, const Instances& data) {
  double sum = 0.0;
  for (double p : model.PredictProbabilities(data)) sum += p;
  return sum / static_cast<double>(data.size());
}

// Uniformly subsample the negatives at `alpha`; offsets log(alpha) on every kept
// instance when `with_offset`.
Instances Subsample(const Instances& in, double alpha, bool with_offset, uint64_t seed) {
  Instances out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in.label[i] == 0 && UnitFromIndex(seed, 1, i) >= alpha) continue;
    out.user.push_back(in.user[i]);
    out.item.push_back(in.item[i]);
    out.label.push_back(in.label[i]);
    if (with_offset) out.offset.push_back(static_cast<float>(std::log(alpha)));
  }
  return out;
}

TEST(CtrModelTest, LogOddsCorrectionRecoversCalibration) {
  const Synthetic train = MakeSynthetic(11, 3);
  const Synthetic validation = MakeSynthetic(12, 1);
  const double alpha = 0.1;
  ModelOptions o;
  o.kind = ModelKind::kLogistic;
  o.seed = 5;
  double mean_corrected = 0.0, mean_uncorrected = 0.0;
  for (bool with_offset : {true, false}) {
    std::unique_ptr<CtrModel> model = *CtrModel::Create(o, kUsers, kItems);
    absl::StatusOr<TrainSummary> summary =
        model->Train(Subsample(train.all, alpha, with_offset, 99), validation.all);
    ASSERT_TRUE(summary.ok()) << summary.status();
    (with_offset ? mean_corrected : mean_uncorrected) = MeanPrediction(*model, train.all);
  }
  const double truth = train.true_base_rate;
  EXPECT_NEAR(mean_corrected, truth, 0.1 * truth)
      << "corrected " << mean_corrected << " vs base rate " << truth;
  // Without the offset the model sees ~1/alpha times more positives than there are.
  EXPECT_GT(mean_uncorrected, 2.5 * truth)
      << "uncorrected " << mean_uncorrected << " vs base rate " << truth;
}

// Standard deviation of the learned logit over every user x item cell.
double LogitSpread(const CtrModel& model) {
  double sum = 0.0, sum_sq = 0.0;
  for (uint32_t u = 0; u < kUsers; ++u) {
    for (uint32_t v = 0; v < kItems; ++v) {
      const double g = model.Logit(u, v);
      sum += g;
      sum_sq += g * g;
    }
  }
  const double n = static_cast<double>(kUsers) * kItems;
  return std::sqrt(std::max(0.0, sum_sq / n - (sum / n) * (sum / n)));
}

// The L2 penalty is applied per epoch, not per update, so training on every
// negative (5x the updates) is regularised as much as training on an
// offset-corrected 20% sample of them: with a penalty strong enough to shrink
// the effects, both keep the same share of their unpenalised logit spread. (A per-update penalty
// shrinks the unsampled model more, in proportion to its number of updates.)
TEST(CtrModelTest, RegularisationDoesNotDependOnTheNumberOfUpdates) {
  const Synthetic train = MakeSynthetic(11, 3);
  const Synthetic validation = MakeSynthetic(12, 1);
  ModelOptions o;
  o.kind = ModelKind::kLogistic;
  o.seed = 5;
  o.max_epochs = 10;
  o.patience = 10;      // run every epoch: the penalty's fixed point, not early stopping
  double spread[2][2];  // [penalised][sampled]
  for (double l2 : {0.0, 40.0}) {
    o.l2 = l2;
    for (bool sampled : {false, true}) {
      std::unique_ptr<CtrModel> model = *CtrModel::Create(o, kUsers, kItems);
      const Instances data = sampled ? Subsample(train.all, 0.2, true, 77) : train.all;
      ASSERT_TRUE(model->Train(data, validation.all).ok());
      spread[l2 > 0][sampled] = LogitSpread(*model);
    }
  }
  // The share of the unpenalised spread that survives the penalty.
  const double kept_full = spread[1][0] / spread[0][0];
  const double kept_sample = spread[1][1] / spread[0][1];
  EXPECT_LT(kept_full, 0.8) << "the penalty does not shrink the full model";
  EXPECT_LT(kept_sample, 0.8) << "the penalty does not shrink the sampled model";
  EXPECT_NEAR(kept_full / kept_sample, 1.0, 0.1)
      << "share of the logit spread kept under the penalty: full " << kept_full << ", sample "
      << kept_sample;
}

// Labels driven by a rank-2 user-item interaction only: one-hot LR cannot
// express it, the factorisation model can.
TEST(CtrModelTest, FactorisationLearnsInteractionsLogisticRegressionCannot) {
  SplitMix64 rng(21);
  Eigen::MatrixXd pu(2, kUsers), qi(2, kItems);
  for (Eigen::Index k = 0; k < pu.size(); ++k) pu.data()[k] = rng.Normal();
  for (Eigen::Index k = 0; k < qi.size(); ++k) qi.data()[k] = rng.Normal();
  Instances train, validation, test;
  for (int copy = 0; copy < 4; ++copy) {
    for (uint32_t u = 0; u < kUsers; ++u) {
      for (uint32_t v = 0; v < kItems; ++v) {
        const double p = 1.0 / (1.0 + std::exp(-(-1.0 + 1.5 * pu.col(u).dot(qi.col(v)))));
        Instances& dst = copy < 2 ? train : (copy == 2 ? validation : test);
        dst.user.push_back(u);
        dst.item.push_back(v);
        dst.label.push_back(rng.Uniform() < p ? 1 : 0);
      }
    }
  }
  double auc[2];
  for (ModelKind kind : {ModelKind::kLogistic, ModelKind::kFactorisation}) {
    ModelOptions o;
    o.kind = kind;
    o.dim = 4;
    o.seed = 3;
    std::unique_ptr<CtrModel> model = *CtrModel::Create(o, kUsers, kItems);
    ASSERT_TRUE(model->Train(train, validation).ok());
    std::vector<double> scores = model->PredictProbabilities(test);
    auc[kind == ModelKind::kFactorisation] = *Auc(scores, test.label);
  }
  EXPECT_LT(auc[0], 0.65) << "lr";
  EXPECT_GT(auc[1], auc[0] + 0.1) << "fm " << auc[1] << " vs lr " << auc[0];
}

// Every subset of 4 item groups is liked by one of 16 user groups (user group
// g likes item group j iff bit j of g is set). With embeddings of dimension d,
// the rows a factorisation model can express are the item points
// (q_i, w_i) in R^(d+1) cut by an upper half-space, which cannot pick every
// subset of 4 points when d <= 2 (their VC dimension is d + 1 < 4). The mlp's
// ReLU layer can, so at the same dimension it fits the pattern and fm cannot.
struct SubsetPattern {
  static constexpr uint32_t kUserGroups = 16, kItemGroups = 4;
  static constexpr uint32_t kUsersPerGroup = 8, kItemsPerGroup = 16;
  static constexpr uint32_t kUsers = kUserGroups * kUsersPerGroup;
  static constexpr uint32_t kItems = kItemGroups * kItemsPerGroup;
  static double TrueProbability(uint32_t u, uint32_t v) {
    const uint32_t g = u / kUsersPerGroup, j = v / kItemsPerGroup;
    return ((g >> j) & 1) ? 0.6 : 0.03;
  }
  static Instances Draw(int copies, uint64_t seed) {
    SplitMix64 rng(seed);
    Instances d;
    for (int c = 0; c < copies; ++c) {
      for (uint32_t u = 0; u < kUsers; ++u) {
        for (uint32_t v = 0; v < kItems; ++v) {
          d.user.push_back(u);
          d.item.push_back(v);
          d.label.push_back(rng.Uniform() < TrueProbability(u, v) ? 1 : 0);
        }
      }
    }
    return d;
  }
};

// Mean |predicted - true probability| over all user x item cells.
double MeanAbsError(const CtrModel& model) {
  double sum = 0.0;
  for (uint32_t u = 0; u < SubsetPattern::kUsers; ++u) {
    for (uint32_t v = 0; v < SubsetPattern::kItems; ++v) {
      const double p = 1.0 / (1.0 + std::exp(-model.Logit(u, v)));
      sum += std::abs(p - SubsetPattern::TrueProbability(u, v));
    }
  }
  return sum / (SubsetPattern::kUsers * SubsetPattern::kItems);
}

ModelOptions SubsetPatternOptions(ModelKind kind) {
  ModelOptions o;
  o.kind = kind;
  o.dim = 2;
  o.hidden = 32;
  o.l2 = 1e-4;
  o.max_epochs = 40;
  o.seed = 7;
  return o;
}

double BayesAuc(const Instances& test) {
  std::vector<double> truth;
  for (size_t i = 0; i < test.size(); ++i) {
    truth.push_back(SubsetPattern::TrueProbability(test.user[i], test.item[i]));
  }
  return *Auc(truth, test.label);
}

TEST(CtrModelTest, MlpLearnsAnInteractionTheDotProductCannot) {
  const Instances train = SubsetPattern::Draw(16, 31);
  const Instances validation = SubsetPattern::Draw(4, 32);
  const Instances test = SubsetPattern::Draw(8, 33);
  double auc[2], error[2];
  for (ModelKind kind : {ModelKind::kFactorisation, ModelKind::kMlp}) {
    std::unique_ptr<CtrModel> model =
        *CtrModel::Create(SubsetPatternOptions(kind), SubsetPattern::kUsers, SubsetPattern::kItems);
    absl::StatusOr<TrainSummary> t = model->Train(train, validation);
    ASSERT_TRUE(t.ok()) << t.status();
    const int k = kind == ModelKind::kMlp;
    auc[k] = *Auc(model->PredictProbabilities(test), test.label);
    error[k] = MeanAbsError(*model);
  }
  const double bayes = BayesAuc(test);
  // mlp reaches the AUC of the true probabilities; fm of the same dimension
  // stays clearly below it and misses the probabilities by far more.
  EXPECT_GT(auc[1], bayes - 0.004) << "mlp " << auc[1] << " vs true probabilities " << bayes;
  EXPECT_LT(auc[0], bayes - 0.006) << "fm " << auc[0] << " vs true probabilities " << bayes;
  EXPECT_LT(error[1], 0.5 * error[0])
      << "mean |p - truth|: mlp " << error[1] << ", fm " << error[0];
}

// The offset contract holds for mlp: trained on a subsample of the negatives
// (alpha = 0.2) with offset log(alpha) it estimates the full-data
// probabilities; without the offset it over-predicts.
TEST(CtrModelTest, MlpIsCalibratedUnderTheOffset) {
  const Instances train = SubsetPattern::Draw(16, 41);
  const Instances validation = SubsetPattern::Draw(4, 42);
  const double alpha = 0.2;
  double truth = 0.0;
  for (uint32_t u = 0; u < SubsetPattern::kUsers; ++u) {
    for (uint32_t v = 0; v < SubsetPattern::kItems; ++v)
      truth += SubsetPattern::TrueProbability(u, v);
  }
  truth /= SubsetPattern::kUsers * SubsetPattern::kItems;
  double mean[2], error[2];
  for (bool with_offset : {true, false}) {
    std::unique_ptr<CtrModel> model = *CtrModel::Create(
        SubsetPatternOptions(ModelKind::kMlp), SubsetPattern::kUsers, SubsetPattern::kItems);
    absl::StatusOr<TrainSummary> t =
        model->Train(Subsample(train, alpha, with_offset, 43), validation);
    ASSERT_TRUE(t.ok()) << t.status();
    double sum = 0.0;
    for (uint32_t u = 0; u < SubsetPattern::kUsers; ++u) {
      for (uint32_t v = 0; v < SubsetPattern::kItems; ++v)
        sum += 1.0 / (1.0 + std::exp(-model->Logit(u, v)));
    }
    mean[with_offset] = sum / (SubsetPattern::kUsers * SubsetPattern::kItems);
    error[with_offset] = MeanAbsError(*model);
  }
  EXPECT_NEAR(mean[1], truth, 0.05 * truth) << "corrected mean " << mean[1] << " vs " << truth;
  EXPECT_LT(error[1], error[0]) << "mean |p - truth|: corrected " << error[1] << ", uncorrected "
                                << error[0];
  EXPECT_GT(mean[0], 1.5 * truth) << "uncorrected mean " << mean[0] << " vs " << truth;
}

TEST(CtrModelTest, SameSeedSameModel) {
  const Synthetic data = MakeSynthetic(3, 1);
  ModelOptions o;
  o.dim = 4;
  o.max_epochs = 3;
  std::unique_ptr<CtrModel> a = *CtrModel::Create(o, kUsers, kItems);
  std::unique_ptr<CtrModel> b = *CtrModel::Create(o, kUsers, kItems);
  ASSERT_TRUE(a->Train(data.all, data.all).ok());
  ASSERT_TRUE(b->Train(data.all, data.all).ok());
  EXPECT_EQ(a->Logit(7, 9), b->Logit(7, 9));
}

TEST(CtrModelTest, RejectsBadInputsByName) {
  ModelOptions o;
  o.dim = 0;
  EXPECT_FALSE(CtrModel::Create(o, 10, 10).ok());
  o.dim = 4;
  EXPECT_FALSE(CtrModel::Create(o, 0, 10).ok());
  std::unique_ptr<CtrModel> m = *CtrModel::Create(o, 10, 10);
  Instances bad;
  bad.user = {1, 20};
  bad.item = {1, 2};
  bad.label = {0, 1};
  Instances good = bad;
  good.user = {1, 2};
  absl::StatusOr<TrainSummary> s = m->Train(bad, good);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("training set"), std::string_view::npos) << s.status();
  good.offset = {0.5f, 0.0f};  // log(rate) > 0 is impossible
  s = m->Train(good, good);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("offset"), std::string_view::npos) << s.status();
}

}  // namespace
}  // namespace graphsieve::eval
