#include "core/snapshot/format.h"

#include <array>
#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/snapshot/json_field.h"
#include "nlohmann/json.hpp"
#include "rocksdb/cache.h"
#include "rocksdb/env.h"
#include "rocksdb/file_system.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/sst_file_reader.h"
#include "rocksdb/sst_file_writer.h"
#include "rocksdb/table.h"

namespace graphsieve {
namespace snapshot {
namespace {

void PutU32(uint32_t v, char* out) { std::memcpy(out, &v, 4); }
void PutF32(float v, char* out) { std::memcpy(out, &v, 4); }
uint32_t GetU32(const char* in) {
  uint32_t v;
  std::memcpy(&v, in, 4);
  return v;
}
float GetF32(const char* in) {
  float v;
  std::memcpy(&v, in, 4);
  return v;
}

class DiscardLogger final : public rocksdb::Logger {
 public:
  DiscardLogger() : rocksdb::Logger(rocksdb::InfoLogLevel::HEADER_LEVEL) {}
  using rocksdb::Logger::Logv;
  void Logv(const char* /*format*/, va_list /*ap*/) override {}
};

std::shared_ptr<rocksdb::TableFactory> BlockBasedFactory(std::shared_ptr<rocksdb::Cache> cache,
                                                         bool pairs, bool scan_only = false) {
  rocksdb::BlockBasedTableOptions t;
  t.block_size = pairs ? 4096 : 16384;
  // A scan-only reader opens the tables without a filter policy, so the
  // tables' Bloom filters are never read (an iteration does not use them).
  if (!scan_only) t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  t.whole_key_filtering = true;
  t.data_block_index_type = rocksdb::BlockBasedTableOptions::kDataBlockBinaryAndHash;
  t.cache_index_and_filter_blocks = false;  // index + filter live in the table reader
  t.format_version = 5;
  if (cache != nullptr) {
    t.block_cache = std::move(cache);
  } else {
    t.no_block_cache = true;
  }
  return std::shared_ptr<rocksdb::TableFactory>(rocksdb::NewBlockBasedTableFactory(t));
}

}  // namespace

const char* TableFormatName(TableFormat format) {
  switch (format) {
    case TableFormat::kBlockBased:
      return "block";
    case TableFormat::kCuckoo:
      return "cuckoo";
  }
  return "unknown";
}

absl::StatusOr<TableFormat> ParseTableFormat(absl::string_view name) {
  if (name == "block") return TableFormat::kBlockBased;
  if (name == "cuckoo") return TableFormat::kCuckoo;
  return absl::InvalidArgumentError(
      absl::StrCat("table format '", name, "' is not one of block|cuckoo"));
}

std::string EncodeNodeValue(const NodeRecord& r, absl::Span<const float> sketch) {
  std::string out(kNodeRecordBytes + 4 * sketch.size(), '\0');
  char* p = out.data();
  PutU32(r.component, p);
  PutU32(r.degree, p + 4);
  PutF32(r.sum_uncertainty, p + 8);
  PutF32(r.sum_score, p + 12);
  PutF32(r.mean_rate, p + 16);
  PutU32(r.positives, p + 20);
  PutU32(r.impressions, p + 24);
  if (!sketch.empty()) std::memcpy(p + kNodeRecordBytes, sketch.data(), 4 * sketch.size());
  return out;
}

absl::Status DecodeNodeValue(absl::string_view value, NodeRecord* r, absl::Span<float> sketch) {
  const size_t sketch_bytes = 4 * sketch.size();
  const bool with_counts = value.size() == kNodeRecordBytes + sketch_bytes;
  if (!with_counts && value.size() != kNodeRecordBytesV2 + sketch_bytes) {
    return absl::DataLossError(absl::StrCat(
        "node value has ", value.size(), " bytes, expected ", kNodeRecordBytes + sketch_bytes,
        " (or ", kNodeRecordBytesV2 + sketch_bytes, " before format 3)"));
  }
  const size_t record_bytes = with_counts ? kNodeRecordBytes : kNodeRecordBytesV2;
  const char* p = value.data();
  r->component = GetU32(p);
  r->degree = GetU32(p + 4);
  r->sum_uncertainty = GetF32(p + 8);
  r->sum_score = GetF32(p + 12);
  r->mean_rate = GetF32(p + 16);
  r->positives = with_counts ? GetU32(p + 20) : 0;
  r->impressions = with_counts ? GetU32(p + 24) : 0;
  if (!sketch.empty()) std::memcpy(sketch.data(), p + record_bytes, sketch_bytes);
  return absl::OkStatus();
}

namespace {
// The ensembles' stored fits by their names in meta/unseen_model (`Model`:
// UnseenModel or const UnseenModel).
template <typename Model>
auto MemberFits(Model& m) {
  using Fit = decltype(&m.combined);
  return std::array<std::pair<const char*, Fit>, 3>{
      {{"maec", &m.maec_member}, {"pilot", &m.pilot_member}, {"combined", &m.combined}}};
}
}  // namespace

std::string EncodeUnseenModel(const UnseenModel& m) {
  nlohmann::json j = {{"method", m.method},
                      {"alpha", m.alpha},
                      {"floor", m.floor},
                      {"rho", m.rho},
                      {"gamma", m.gamma},
                      {"geff_min", m.geff_min},
                      {"geff_max", m.geff_max},
                      {"uncertainty_propagation", m.uncertainty_propagation},
                      {"score_propagation", m.score_propagation},
                      {"symmetric_normalisation", m.symmetric_normalisation},
                      {"sketch_dim", m.sketch_dim},
                      {"rate_rule", m.rate_rule},
                      {"kappa", m.kappa},
                      {"score_mean", m.score_mean},
                      {"score_power", m.score_power}};
  if (m.exposure_power != 0.0) j["exposure_power"] = m.exposure_power;  // absent = 0 (off)
  if (m.pilot_dim > 0) {  // the built-in pilot's rows end every node row; absent = none
    j["pilot_dim"] = m.pilot_dim;
    j["pilot_bias"] = m.pilot_bias;
  }
  if (m.has_members) {  // max / mean / product: each member's fit; absent = not stored
    nlohmann::json members = nlohmann::json::object();
    for (const auto& [name, f] : MemberFits(m)) {
      members[name] = {{"rule", f->rule},
                       {"floor", f->floor},
                       {"kappa", f->kappa},
                       {"rho", f->rho},
                       {"score_mean", f->score_mean}};
    }
    j["members"] = std::move(members);
  }
  if (m.default_item_rho > 0.0 || m.default_user_rho > 0.0) {  // format 3, fitted
    j["default_prior"] = m.default_prior;
    j["default_smoothing"] = m.default_smoothing;
    j["default_user_rho"] = m.default_user_rho;
    j["default_user_mean"] = m.default_user_mean;
    j["default_item_rho"] = m.default_item_rho;
    j["default_item_mean"] = m.default_item_mean;
  }
  return j.dump();
}

absl::StatusOr<UnseenModel> DecodeUnseenModel(absl::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::DataLossError("meta/unseen_model is not a JSON object");
  }
  UnseenModel m;
  try {
    m.method = IntegerField<int>(j, "method");
    m.alpha = NumberField(j, "alpha");
    m.floor = NumberField(j, "floor");
    m.rho = NumberField(j, "rho");
    m.gamma = NumberField(j, "gamma");
    m.geff_min = NumberField(j, "geff_min");
    m.geff_max = NumberField(j, "geff_max");
    m.uncertainty_propagation = BoolField(j, "uncertainty_propagation");
    m.score_propagation = BoolField(j, "score_propagation");
    m.symmetric_normalisation = BoolField(j, "symmetric_normalisation");
    m.sketch_dim = IntegerField<int>(j, "sketch_dim");
    // Added with the mixture rate rule; snapshots written before it used the
    // floor rule, which these defaults describe.
    m.rate_rule = j.contains("rate_rule") ? IntegerField<int>(j, "rate_rule") : 0;
    m.kappa = NumberFieldOr(j, "kappa", 0.0);
    m.score_mean = NumberFieldOr(j, "score_mean", 0.0);
    m.score_power = NumberFieldOr(j, "score_power", 1.0);        // added later; 1 = the score
    m.exposure_power = NumberFieldOr(j, "exposure_power", 0.0);  // added later; 0 = no discount
    // The built-in pilot's rows (added later); absent = no pilot rows.
    m.pilot_dim = j.contains("pilot_dim") ? IntegerField<int>(j, "pilot_dim") : 0;
    m.pilot_bias = NumberFieldOr(j, "pilot_bias", 0.0);
    // The ensembles' member fits (added later); absent = not stored.
    if (j.contains("members")) {
      const nlohmann::json& members = j.at("members");
      m.has_members = true;
      for (const auto& [name, f] : MemberFits(m)) {
        const nlohmann::json& e = members.at(name);
        f->rule = IntegerField<int>(e, "rule");
        f->floor = NumberField(e, "floor");
        f->kappa = NumberField(e, "kappa");
        f->rho = NumberField(e, "rho");
        f->score_mean = NumberField(e, "score_mean");
      }
    }
    // Format 3: the positive-rate DEFAULT fit; absent = not fitted.
    m.default_prior = NumberFieldOr(j, "default_prior", 0.0);
    m.default_smoothing = NumberFieldOr(j, "default_smoothing", 0.0);
    m.default_user_rho = NumberFieldOr(j, "default_user_rho", 0.0);
    m.default_user_mean = NumberFieldOr(j, "default_user_mean", 0.0);
    m.default_item_rho = NumberFieldOr(j, "default_item_rho", 0.0);
    m.default_item_mean = NumberFieldOr(j, "default_item_mean", 0.0);
  } catch (const nlohmann::json::exception& e) {
    return absl::DataLossError(absl::StrCat("meta/unseen_model: ", JsonErrorText(e)));
  }
  if (m.method < 0 || m.method > UnseenModel::kMaxMethod) {
    return absl::DataLossError(absl::StrCat("meta/unseen_model: method ", m.method));
  }
  if (m.sketch_dim < 0 || m.sketch_dim > 65536) {
    return absl::DataLossError(absl::StrCat("meta/unseen_model: sketch_dim ", m.sketch_dim));
  }
  if (m.pilot_dim < 0 || m.pilot_dim > 256 || m.PilotRowFloats() > m.sketch_dim ||
      !std::isfinite(m.pilot_bias)) {
    return absl::DataLossError(absl::StrCat("meta/unseen_model: pilot_dim ", m.pilot_dim,
                                            " with sketch_dim ", m.sketch_dim, ", pilot_bias ",
                                            m.pilot_bias));
  }
  if (m.rate_rule != 0 && m.rate_rule != 1) {
    return absl::DataLossError(
        absl::StrCat("meta/unseen_model: rate_rule ", m.rate_rule,
                     " (expected 0 floor or 1 mixture; written by a newer builder?)"));
  }
  if (m.rate_rule == 1 && !(m.kappa > 0.0 && m.score_mean >= 0.0)) {
    return absl::DataLossError(absl::StrCat("meta/unseen_model: mixture rule with kappa ", m.kappa,
                                            " and score_mean ", m.score_mean));
  }
  for (double v : {m.default_prior, m.default_smoothing, m.default_user_rho, m.default_user_mean,
                   m.default_item_rho, m.default_item_mean}) {
    if (!(std::isfinite(v) && v >= 0.0) || m.default_prior > 1.0) {
      return absl::DataLossError(absl::StrCat("meta/unseen_model: default fit value ", v,
                                              " (prior ", m.default_prior, ")"));
    }
  }
  for (const auto& [name, f] : MemberFits(m)) {
    if (!m.has_members) break;
    const bool finite = std::isfinite(f->floor) && std::isfinite(f->kappa) &&
                        std::isfinite(f->rho) && std::isfinite(f->score_mean);
    if ((f->rule != 0 && f->rule != 1) || !finite || f->rho < 0.0 || f->floor < 0.0 ||
        f->floor > 1.0 || f->score_mean < 0.0 || (f->rule == 1 && !(f->kappa > 0.0))) {
      return absl::DataLossError(absl::StrCat("meta/unseen_model: members.", name, ": rule ",
                                              f->rule, ", floor ", f->floor, ", kappa ", f->kappa,
                                              ", rho ", f->rho, ", score_mean ", f->score_mean));
    }
  }
  if (!(m.score_power > 0.0 && m.score_power <= 4.0)) {
    return absl::DataLossError(absl::StrCat("meta/unseen_model: score_power ", m.score_power));
  }
  if (!(m.exposure_power >= 0.0 && m.exposure_power <= 2.0)) {
    return absl::DataLossError(
        absl::StrCat("meta/unseen_model: exposure_power ", m.exposure_power));
  }
  return m;
}

rocksdb::ColumnFamilyOptions PairsCfOptions(TableFormat format, bool for_write,
                                            std::shared_ptr<rocksdb::Cache> cache, bool scan_only) {
  rocksdb::ColumnFamilyOptions o;
  o.compression = rocksdb::kNoCompression;
  o.bottommost_compression = rocksdb::kNoCompression;
  o.disable_auto_compactions = true;
  // One output file per compaction: a snapshot is written once.
  o.target_file_size_base = uint64_t{1} << 40;
  o.max_compaction_bytes = uint64_t{1} << 40;
  auto block = BlockBasedFactory(cache, /*pairs=*/true, scan_only);
  // Default CuckooTableOptions: ratio 0.9 (lower ratios did not build faster
  // here and cost bytes: 0.7 → 29 B/pair, 0.5 → 41 B/pair).
  std::shared_ptr<rocksdb::TableFactory> cuckoo(rocksdb::NewCuckooTableFactory());
  std::shared_ptr<rocksdb::TableFactory> plain(rocksdb::NewPlainTableFactory());
  std::shared_ptr<rocksdb::TableFactory> to_write = block;
  if (for_write && format == TableFormat::kCuckoo) to_write = cuckoo;
  o.table_factory.reset(rocksdb::NewAdaptiveTableFactory(to_write, block, plain, cuckoo));
  return o;
}

void InitRocksDbDefaults() {
  static const bool once = [] {
    rocksdb::Env* env = rocksdb::Env::Default();
    (void)rocksdb::FileSystem::Default();
    // One block-based table with a Bloom filter, written and opened in
    // memory: opening it builds BlockBasedTable's own static set of filter
    // policy names (PrefetchIndexAndFilterBlocks) here, under this guard.
    std::unique_ptr<rocksdb::Env> memory(rocksdb::NewMemEnv(env));
    rocksdb::Options o;
    o.env = memory.get();
    o.table_factory = BlockBasedFactory(nullptr, /*pairs=*/false);
    const std::string file = "/graphsieve-rocksdb-init.sst";
    rocksdb::SstFileWriter writer(rocksdb::EnvOptions(), o);
    if (writer.Open(file).ok() && writer.Put("k", "v").ok() && writer.Finish().ok()) {
      rocksdb::SstFileReader reader(o);
      (void)reader.Open(file);  // best effort: a failure only leaves the static to RocksDB
    }
    return true;
  }();
  (void)once;
}

rocksdb::Options PairsSstWriterOptions() {
  InitRocksDbDefaults();
  rocksdb::Options o;
  o.compression = rocksdb::kNoCompression;
  o.bottommost_compression = rocksdb::kNoCompression;
  o.table_factory = BlockBasedFactory(nullptr, /*pairs=*/true);
  return o;
}

rocksdb::ColumnFamilyOptions SmallCfOptions(std::shared_ptr<rocksdb::Cache> cache) {
  rocksdb::ColumnFamilyOptions o;
  o.compression = rocksdb::kNoCompression;
  o.disable_auto_compactions = true;
  o.table_factory = BlockBasedFactory(std::move(cache), /*pairs=*/false);
  return o;
}

absl::Status FromRocks(const rocksdb::Status& s, absl::string_view context) {
  if (s.ok()) return absl::OkStatus();
  std::string msg = absl::StrCat(context, ": ", s.ToString());
  switch (s.code()) {
    case rocksdb::Status::kNotFound:
      return absl::NotFoundError(msg);
    case rocksdb::Status::kCorruption:
      return absl::DataLossError(msg);
    case rocksdb::Status::kInvalidArgument:
      return absl::InvalidArgumentError(msg);
    case rocksdb::Status::kNotSupported:
      return absl::UnimplementedError(msg);
    case rocksdb::Status::kIOError:
      return absl::UnavailableError(msg);
    case rocksdb::Status::kBusy:
    case rocksdb::Status::kTryAgain:
      return absl::UnavailableError(msg);
    default:
      return absl::InternalError(msg);
  }
}

std::shared_ptr<rocksdb::Logger> NullLogger() { return std::make_shared<DiscardLogger>(); }

}  // namespace snapshot
}  // namespace graphsieve
