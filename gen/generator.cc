#include "gen/generator.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/io/output_file.h"
#include "gen/click_model.h"
#include "gen/output_sink.h"

namespace graphsieve {

using gen_internal::ClickModel;
using gen_internal::Instance;

absl::StatusOr<Exposure> ParseExposure(std::string_view name) {
  if (name == "popularity") return Exposure::kPopularity;
  if (name == "preference") return Exposure::kPreference;
  return absl::InvalidArgumentError(absl::StrCat("unknown exposure '",
                                                 absl::string_view(name.data(), name.size()),
                                                 "', expected popularity or preference"));
}

const char* ExposureName(Exposure exposure) {
  return exposure == Exposure::kPreference ? "preference" : "popularity";
}

absl::Status GeneratorOptions::Validate() const {
  auto bad = [](const char* what) { return absl::InvalidArgumentError(what); };
  if (num_users < 1) return bad("the number of users (--users) must be >= 1");
  if (num_items < 1) return bad("the number of items (--items) must be >= 1");
  if (num_users > (int64_t{1} << 31) || num_items > (int64_t{1} << 31)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the log would have ", num_users, " users and ", num_items,
        " items (--users, --items, or the preset's times the square root of --scale); each "
        "must be <= 2^31"));
  }
  if (num_instances < 1) return bad("the number of instances (--instances) must be >= 1");
  if (!(repeat_rate >= 0 && repeat_rate <= 10)) return bad("repeat_rate must be in [0, 10]");
  const double pairs = static_cast<double>(num_instances) / (1.0 + repeat_rate);
  const double cells = static_cast<double>(num_users) * static_cast<double>(num_items);
  if (pairs > 0.9 * cells) {
    return absl::InvalidArgumentError(absl::StrCat(
        "num_instances / (1 + repeat_rate) = ", static_cast<int64_t>(pairs),
        " pairs is more than 90% of the ", static_cast<int64_t>(cells),
        " user x item cells; raise --users/--items or --repeat_rate, or lower --instances"));
  }
  if (!(positive_rate > 0 && positive_rate < 0.5)) return bad("positive_rate must be in (0, 0.5)");
  if (!(user_zipf_exponent >= 0 && user_zipf_exponent <= 3))
    return bad("user_zipf_exponent must be in [0, 3]");
  if (!(item_zipf_exponent >= 0 && item_zipf_exponent <= 3))
    return bad("item_zipf_exponent must be in [0, 3]");
  if (latent_dim < 0 || latent_dim > 256) return bad("latent_dim must be in [0, 256]");
  if (!(user_bias_stddev >= 0) || !(item_bias_stddev >= 0) || !(factor_stddev >= 0) ||
      !(pilot_noise_stddev >= 0)) {
    return bad("bias, factor and pilot noise stddevs must be >= 0");
  }
  if (!std::isfinite(popularity_click_coupling) || !std::isfinite(pilot_slope) ||
      !std::isfinite(pilot_shift)) {
    return bad("popularity_click_coupling, pilot_slope and pilot_shift must be finite");
  }
  if (!(exploration >= 0 && exploration <= 1)) return bad("exploration must be in [0, 1]");
  if (!std::isfinite(policy_slope) || !(policy_noise_stddev >= 0) ||
      !std::isfinite(policy_noise_stddev)) {
    return bad("policy_slope must be finite and policy_noise_stddev >= 0");
  }
  if (churn_days < 0 || churn_days > 3650) return bad("churn_days must be in [0, 3650]");
  if (!(new_users_per_day >= 0) || !(new_items_per_day >= 0) || !(item_half_life_days >= 0) ||
      !std::isfinite(new_users_per_day) || !std::isfinite(new_items_per_day) ||
      !std::isfinite(item_half_life_days)) {
    return bad("new_users_per_day, new_items_per_day and item_half_life_days must be >= 0");
  }
  if (churn_days == 0 &&
      (new_users_per_day > 0 || new_items_per_day > 0 || item_half_life_days > 0)) {
    return bad("new_users_per_day, new_items_per_day and item_half_life_days need churn_days > 0");
  }
  if (new_users_per_day * churn_days > static_cast<double>(num_users)) {
    return bad("new_users_per_day * churn_days must be <= the number of users (--users)");
  }
  if (new_items_per_day * churn_days > static_cast<double>(num_items)) {
    return bad("new_items_per_day * churn_days must be <= the number of items (--items)");
  }
  if (threads < 1 || threads > 64) return bad("threads must be in [1, 64]");
  if (gzip && (gzip_level < 1 || gzip_level > 9)) return bad("gzip_level must be in [1, 9]");
  return absl::OkStatus();
}

