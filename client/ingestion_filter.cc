#include "client/ingestion_filter.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/serving/keep_rule.h"

namespace graphsieve {
namespace {

// kLocal: the keep rule of core/serving on the rates the server sent.
void DecideLocally(absl::Span<const float> rates, absl::Span<const uint8_t> labels,
                   absl::Span<const uint64_t> instance_keys, uint64_t seed, FilterDecisions* out) {
  const size_t n = rates.size();
  std::unique_ptr<bool[]> positives(new bool[n]), keep(new bool[n]);
  for (size_t i = 0; i < n; ++i) positives[i] = labels[i] != 0;
  out->log_odds_offsets.assign(n, 0.0f);
  DecideKeep(rates, absl::MakeConstSpan(positives.get(), n), instance_keys, seed,
             absl::MakeSpan(keep.get(), n), absl::MakeSpan(out->log_odds_offsets));
  out->keep.assign(keep.get(), keep.get() + n);
}

}  // namespace

absl::StatusOr<std::unique_ptr<IngestionFilter>> IngestionFilter::Create(
    const SamplingRateClient* client, const IngestionFilterOptions& options) {
  if (client == nullptr) return absl::InvalidArgumentError("IngestionFilter: client is null");
  return std::unique_ptr<IngestionFilter>(new IngestionFilter(client, options));
}

absl::StatusOr<uint64_t> IngestionFilter::SeedOf(const std::string& version) const {
  {
    absl::MutexLock lock(&mu_);
    if (auto it = seeds_.find(version); it != seeds_.end()) return it->second;
  }
  // Not under the lock: an RPC.
  absl::StatusOr<v1::GetStatusResponse> status = client_->GetStatus();
  if (!status.ok()) return status.status();
  if (status->active().version() != version) {
    return absl::FailedPreconditionError(absl::StrCat(
        "IngestionFilter: rates came from snapshot '", version, "' but the server now serves '",
        status->active().version(), "'; its keep seed is unknown, retry the batch"));
  }
  absl::MutexLock lock(&mu_);
  seeds_[version] = status->active().seed();
  return status->active().seed();
}

absl::StatusOr<FilterDecisions> IngestionFilter::Decide(
    absl::Span<const uint64_t> users, absl::Span<const uint64_t> items,
    absl::Span<const uint8_t> labels, absl::Span<const uint64_t> instance_keys) const {
  if (items.size() != users.size() || labels.size() != users.size() ||
      instance_keys.size() != users.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "IngestionFilter: ", users.size(), " users, ", items.size(), " items, ", labels.size(),
        " labels, ", instance_keys.size(), " instance keys; all must be equal"));
  }
  FilterDecisions out;
  if (options_.mode == IngestionFilterOptions::Mode::kServer) {
    absl::StatusOr<RateBatch> batch = client_->GetDecisions(users, items, labels, instance_keys);
    if (!batch.ok()) return batch.status();
    out.keep = std::move(batch->keep);
    out.rates = std::move(batch->rates);
    out.log_odds_offsets = std::move(batch->log_odds_offsets);
    out.sources = std::move(batch->sources);
    out.snapshot_versions = std::move(batch->snapshot_versions);
    return out;
  }
  absl::StatusOr<RateBatch> batch = client_->GetRates(users, items);
  if (!batch.ok()) return batch.status();
  if (batch->snapshot_versions.size() > 1) {
    return absl::UnavailableError(
        "IngestionFilter: the server swapped snapshots during the batch; retry it");
  }
  uint64_t seed = 0;
  if (!batch->snapshot_versions.empty()) {
    absl::StatusOr<uint64_t> s = SeedOf(batch->snapshot_versions.front());
    if (!s.ok()) return s.status();
    seed = *s;
  }
  DecideLocally(batch->rates, labels, instance_keys, seed, &out);
  out.rates = std::move(batch->rates);
  out.sources = std::move(batch->sources);
  out.snapshot_versions = std::move(batch->snapshot_versions);
  return out;
}

}  // namespace graphsieve
