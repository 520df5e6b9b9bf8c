// How a pair with an unknown user or item is rated (RateSource::kDefault),
// shared by graphsieve-server (--default-policy) and the CLI's offline canary.
//
// Thread-safety: a plain value; copy it freely.
#ifndef GRAPHSIEVE_CORE_SERVING_DEFAULT_POLICY_H_
#define GRAPHSIEVE_CORE_SERVING_DEFAULT_POLICY_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/model/unseen.h"

namespace graphsieve {

struct DefaultPolicy {
  enum class Kind {
    kNodeMean,      // the known node's mean rate over its negatives; alpha when neither is known
    kAlpha,         // the snapshot's alpha (target mean rate over negatives)
    kFixed,         // a fixed rate in (0, 1]
    kModel,         // the snapshot's rate rule, the unknown node taken as a node with no pairs
                    // (ScoreUnknownNodePair, core/model/unseen.h)
    kPositiveRate,  // the rule applied to the known node's smoothed positive rate, fitted to α
                    // at build time (node_default.h); node-mean for a snapshot without the fit
  };
  Kind kind = Kind::kNodeMean;
  double fixed_rate = 0.0;  // used by kFixed only

  // "node-mean" | "alpha" | "model" | "positive-rate" | a number in (0, 1] (e.g. "0.25"). Errors
  // name the text.
  static absl::StatusOr<DefaultPolicy> Parse(absl::string_view text);
  std::string ToString() const;

  // The DEFAULT rate given the snapshot's alpha and what is known about the
  // two nodes (nullptr = unknown).
  // kModel needs the model and falls back to alpha here, kPositiveRate to
  // node-mean; use the overload below.
  double Rate(double alpha, const NodeRecord* user, const NodeRecord* item) const;
  // Every kind, given the snapshot's model and the known nodes (nullptr = unknown).
  double Rate(const UnseenModel& model, const NodeView* user, const NodeView* item) const;
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_SERVING_DEFAULT_POLICY_H_
