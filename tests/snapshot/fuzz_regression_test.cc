// Regression tests for what fuzz/ and the sanitizer runs found in
// core/snapshot (docs/RELIABILITY.md): every metadata input gives a status
// naming the field, never undefined behaviour; file reads fit small stacks.
#include <pthread.h>

#include <fstream>
#include <string>
#include <vector>

#include "core/snapshot/file_util.h"
#include "core/snapshot/format.h"
#include "core/snapshot/manifest.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/snapshot/synthetic.h"
#include "tests/temp_dir.h"

namespace graphsieve {
namespace snapshot {
namespace {

using ::testing::HasSubstr;

nlohmann::json GoodManifest() {
  testing_util::Synthetic s = testing_util::MakeSynthetic(4, 5, 2, /*seed=*/3);
  s.info.version = "20261126T000000Z-00000001";
  return BuildManifest(s.pairs, s.result, s.info, TableFormat::kBlockBased,
                       {{"db/000001.sst", 10, 0x1234}});
}

absl::Status Parse(const nlohmann::json& m) {
  return ParseManifest(m.dump(), "MANIFEST.json").status();
}

TEST(ManifestFuzzRegressionTest, TheGoodManifestParses) {
  EXPECT_TRUE(Parse(GoodManifest()).ok()) << Parse(GoodManifest());
}

// fuzz_manifest: {"format_version":1e300} was a float-to-int conversion out
// of range (UBSan: "1e+300 is outside the range of representable values of type 'int'").
TEST(ManifestFuzzRegressionTest, FloatWhereAnIntegerBelongsIsDataLossNamingTheKey) {
  for (const char* value : {"1e300", "-1e300", "1.5", "3e9"}) {
    nlohmann::json m = GoodManifest();
    m["format_version"] = nlohmann::json::parse(value);
    absl::Status s = Parse(m);
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << value;
    EXPECT_THAT(s.message(), HasSubstr("format_version")) << value;
  }
  nlohmann::json m = GoodManifest();
  m["parameters"]["sketch_dim"] = 1e300;
  EXPECT_THAT(Parse(m).message(), HasSubstr("sketch_dim"));
}

TEST(ManifestFuzzRegressionTest, NegativeOrOversizeCountsAreRejected) {
  nlohmann::json m = GoodManifest();
  m["counts"]["pairs"] = -1;  // used to wrap to 2^64 - 1
  absl::Status s = Parse(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr("pairs"));
  m = GoodManifest();
  m["files"][0]["size_bytes"] = 1e30;
  EXPECT_THAT(Parse(m).message(), HasSubstr("size_bytes"));
  m = GoodManifest();
  m["parameters"]["sketch_dim"] = int64_t{1} << 40;
  EXPECT_THAT(Parse(m).message(), HasSubstr("sketch_dim"));
}

// A field of another type (a corrupt or hand-edited manifest) is DATA_LOSS
// naming the file, the object and the field, not nlohmann's "type must be
// number, but is string".
TEST(ManifestFuzzRegressionTest, FieldOfAnotherTypeNamesTheFileAndTheField) {
  struct Case {
    std::vector<std::string> path;  // into the manifest
    nlohmann::json value;
    std::string message;
  };
  const Case cases[] = {
      {{"parameters", "alpha"},
       "0.2",
       "MANIFEST.json: in parameters: 'alpha' must be a number, not \"0.2\""},
      {{"parameters", "method"}, 3, "MANIFEST.json: in parameters: 'method' must be a string"},
      {{"achieved_negative_mean_rate"},
       "x",
       "MANIFEST.json: 'achieved_negative_mean_rate' must be a number"},
      {{"storage", "pairs_table_format"},
       false,
       "MANIFEST.json: in storage: 'pairs_table_format' must be a string, not false"},
      {{"parameters"}, 5, "MANIFEST.json: 'parameters' must be an object, not 5"},
      {{"counts"}, nlohmann::json::array(), "MANIFEST.json: 'counts' must be an object"},
      {{"version"}, nullptr, "MANIFEST.json: 'version' must be a string, not null"},
  };
  for (const Case& c : cases) {
    nlohmann::json m = GoodManifest();
    nlohmann::json* at = &m;
    for (const std::string& key : c.path) at = &(*at)[key];
    *at = c.value;
    const absl::Status s = Parse(m);
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << c.message;
    EXPECT_THAT(s.message(), HasSubstr(c.message));
    EXPECT_THAT(s.message(), ::testing::Not(HasSubstr("json.exception")));
  }
  nlohmann::json m = GoodManifest();
  m["files"][0]["xxh3"] = 12;
  EXPECT_THAT(Parse(m).message(), HasSubstr("in files[0]: 'xxh3' must be a string"));
  m = GoodManifest();
  m["parameters"].erase("gamma");
  EXPECT_THAT(Parse(m).message(), HasSubstr("in parameters: key 'gamma' not found"));
}

TEST(UnseenModelFuzzRegressionTest, FieldOfAnotherTypeNamesTheField) {
  UnseenModel model;
  model.sketch_dim = 4;
  nlohmann::json j = nlohmann::json::parse(EncodeUnseenModel(model));
  j["rho"] = "1";
  absl::StatusOr<UnseenModel> m = DecodeUnseenModel(j.dump());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(m.status().message(), "meta/unseen_model: 'rho' must be a number, not \"1\"");
  j = nlohmann::json::parse(EncodeUnseenModel(model));
  j["kappa"] = true;  // optional fields too: a boolean is not silently 1.0
  EXPECT_THAT(DecodeUnseenModel(j.dump()).status().message(),
              HasSubstr("'kappa' must be a number, not true"));
  j = nlohmann::json::parse(EncodeUnseenModel(model));
  j["score_propagation"] = 1;
  EXPECT_THAT(DecodeUnseenModel(j.dump()).status().message(),
              HasSubstr("'score_propagation' must be true or false, not 1"));
}

TEST(UnseenModelFuzzRegressionTest, MethodAndSketchDimMustBeIntegersInRange) {
  UnseenModel model;
  model.sketch_dim = 4;
  const std::string good = EncodeUnseenModel(model);
  ASSERT_TRUE(DecodeUnseenModel(good).ok());
  for (const char* value : {"1e300", "99", "-1", "0.5"}) {
    nlohmann::json j = nlohmann::json::parse(good);
    j["method"] = nlohmann::json::parse(value);
    absl::StatusOr<UnseenModel> m = DecodeUnseenModel(j.dump());
    ASSERT_FALSE(m.ok()) << value;
    EXPECT_EQ(m.status().code(), absl::StatusCode::kDataLoss) << value;
    EXPECT_THAT(m.status().message(), HasSubstr("method")) << value;
  }
  nlohmann::json j = nlohmann::json::parse(good);
  j["sketch_dim"] = 1e300;
  EXPECT_THAT(DecodeUnseenModel(j.dump()).status().message(), HasSubstr("sketch_dim"));
}

// ASan (e2e_dashboard_browser): ReadFileToString kept a 64 KiB buffer on the
// stack and overflowed a civetweb admin thread's stack serving /status.json.
// It must run on a thread whose whole stack is 64 KiB.
TEST(FileUtilRegressionTest, ReadFileToStringFitsASmallThreadStack) {
  const ::graphsieve::testing::ScopedTempDir dir("small-stack");
  const std::string path = dir.path() + "/file";
  { std::ofstream(path) << std::string(200000, 'x'); }
  struct Arg {
    std::string path;
    absl::StatusOr<std::string> out = absl::UnknownError("not run");
  } arg{path};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, 64 * 1024), 0);
  pthread_t thread;
  ASSERT_EQ(pthread_create(
                &thread, &attr,
                [](void* p) -> void* {
                  auto* a = static_cast<Arg*>(p);
                  a->out = ReadFileToString(a->path);
                  return nullptr;
                },
                &arg),
            0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
  ASSERT_TRUE(arg.out.ok()) << arg.out.status();
  EXPECT_EQ(arg.out->size(), 200000u);
}

}  // namespace
}  // namespace snapshot
}  // namespace graphsieve
