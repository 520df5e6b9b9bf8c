#include "core/snapshot/manifest.h"

#include <xxhash.h>

#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/snapshot/file_util.h"
#include "core/snapshot/json_field.h"

namespace graphsieve {
namespace snapshot {
namespace {

using nlohmann::json;

constexpr int kHistogramBins = 20;

absl::StatusOr<uint64_t> ParseHex64(const std::string& s) {
  if (s.size() != 16) return absl::InvalidArgumentError("not 16 hex digits");
  uint64_t v = 0;
  for (char c : s) {
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else {
      return absl::InvalidArgumentError("not 16 hex digits");
    }
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  return v;
}

json SolveToJson(const SolveSummary& s) {
  return {{"component", s.component},
          {"nodes", s.nodes},
          {"method", s.method},
          {"right_hand_sides", s.right_hand_sides},
          {"max_iterations", s.max_iterations},
          {"max_relative_residual", s.max_relative_residual},
          {"converged", s.converged},
          {"message", s.message}};
}

}  // namespace

std::string InputDigest(const std::vector<InputFileInfo>& inputs) {
  std::string buf;
  for (const InputFileInfo& f : inputs) {
    absl::StrAppend(&buf, f.size_bytes, ":", Hex64(f.xxh3), ";");
  }
  return Hex64(XXH3_64bits(buf.data(), buf.size()));
}

json RateHistogram(const std::vector<float>& rates) {
  std::vector<uint64_t> counts(kHistogramBins, 0);
  for (float r : rates) {
    int bin = static_cast<int>(std::ceil(static_cast<double>(r) * kHistogramBins)) - 1;
    if (bin < 0) bin = 0;
    if (bin >= kHistogramBins) bin = kHistogramBins - 1;
    ++counts[bin];
  }
  std::vector<double> upper;
  for (int b = 1; b <= kHistogramBins; ++b)
    upper.push_back(static_cast<double>(b) / kHistogramBins);
  return {{"bin_upper_edges", upper}, {"pair_counts", counts}};
}

json BuildManifest(const PairTable& pairs, const PipelineResult& result, const ManifestInfo& info,
                   TableFormat pairs_format, const std::vector<ManifestFileEntry>& files,
                   const ManifestPartInfo& part) {
  json inputs = json::array();
  for (const InputFileInfo& f : info.inputs) {
    inputs.push_back({{"path", f.path}, {"size_bytes", f.size_bytes}, {"xxh3", Hex64(f.xxh3)}});
  }
  json solves = json::array();
  bool all_converged = true;
  int max_iterations = 0;
  double max_residual = 0;
  for (const SolveSummary& s : result.solves) {
    solves.push_back(SolveToJson(s));
    all_converged = all_converged && s.converged;
    max_iterations = std::max(max_iterations, s.max_iterations);
    max_residual = std::max(max_residual, s.max_relative_residual);
  }
  json timings = json::array();
  for (const StageTiming& t : info.timings) {
    timings.push_back({{"stage", t.stage}, {"seconds", t.seconds}});
  }
  json pipeline_timings = json::array();
  for (const StageTiming& t : result.timings) {
    pipeline_timings.push_back({{"stage", t.stage}, {"seconds", t.seconds}});
  }
  json file_list = json::array();
  uint64_t total_bytes = 0;
  for (const ManifestFileEntry& f : files) {
    file_list.push_back({{"path", f.path}, {"size_bytes", f.size_bytes}, {"xxh3", Hex64(f.xxh3)}});
    if (f.path.rfind(std::string(kDbDir) + "/", 0) == 0) total_bytes += f.size_bytes;
  }
  uint64_t users = pairs.num_users(), items = pairs.num_items();
  json m = {
      {"format_version", kFormatVersion},
      {"version", info.version},
      {"created_at", info.created_at},
      {"generator", info.generator},
      {"generator_version", info.generator_version},
      {"checksum_algorithm", "XXH3-64 (seed 0) of each file's bytes, 16 hex digits"},
      {"inputs", inputs},
      {"input_digest", info.input_digest},
      {"input_stats", info.input_stats},
      {"parameters", info.parameters},
      {"counts",
       {{"instances", pairs.total_instances},
        {"negative_instances", pairs.total_negatives},
        {"pairs", pairs.num_pairs()},
        {"positive_pairs", result.positive_pairs},
        {"users", users},
        {"items", items},
        {"components", result.num_components}}},
      {"achieved_negative_mean_rate", result.achieved_negative_mean_rate},
      {"rate_histogram", RateHistogram(result.rate)},
      {"solver",
       {{"all_converged", all_converged},
        {"max_iterations", max_iterations},
        {"max_relative_residual", max_residual},
        {"uncertainty_iterations", result.uncertainty_iterations},
        {"score_iterations", result.score_iterations},
        {"solves", solves}}},
      {"timings", {{"builder", timings}, {"pipeline", pipeline_timings}}},
      {"storage",
       {{"pairs_table_format", TableFormatName(pairs_format)},
        {"pair_key_bytes", kPairKeyBytes},
        {"pair_value_bytes", kPairValueBytes},
        {"node_key_bytes", kNodeKeyBytes},
        {"node_value_bytes", kNodeRecordBytes + 4 * result.nodes.sketch_dim},
        {"db_bytes", total_bytes},
        {"db_bytes_per_pair",
         pairs.num_pairs() == 0 ? 0.0 : static_cast<double>(total_bytes) / pairs.num_pairs()}}},
      {"files", file_list},
  };
  if (!part.index_path.empty()) {
    m["storage"]["serving_index"] = {{"path", part.index_path},
                                     {"format_version", kIndexFileFormatVersion},
                                     {"size_bytes", part.index_bytes}};
    if (part.index_key_ordered) m["storage"]["serving_index"]["region_order"] = "key";
  }
  if (!info.delta.is_null()) m["delta"] = info.delta;
  if (!info.tune.is_null()) m["tune"] = info.tune;
  m["partitioning"] = {{"partition", part.partition},
                       {"num_partitions", part.num_partitions},
                       {"rule",
                        "XXH3-64 of the user id's 8 little-endian bytes, seed "
                        "0x9e3779b97f4a7c15, modulo num_partitions (core/io/partition.h)"}};
  return m;
}

absl::StatusOr<ParsedManifest> ParseManifest(absl::string_view text, const std::string& source) {
  json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::DataLossError(
        absl::StrCat(source, ": not a complete JSON object (", text.size(), " bytes)"));
  }
  ParsedManifest out;
  ManifestSummary& s = out.summary;
  std::string format_name;
  std::string in;  // the object being read, for errors: "parameters", "files[3]", ...
  try {
    int format_version = IntegerField<int>(j, "format_version");
    if (format_version < kOldestReadableFormatVersion || format_version > kFormatVersion) {
      return absl::FailedPreconditionError(
          absl::StrCat(source, ": format_version ", format_version, ", this reader reads ",
                       kOldestReadableFormatVersion, " to ", kFormatVersion));
    }
    s.version = StringField(j, "version");
    s.created_at = StringField(j, "created_at");
    const json& p = ObjectField(j, "parameters");
    in = "parameters";
    s.method = StringField(p, "method");
    s.resistance = StringField(p, "resistance");
    s.alpha = NumberField(p, "alpha");
    s.floor = NumberField(p, "floor");
    s.gamma = NumberField(p, "gamma");
    s.sketch_dim = IntegerField<int>(p, "sketch_dim");
    s.seed = IntegerField<uint64_t>(p, "seed");
    in.clear();
    const json& c = ObjectField(j, "counts");
    in = "counts";
    s.instances = IntegerField<uint64_t>(c, "instances");
    s.pairs = IntegerField<uint64_t>(c, "pairs");
    s.positive_pairs = IntegerField<uint64_t>(c, "positive_pairs");
    s.users = IntegerField<uint64_t>(c, "users");
    s.items = IntegerField<uint64_t>(c, "items");
    s.components = IntegerField<uint64_t>(c, "components");
    in.clear();
    s.achieved_negative_mean_rate = NumberField(j, "achieved_negative_mean_rate");
    s.input_digest = StringField(j, "input_digest");
    const json& storage = ObjectField(j, "storage");
    in = "storage";
    format_name = StringField(storage, "pairs_table_format");
    s.pairs_table_format = format_name;
    s.db_bytes = IntegerField<uint64_t>(storage, "db_bytes");
    // Optional (absent in versions written before them).
    if (storage.contains("serving_index")) {
      const json& x = ObjectField(storage, "serving_index");
      in = "storage.serving_index";
      out.index_path = StringField(x, "path");
      s.index_bytes = IntegerField<uint64_t>(x, "size_bytes");
      if (x.contains("region_order")) {
        const std::string order = StringField(x, "region_order");
        if (order != "key") {
          return absl::FailedPreconditionError(
              absl::StrCat(source, ": storage.serving_index.region_order '", order,
                           "': this reader knows \"key\" (or the field absent)"));
        }
        out.index_key_ordered = true;
      }
    }
    in.clear();
    if (j.contains("delta")) {
      const json& d = ObjectField(j, "delta");
      in = "delta";
      s.base_version = StringField(d, "base_version");
      s.covers_through = StringField(d, "covers_through");
      in.clear();
    }
    if (j.contains("partitioning")) {
      const json& part = ObjectField(j, "partitioning");
      in = "partitioning";
      s.partition = IntegerField<uint32_t>(part, "partition");
      s.num_partitions = IntegerField<uint32_t>(part, "num_partitions");
      if (s.num_partitions < 1 || s.partition >= s.num_partitions) {
        return absl::DataLossError(absl::StrCat(source, ": partitioning: partition ", s.partition,
                                                " of ", s.num_partitions));
      }
      in.clear();
    }
    const json& files = j.at("files");
    if (!files.is_array()) {
      return absl::DataLossError(
          absl::StrCat(source, ": 'files' must be an array, not ", files.type_name()));
    }
    for (size_t i = 0; i < files.size(); ++i) {
      const json& f = files[i];
      in = absl::StrCat("files[", i, "]");
      if (!f.is_object()) {
        return absl::DataLossError(
            absl::StrCat(source, ": ", in, " must be an object, not ", f.dump()));
      }
      ManifestFileEntry e;
      e.path = StringField(f, "path");
      e.size_bytes = IntegerField<uint64_t>(f, "size_bytes");
      absl::StatusOr<uint64_t> h = ParseHex64(StringField(f, "xxh3"));
      if (!h.ok()) {
        return absl::DataLossError(
            absl::StrCat(source, ": files[", e.path, "].xxh3: ", h.status().message()));
      }
      e.xxh3 = *h;
      if (e.path.empty() || e.path[0] == '/' || e.path.find("..") != std::string::npos) {
        return absl::DataLossError(absl::StrCat(source, ": bad file path '", e.path, "'"));
      }
      out.files.push_back(std::move(e));
    }
  } catch (const json::exception& e) {
    return absl::DataLossError(absl::StrCat(
        source, ": ", in.empty() ? "" : absl::StrCat("in ", in, ": "), JsonErrorText(e)));
  }
  absl::StatusOr<TableFormat> format = ParseTableFormat(format_name);
  if (!format.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat(source, ": storage.pairs_table_format: ", format.status().message()));
  }
  out.pairs_format = *format;
  if (out.files.empty()) return absl::DataLossError(absl::StrCat(source, ": lists no files"));
  if (!out.index_path.empty()) {
    // The index file must be one of the checksummed files.
    bool listed = false;
    for (const ManifestFileEntry& f : out.files) listed = listed || f.path == out.index_path;
    if (!listed) {
      return absl::DataLossError(absl::StrCat(source, ": storage.serving_index.path '",
                                              out.index_path, "' is not in files"));
    }
  }
  s.json = std::string(text);
  return out;
}

}  // namespace snapshot
}  // namespace graphsieve