uint64_t GeneratorOptions::MemoryBytes() const {
  // Per node: Zipf weight and its rank while drawn (16 B), bias (4), factors
  // (4 per dimension), arrival or birth (8), the samplers' suffix sums (8);
  // per item also the last user and last positive user (16). Rounded up to
  // 64 + 8·latent_dim a node, against 58 B an item measured at latent_dim 8.
  const uint64_t per_node = 64 + 8 * static_cast<uint64_t>(std::max(0, latent_dim));
  return (static_cast<uint64_t>(std::max<int64_t>(0, num_users)) +
          static_cast<uint64_t>(std::max<int64_t>(0, num_items))) *
         per_node;
}

uint64_t GeneratorOptions::TextBytes() const {
  const auto digits = [](int64_t n) { return std::to_string(std::max<int64_t>(0, n - 1)).size(); };
  // user,item,label\n with ids of about as many digits as the largest.
  size_t row = digits(num_users) + digits(num_items) + 4;
  if (pilot) row += 11;
  if (truth) row += 11;
  if (churn_days > 0) row += 1 + std::to_string(int64_t{86400} * churn_days).size();
  return static_cast<uint64_t>(std::max<int64_t>(0, num_instances)) * row;
}

absl::StatusOr<GeneratorOptions> GeneratorPreset(std::string_view name, double scale,
                                                 double nodes_scale, double users_scale) {
  if (!(scale > 0) || !std::isfinite(scale)) {
    return absl::InvalidArgumentError(absl::StrCat("scale must be a positive number, got ", scale));
  }
  if (!(nodes_scale >= 0) || !std::isfinite(nodes_scale)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--nodes_scale must be >= 0 (0 = sqrt(scale)), got ", nodes_scale));
  }
  if (!(users_scale >= 0) || !std::isfinite(users_scale)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--users_scale must be >= 0 (0 = as the items), got ", users_scale));
  }
  GeneratorOptions o;
  if (name == "kuairec") {
    // defaults
  } else if (name == "small") {
    o.num_users = 577;
    o.num_items = 1068;
    o.num_instances = 120000;
  } else if (name == "tiny") {
    o.num_users = 60;
    o.num_items = 100;
    o.num_instances = 2000;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown preset '",
                                                   absl::string_view(name.data(), name.size()),
                                                   "', expected kuairec, small or tiny"));
  }
  const double root = nodes_scale > 0 ? nodes_scale : std::sqrt(scale);
  const double users_root = users_scale > 0 ? users_scale : root;
  o.num_users = std::max<int64_t>(1, std::llround(static_cast<double>(o.num_users) * users_root));
  o.num_items = std::max<int64_t>(1, std::llround(static_cast<double>(o.num_items) * root));
  o.num_instances =
      std::max<int64_t>(1, std::llround(static_cast<double>(o.num_instances) * scale));
  return o;
}

