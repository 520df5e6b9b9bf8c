// The API's name for a core RateSource: the server's mapping at its gRPC
// border, beside the absl::Status -> grpc::Status one (grpc_status.h). The
// proto room depends on nothing; core has no proto types.
//
// Thread-safety: a pure function.
#ifndef GRAPHSIEVE_SERVER_RATE_SOURCE_MAPPING_H_
#define GRAPHSIEVE_SERVER_RATE_SOURCE_MAPPING_H_

#include "core/serving/rate_source.h"
#include "graphsieve/v1/sampling.pb.h"

namespace graphsieve {

inline v1::RateSource ToProtoRateSource(RateSource source) {
  switch (source) {
    case RateSource::kExact:
      return v1::RATE_SOURCE_EXACT;
    case RateSource::kInferred:
      return v1::RATE_SOURCE_INFERRED;
    case RateSource::kDefault:
      return v1::RATE_SOURCE_DEFAULT;
  }
  return v1::RATE_SOURCE_UNSPECIFIED;
}

}  // namespace graphsieve

#endif  // GRAPHSIEVE_SERVER_RATE_SOURCE_MAPPING_H_
