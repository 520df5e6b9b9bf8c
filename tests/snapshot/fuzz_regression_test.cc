// Regression tests for what fuzz/ and the sanitizer runs found in
// core/snapshot (docs/RELIABILITY.md): every metadata input gives a status
// naming the field, never undefined behaviour; file reads fit small stacks.
#include <pthread.h>

#include <fstream>
#include <string>

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
