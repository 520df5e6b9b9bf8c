// The documented dataset mappings (docs/DATA.md): MovieLens u.data (read from
// /work/shared/data/ml-100k when present), KuaiRec big_matrix.csv's layout and
// the dataset presets.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "core/io/log_reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/io/test_files.h"
#include "tests/missing_dependency.h"

namespace graphsieve {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// $GRAPHSIEVE_ML100K_DIR, else ../shared/data/ml-100k beside the repository
// (CTest runs tests from the source directory; CI lays shared/ beside the
// clone), else the workplace's /work/shared.
std::string MovieLensPath() {
  if (const char* env = std::getenv("GRAPHSIEVE_ML100K_DIR")) return std::string(env) + "/u.data";
  const std::string beside = "../shared/data/ml-100k/u.data";
  if (std::filesystem::exists(beside)) return beside;
  return "/work/shared/data/ml-100k/u.data";
}

// Reads u.data through the "movielens" preset and checks it against an
// independent std::istream parse of the same file.
TEST(MovieLensTest, UDataMapsToRatingAtLeastFourIsPositive) {
  const std::string path = MovieLensPath();
  if (!std::filesystem::exists(path)) {
    GRAPHSIEVE_SKIP_OR_FAIL("MovieLens 100K at "
                            << path
                            << " (set GRAPHSIEVE_ML100K_DIR to the ml-100k folder to run this "
                               "test)");
  }
  LogReaderOptions options;
  ASSERT_TRUE(ApplyDatasetPreset("movielens", &options).ok());
  ImpressionLog log;
  ASSERT_TRUE(ReadImpressionLog(path, options, &log).ok());

  std::ifstream in(path);
  std::string line;
  size_t rows = 0, positives = 0;
  std::set<uint64_t> users, items;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    uint64_t user = 0, item = 0, ts = 0;
    int rating = 0;
    fields >> user >> item >> rating >> ts;
    ASSERT_LT(rows, log.size());
    EXPECT_EQ(log.user_ids[rows], user) << "row " << rows;
    EXPECT_EQ(log.item_ids[rows], item) << "row " << rows;
    EXPECT_EQ(log.labels[rows], rating >= 4 ? 1 : 0) << "row " << rows;
    positives += rating >= 4;
    users.insert(user);
    items.insert(item);
    ++rows;
  }
  EXPECT_EQ(log.size(), rows);
  size_t read_positives = 0;
  for (uint8_t y : log.labels) read_positives += y;
  EXPECT_EQ(read_positives, positives);
  // The README of ml-100k: 100,000 ratings by 943 users on 1,682 movies.
  EXPECT_EQ(rows, 100000u);
  EXPECT_EQ(users.size(), 943u);
  EXPECT_EQ(items.size(), 1682u);
}

TEST(KuaiRecTest, BigMatrixLayoutMapsVideoIdAndWatchRatio) {
  testing_io::TempFiles files;
  const std::string path =
      files.Write("big_matrix.csv",
                  "user_id,video_id,play_duration,video_duration,time,date,timestamp,watch_ratio\n"
                  "0,3649,13838,10867,2020-07-05 00:08:23.438,20200705,1593878903.438,1.2733965\n"
                  "0,9598,13665,10984,2020-07-05 00:13:41.297,20200705,1593879221.297,3.2441\n"
                  "7175,10000,0,7000,2020-09-05 10:00:00.000,20200905,1599271200.000,3.0\n");
  LogReaderOptions options;
  ASSERT_TRUE(ApplyDatasetPreset("kuairec", &options).ok());
  ImpressionLog log;
  ASSERT_TRUE(ReadImpressionLog(path, options, &log).ok());
  EXPECT_THAT(log.user_ids, ElementsAre(0, 0, 7175));
  EXPECT_THAT(log.item_ids, ElementsAre(3649, 9598, 10000));
  EXPECT_THAT(log.labels, ElementsAre(0, 1, 0));  // watch_ratio > 3 (strictly)
}

TEST(DatasetPresetTest, GraphsieveResetsAndUnknownIsAnError) {
  LogReaderOptions options;
  ASSERT_TRUE(ApplyDatasetPreset("movielens", &options).ok());
  ASSERT_TRUE(ApplyDatasetPreset("graphsieve", &options).ok());
  EXPECT_TRUE(options.column_names.empty());
  EXPECT_EQ(options.label.column, "label");
  EXPECT_EQ(options.label.op, LabelRule::Op::kBinary);
  EXPECT_EQ(ApplyDatasetPreset("netflix", &options).message(),
            "unknown dataset 'netflix', expected graphsieve, movielens, kuairec or mind");
}

}  // namespace
}  // namespace graphsieve
