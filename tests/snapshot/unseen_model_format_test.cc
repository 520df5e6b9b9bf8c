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

// The ensembles' member fits (docs/SNAPSHOT.md "Unseen-pair model"): written
// only when stored, round-trip, absent = not stored, and a bad one is refused.
TEST(UnseenModelFormat, MemberFitsRoundTripAndAreAbsentWhenNotStored) {
  UnseenModel m;
  m.method = 3;
  m.sketch_dim = 8;
  EXPECT_EQ(EncodeUnseenModel(m).find("members"), std::string::npos);
  absl::StatusOr<UnseenModel> back = DecodeUnseenModel(EncodeUnseenModel(m));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_FALSE(back->has_members);
  m.has_members = true;
  m.maec_member = {1, 0.01, 0.5, 0.125, 0.0625};
  m.pilot_member = {1, 0.02, 0.75, 0.375, 0.1875};
  m.combined = {0, 0.0, 0.0, 1.5, 0.0};
  back = DecodeUnseenModel(EncodeUnseenModel(m));
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_TRUE(back->has_members);
  for (const auto& [got, want] :
       {std::pair(back->maec_member, m.maec_member), std::pair(back->pilot_member, m.pilot_member),
        std::pair(back->combined, m.combined)}) {
    EXPECT_EQ(got.rule, want.rule);
    EXPECT_EQ(got.floor, want.floor);
    EXPECT_EQ(got.kappa, want.kappa);
    EXPECT_EQ(got.rho, want.rho);
    EXPECT_EQ(got.score_mean, want.score_mean);
  }
  m.pilot_member.kappa = 0.0;  // a mixture member without a uniform share
  EXPECT_THAT(DecodeUnseenModel(EncodeUnseenModel(m)).status().message(),
              ::testing::HasSubstr("members.pilot"));
  m.pilot_member.kappa = 0.75;
  m.combined.rule = 2;
  EXPECT_THAT(DecodeUnseenModel(EncodeUnseenModel(m)).status().message(),
              ::testing::HasSubstr("members.combined: rule 2"));
  std::string text = EncodeUnseenModel(m);
  text.replace(text.find("\"maec\""), 6, "\"mxec\"");  // a member missing
  EXPECT_EQ(DecodeUnseenModel(text).status().code(), absl::StatusCode::kDataLoss);
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
