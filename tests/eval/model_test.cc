#include "eval/model.h"

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
