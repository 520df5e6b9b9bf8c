#include "core/serving/default_policy.h"

#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/model/node_default.h"

namespace graphsieve {

absl::StatusOr<DefaultPolicy> DefaultPolicy::Parse(absl::string_view text) {
  DefaultPolicy p;
  if (text == "node-mean") {
    p.kind = Kind::kNodeMean;
    return p;
  }
  if (text == "alpha") {
    p.kind = Kind::kAlpha;
    return p;
  }
  if (text == "model") {
    p.kind = Kind::kModel;
    return p;
  }
  if (text == "positive-rate") {
    p.kind = Kind::kPositiveRate;
    return p;
  }
  double v = 0;
  if (!absl::SimpleAtod(text, &v) || !std::isfinite(v)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--default-policy: '", text,
        "' is not 'node-mean', 'alpha', 'model', 'positive-rate' or a rate in (0, 1]"));
  }
  if (!(v > 0.0 && v <= 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--default-policy: fixed rate ", text, " is outside (0, 1]"));
  }
  p.kind = Kind::kFixed;
  p.fixed_rate = v;
  return p;
}

std::string DefaultPolicy::ToString() const {
  switch (kind) {
    case Kind::kNodeMean:
      return "node-mean";
    case Kind::kAlpha:
      return "alpha";
    case Kind::kModel:
      return "model";
    case Kind::kPositiveRate:
      return "positive-rate";
    case Kind::kFixed:
      return absl::StrFormat("%g", fixed_rate);
  }
  return "?";
}

double DefaultPolicy::Rate(double alpha, const NodeRecord* user, const NodeRecord* item) const {
  switch (kind) {
    case Kind::kFixed:
      return fixed_rate;
    case Kind::kAlpha:
    case Kind::kModel:
      return alpha;
    case Kind::kNodeMean:
    case Kind::kPositiveRate:  // without the model: node-mean
      // A node without negatives has no mean rate (stored as 0): fall through to alpha.
      if (user != nullptr && user->mean_rate > 0.0f) return user->mean_rate;
      if (item != nullptr && item->mean_rate > 0.0f) return item->mean_rate;
      return alpha;
  }
  return alpha;
}

double DefaultPolicy::Rate(const UnseenModel& model, const NodeView* user,
                           const NodeView* item) const {
  if (kind == Kind::kModel) return ScoreUnknownNodePair(user, item, model);
  if (kind == Kind::kPositiveRate) {
    // One side is unknown (both known is an INFERRED pair); a snapshot
    // without the side's fit (before format 3, uniform) falls to node-mean.
    if (item != nullptr && HasNodeDefault(model, /*is_item=*/true)) {
      return NodeDefaultRate(item->record, /*is_item=*/true, model);
    }
    if (user != nullptr && HasNodeDefault(model, /*is_item=*/false)) {
      return NodeDefaultRate(user->record, /*is_item=*/false, model);
    }
  }
  return Rate(model.alpha, user != nullptr ? &user->record : nullptr,
              item != nullptr ? &item->record : nullptr);
}

}  // namespace graphsieve
