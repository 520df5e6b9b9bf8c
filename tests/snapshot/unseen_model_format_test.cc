// meta/unseen_model (core/snapshot/format.h): the rate-rule fields round-trip,
// and a model written before they existed reads as the floor rule.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/snapshot/format.h"

namespace graphsieve::snapshot {
namespace {

TEST(UnseenModelFormat, MixtureFieldsRoundTrip) {
  UnseenModel m;
  m.method = 0;
  m.rate_rule = 1;
  m.kappa = 0.25;
  m.score_mean = 0.0375;
  m.rho = 0.16;
  m.score_power = 0.75;
  m.sketch_dim = 8;
  absl::StatusOr<UnseenModel> back = DecodeUnseenModel(EncodeUnseenModel(m));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->rate_rule, 1);
  EXPECT_DOUBLE_EQ(back->score_power, 0.75);
  EXPECT_DOUBLE_EQ(back->kappa, 0.25);
  EXPECT_DOUBLE_EQ(back->score_mean, 0.0375);
  EXPECT_DOUBLE_EQ(back->rho, 0.16);
  EXPECT_DOUBLE_EQ(back->exposure_power, 0.0);
  EXPECT_EQ(EncodeUnseenModel(m).find("exposure_power"), std::string::npos);  // off: not written

  m.exposure_power = 0.5;
  back = DecodeUnseenModel(EncodeUnseenModel(m));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_DOUBLE_EQ(back->exposure_power, 0.5);
  m.exposure_power = 2.5;
  EXPECT_THAT(DecodeUnseenModel(EncodeUnseenModel(m)).status().message(),
              ::testing::HasSubstr("exposure_power 2.5"));
}

TEST(UnseenModelFormat, ModelWithoutRuleFieldsIsTheFloorRule) {
  const char* old_json =
      R"({"method":0,"alpha":0.2,"floor":0.01,"rho":3.0,"gamma":0.5,"geff_min":0.0,"geff_max":2.0,)"
      R"("uncertainty_propagation":true,"score_propagation":true,"symmetric_normalisation":false,"sketch_dim":64})";
  absl::StatusOr<UnseenModel> m = DecodeUnseenModel(old_json);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->rate_rule, 0);
  EXPECT_DOUBLE_EQ(m->score_power, 1.0);     // written before score_power: the score itself
  EXPECT_DOUBLE_EQ(m->exposure_power, 0.0);  // written before the exposure discount: none
  EXPECT_DOUBLE_EQ(m->floor, 0.01);
  EXPECT_DOUBLE_EQ(m->rho, 3.0);
}

// The built-in pilot's fields (docs/SNAPSHOT.md "Pilot factors"): written
// only with pilot rows, round-trip, absent = none, and a pilot row wider than
// the node row is refused.
TEST(UnseenModelFormat, PilotFieldsRoundTripAndAreAbsentWithoutPilotRows) {
  UnseenModel m;
  m.method = 2;
  m.sketch_dim = 8;
  EXPECT_EQ(EncodeUnseenModel(m).find("pilot_dim"), std::string::npos);
  absl::StatusOr<UnseenModel> back = DecodeUnseenModel(EncodeUnseenModel(m));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->pilot_dim, 0);
  EXPECT_EQ(back->PilotRowFloats(), 0);
  EXPECT_EQ(back->GraphRowFloats(), 8);
  m.sketch_dim = 8 + 5;
  m.pilot_dim = 4;
  m.pilot_bias = -3.25;
  back = DecodeUnseenModel(EncodeUnseenModel(m));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->pilot_dim, 4);
  EXPECT_DOUBLE_EQ(back->pilot_bias, -3.25);
  EXPECT_EQ(back->GraphRowFloats(), 8);
  m.sketch_dim = 4;  // a pilot row of 5 floats cannot end a row of 4
  EXPECT_THAT(DecodeUnseenModel(EncodeUnseenModel(m)).status().message(),
              ::testing::HasSubstr("pilot_dim 4 with sketch_dim 4"));
}

TEST(UnseenModelFormat, UnknownRuleOrBadKappaIsDataLoss) {
  UnseenModel m;
  m.rate_rule = 2;
  EXPECT_THAT(DecodeUnseenModel(EncodeUnseenModel(m)).status().message(),
              ::testing::HasSubstr("rate_rule 2"));
  m.rate_rule = 1;
  m.kappa = 0.0;
  EXPECT_EQ(DecodeUnseenModel(EncodeUnseenModel(m)).status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace graphsieve::snapshot