namespace {

// Formats one user's rows as CSV lines.
void FormatRows(const GeneratorOptions& options, int64_t user, const std::vector<Instance>& rows,
                std::string* out) {
  out->resize(rows.size() * 64 + 64);
  char* p = out->data();
  char* const end = out->data() + out->size();
  char user_text[24];
  const size_t user_len =
      static_cast<size_t>(std::to_chars(user_text, user_text + 24, user).ptr - user_text);
  for (const Instance& r : rows) {
    std::memcpy(p, user_text, user_len);
    p += user_len;
    *p++ = ',';
    p = std::to_chars(p, end, r.item).ptr;
    *p++ = ',';
    *p++ = static_cast<char>('0' + r.label);
    if (options.pilot) {
      *p++ = ',';
      p = std::to_chars(p, end, static_cast<double>(r.pilot), std::chars_format::fixed, 6).ptr;
    }
    if (options.truth) {
      *p++ = ',';
      p = std::to_chars(p, end, static_cast<double>(r.probability), std::chars_format::fixed, 6)
              .ptr;
    }
    if (options.churn_days > 0) {
      *p++ = ',';
      p = std::to_chars(p, end, r.time_seconds).ptr;
    }
    *p++ = '\n';
  }
  out->resize(static_cast<size_t>(p - out->data()));
}

// One user's output, produced by a worker.
struct UserOutput {
  std::vector<Instance> rows;
  std::string text;  // the CSV lines, when formatting
};

// Runs the model user by user — in windows of users generated (and, with
// `format`, formatted) by options.threads workers — and keeps exact
// statistics on the calling thread; `emit` gets each user's output in user
// order, so the result does not depend on the number of threads.
template <typename Emit>
absl::StatusOr<GeneratorStats> Generate(const GeneratorOptions& options, bool format, Emit emit) {
  if (absl::Status s = options.Validate(); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("generator options: ", s.message()));
  }
  absl::StatusOr<ClickModel> model = ClickModel::Create(options);
  if (!model.ok()) return model.status();
  GeneratorStats stats;
  stats.mu = model->mu();
  stats.pair_scale = model->pair_scale();
  std::vector<int64_t> last_user(options.num_items, -1), last_positive_user(options.num_items, -1);
  const int64_t progress_every = std::max<int64_t>(1, options.num_users / 100);
  const int threads = options.threads;
  const int64_t window = 64 * static_cast<int64_t>(threads);
  std::vector<UserOutput> outputs(static_cast<size_t>(window));
  for (int64_t w0 = 0; w0 < options.num_users; w0 += window) {
    const int64_t w1 = std::min(options.num_users, w0 + window);
    auto work = [&](int t) {
      for (int64_t u = w0 + t; u < w1; u += threads) {
        UserOutput& out = outputs[static_cast<size_t>(u - w0)];
        model->GenerateUser(u, &out.rows);
        if (format) FormatRows(options, u, out.rows, &out.text);
      }
    };
    if (threads == 1) {
      work(0);
    } else {
      std::vector<std::thread> pool;
      for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
      work(0);
      for (std::thread& th : pool) th.join();
    }
    for (int64_t u = w0; u < w1; ++u) {
      const UserOutput& out = outputs[static_cast<size_t>(u - w0)];
      if (!out.rows.empty()) ++stats.users;
      for (const Instance& r : out.rows) {
        if (last_user[r.item] != u) {
          if (last_user[r.item] < 0) ++stats.items;
          last_user[r.item] = u;
          ++stats.pairs;
        }
        if (r.label) {
          ++stats.positive_instances;
          if (last_positive_user[r.item] != u) {
            last_positive_user[r.item] = u;
            ++stats.positive_pairs;
          }
        }
      }
      stats.instances += static_cast<int64_t>(out.rows.size());
      if (absl::Status s = emit(u, out); !s.ok()) return s;
      if (options.progress && ((u + 1) % progress_every == 0 || u + 1 == options.num_users)) {
        options.progress(u + 1, stats.instances);
      }
    }
  }
  return stats;
}

}  // namespace

absl::StatusOr<GeneratorStats> WriteGeneratedLog(const GeneratorOptions& options,
                                                 const std::string& path) {
  if (path.empty())
    return absl::InvalidArgumentError("output path is empty (use '-' for standard output)");
  if (absl::Status s = options.Validate(); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("generator options: ", s.message()));
  }
  const bool to_stdout = path == "-";
  std::optional<OutputFile> out;
  if (!to_stdout) {
    absl::StatusOr<OutputFile> resolved = OutputFile::Resolve(path, "--output");
    if (!resolved.ok()) return resolved.status();
    out = *std::move(resolved);
  }
  const std::string tmp = to_stdout ? path : out->write_path();
  int fd = 1;
  if (!to_stdout) {
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
      return absl::InvalidArgumentError(
          absl::StrCat("cannot create ", tmp, ": ", std::strerror(errno)));
  }
  auto fail = [&](absl::Status s) {
    if (!to_stdout) {
      ::close(fd);
      out->Abandon();
    }
    return s;
  };
  absl::StatusOr<std::unique_ptr<gen_internal::OutputSink>> sink = gen_internal::OutputSink::Create(
      fd, to_stdout ? std::string("<stdout>") : tmp, options.gzip ? options.gzip_level : 0);
  if (!sink.ok()) return fail(sink.status());
  std::string header = "user_id,item_id,label";
  if (options.pilot) header += ",pilot_score";
  if (options.truth) header += ",true_prob";
  if (options.churn_days > 0) header += ",timestamp";
  header += '\n';
  uint64_t bytes = header.size();
  if (absl::Status s = (*sink)->Write(header.data(), header.size()); !s.ok()) return fail(s);
  absl::StatusOr<GeneratorStats> stats =
      Generate(options, /*format=*/true, [&](int64_t, const UserOutput& out) -> absl::Status {
        bytes += out.text.size();
        return (*sink)->Write(out.text.data(), out.text.size());
      });
  if (!stats.ok()) return fail(stats.status());
  if (absl::Status s = (*sink)->Close(); !s.ok()) return fail(s);
  stats->bytes_written = bytes;
  if (!to_stdout) {
    if (::close(fd) != 0) {
      const int err = errno;
      out->Abandon();
      return absl::InternalError(absl::StrCat("closing ", tmp, ": ", std::strerror(err)));
    }
    if (absl::Status s = out->Commit(); !s.ok()) return s;
  }
  return stats;
}

