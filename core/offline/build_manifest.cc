// The build's JSON: every result-affecting flag (the manifest's parameters
// and the version id's content), the manifest's build information and the
// report (docs/SNAPSHOT.md). Part of the build job (build_job.h).
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "core/model/pilot_row.h"
#include "core/offline/build_job.h"
#include "core/offline/build_pilot.h"
#include "core/offline/build_stages.h"
#include "core/snapshot/manifest.h"

namespace graphsieve {
namespace build_internal {

nlohmann::json ParametersJson(const BuildOptions& o) {
  const PipelineOptions& p = o.pipeline;
  const LogReaderOptions& r = o.reader;
  nlohmann::json params = {
      {"method", MethodName(p.method)},
      {"resistance", ResistanceMethodName(p.resistance)},
      {"alpha", p.alpha},
      {"floor", p.floor},
      {"product_floor", p.product_floor},
      {"rate_rule", RateRuleName(p.rate_rule)},
      {"kappa", p.kappa},
      {"score_power", p.score_power},
      {"exposure_power", p.exposure_power},
      {"pilot_kappa", p.PilotKappa()},
      {"product_kappa", p.product_kappa},
      {"gamma", p.gamma},
      {"uncertainty_propagation", p.uncertainty_propagation},
      {"score_propagation", p.score_propagation},
      {"symmetric_normalisation", p.symmetric_normalisation},
      {"correct_pilot", p.correct_pilot},
      {"propagation_tolerance", p.propagation_tolerance},
      {"propagation_max_iterations", p.propagation_max_iterations},
      // Floats per stored node row (what readers check the rows against);
      // sketch_columns is k (docs/SNAPSHOT.md).
      {"sketch_dim", p.NodeRowDim() + (UsesBuiltInPilot(o) ? PilotRowFloats(o.pilot.dim) : 0)},
      {"sketch_columns", p.sketch_dim},
      {"unseen_control_variate", p.unseen_control_variate},
      {"solver_tolerance", p.solver_tolerance},
      {"solver_max_iterations", p.solver_max_iterations},
      {"exact_max_nodes", p.exact_max_nodes},
      {"seed", p.seed},
      {"threads", p.threads},
      {"user_col", r.user_column},
      {"item_col", r.item_column},
      {"label_rule", r.label.ToString()},
      {"pilot_col", r.pilot_column},
      {"delimiter", r.delimiter == '\0' ? std::string("auto") : std::string(1, r.delimiter)},
      {"id_mode", r.id_mode == IdMode::kAuto      ? "auto"
                  : r.id_mode == IdMode::kInteger ? "int"
                                                  : "string"},
      {"max_bad_rows", r.max_bad_rows},
      {"pairs_table_format", snapshot::TableFormatName(o.pairs_format)},
  };
  if (o.partitions > 1) params["partitions"] = o.partitions;
  if (UsesBuiltInPilot(o)) {  // the built-in pilot (build_pilot.h); absent = none
    params["pilot"] = "built-in";
    params["pilot_dim"] = o.pilot.dim;
    params["pilot_epochs"] = o.pilot.epochs;
    params["pilot_folds"] = o.pilot.folds;
    params["pilot_learning_rate"] = o.pilot.learning_rate;
    params["pilot_l2"] = o.pilot.l2;
    params["pilot_negative_rate"] = o.pilot.negative_rate;
  }
  return params;
}

std::string Rfc3339(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

snapshot::ManifestInfo MakeManifestInfo(const BuildOptions& options, absl::Time created,
                                        const ImpressionLog& log,
                                        const std::vector<snapshot::InputFileInfo>& inputs) {
  snapshot::ManifestInfo info;
  info.created_at = Rfc3339(created);
  info.inputs = inputs;
  info.input_digest = snapshot::InputDigest(inputs);
  info.parameters = ParametersJson(options);
  info.input_stats = {{"rows_read", log.rows_read},
                      {"bad_rows_skipped", log.bad_rows_skipped},
                      {"bytes_parsed", log.bytes_read}};
  if (!options.tune_rule.empty()) {
    info.tune = {{"rule", options.tune_rule},
                 {"date", options.tune_date},
                 {"report_digest", options.tune_report_digest}};
  }
  return info;
}

}  // namespace build_internal

nlohmann::json BuildReport::ToJson() const {
  nlohmann::json t = nlohmann::json::object();
  for (const StageTiming& s : timings) t[s.stage] = s.seconds;
  nlohmann::json c = nlohmann::json::object();
  for (const StageTiming& s : stage_cpu) c[s.stage] = s.seconds;
  nlohmann::json w = nlohmann::json::object();
  for (const StageTiming& s : write_timings) w[s.stage] = s.seconds;
  nlohmann::json j = {{"version", version},
                      {"snapshot_dir", snapshot_dir},
                      {"published", published},
                      {"instances", instances},
                      {"negative_instances", negative_instances},
                      {"pairs", pairs},
                      {"positive_pairs", positive_pairs},
                      {"users", users},
                      {"items", items},
                      {"components", components},
                      {"rows_read", rows_read},
                      {"bad_rows_skipped", bad_rows_skipped},
                      {"bad_row_examples", bad_row_examples},
                      {"input_bytes", input_bytes},
                      {"achieved_negative_mean_rate", achieved_negative_mean_rate},
                      {"resistance_route", resistance_route},
                      {"db_bytes", db_bytes},
                      {"db_bytes_per_pair", db_bytes_per_pair},
                      {"stage_seconds", t},
                      {"stage_cpu_seconds", c},
                      {"write_seconds", w},
                      {"deleted_versions", deleted_versions},
                      {"removed_temporaries", removed_temporaries},
                      {"warnings", warnings}};
  if (!ranks.is_null()) j["ranks"] = ranks;
  if (built_in_pilot) j["pilot"] = {{"cross_fitted_log_loss", pilot_cross_fitted_log_loss}};
  return j;
}

}  // namespace graphsieve
