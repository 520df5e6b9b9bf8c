// Where a pair's sampling rate came from. The request-path core (batch_scorer.h)
// speaks this enum; the gRPC server maps it to graphsieve.v1.RateSource at its
// border (server/rate_source_mapping.h), as it maps absl::Status to grpc::Status.
//
// Thread-safety: a plain enum.
#ifndef GRAPHSIEVE_CORE_SERVING_RATE_SOURCE_H_
#define GRAPHSIEVE_CORE_SERVING_RATE_SOURCE_H_

#include <cstdint>

namespace graphsieve {

enum class RateSource : uint8_t {
  kExact,     // the pair is stored in the snapshot
  kInferred,  // unseen pair, both nodes known: ScoreUnseenPair (core/model/unseen.h)
  kDefault,   // user or item unknown: the DefaultPolicy (default_policy.h)
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_SERVING_RATE_SOURCE_H_