namespace {

// The test draw's instances in index order, with their users.
absl::Status DrawTest(const GeneratorOptions& options, int64_t num_instances,
                      std::vector<int64_t>* users, std::vector<Instance>* rows) {
  if (absl::Status s = options.Validate(); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("generator options: ", s.message()));
  }
  if (num_instances < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("test instances must be >= 1, got ", num_instances));
  }
  absl::StatusOr<ClickModel> model = ClickModel::Create(options);
  if (!model.ok()) return model.status();
  users->resize(static_cast<size_t>(num_instances));
  rows->resize(static_cast<size_t>(num_instances));
  for (int64_t i = 0; i < num_instances; ++i) {
    model->TestImpression(static_cast<uint64_t>(i), &(*users)[i], &(*rows)[i]);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<GeneratorStats> WriteRandomExposureTest(const GeneratorOptions& options,
                                                       int64_t num_instances,
                                                       const std::string& path) {
  absl::StatusOr<OutputFile> out = OutputFile::Resolve(path, "--test_output");
  if (!out.ok()) return out.status();
  std::vector<int64_t> users;
  std::vector<Instance> rows;
  if (absl::Status s = DrawTest(options, num_instances, &users, &rows); !s.ok()) return s;
  std::string text = "user_id,item_id,label";
  if (options.pilot) text += ",pilot_score";
  if (options.truth) text += ",true_prob";
  if (options.churn_days > 0) text += ",timestamp";
  text += '\n';
  GeneratorStats stats;
  std::string line;
  for (size_t i = 0; i < rows.size(); ++i) {
    FormatRows(options, users[i], {rows[i]}, &line);
    text += line;
    stats.positive_instances += rows[i].label;
  }
  stats.instances = num_instances;
  stats.bytes_written = text.size();
  if (absl::Status s = out->WriteAll(text, "--test_output"); !s.ok()) return s;
  return stats;
}

absl::StatusOr<ImpressionLog> GenerateRandomExposureTest(const GeneratorOptions& options,
                                                         int64_t num_instances,
                                                         std::vector<float>* true_probabilities) {
  std::vector<int64_t> users;
  std::vector<Instance> rows;
  if (absl::Status s = DrawTest(options, num_instances, &users, &rows); !s.ok()) return s;
  ImpressionLog log;
  if (true_probabilities != nullptr) true_probabilities->clear();
  for (size_t i = 0; i < rows.size(); ++i) {
    log.user_ids.push_back(static_cast<uint64_t>(users[i]));
    log.item_ids.push_back(rows[i].item);
    log.labels.push_back(rows[i].label);
    if (options.pilot) log.pilot_scores.push_back(rows[i].pilot);
    if (true_probabilities != nullptr) true_probabilities->push_back(rows[i].probability);
  }
  log.rows_read = rows.size();
  return log;
}

absl::StatusOr<ImpressionLog> GenerateImpressionLog(const GeneratorOptions& options,
                                                    GeneratorStats* stats_out,
                                                    std::vector<float>* true_probabilities,
                                                    std::vector<int64_t>* timestamps) {
  ImpressionLog log;
  if (true_probabilities != nullptr) true_probabilities->clear();
  if (timestamps != nullptr) timestamps->clear();
  absl::StatusOr<GeneratorStats> stats =
      Generate(options, /*format=*/false, [&](int64_t u, const UserOutput& out) -> absl::Status {
        for (const Instance& r : out.rows) {
          log.user_ids.push_back(static_cast<uint64_t>(u));
          log.item_ids.push_back(r.item);
          log.labels.push_back(r.label);
          if (options.pilot) log.pilot_scores.push_back(r.pilot);
          if (true_probabilities != nullptr) true_probabilities->push_back(r.probability);
          if (timestamps != nullptr) timestamps->push_back(r.time_seconds);
        }
        return absl::OkStatus();
      });
  if (!stats.ok()) return stats.status();
  log.rows_read = static_cast<uint64_t>(stats->instances);
  if (stats_out != nullptr) *stats_out = *stats;
  return log;
}

}  // namespace graphsieve
