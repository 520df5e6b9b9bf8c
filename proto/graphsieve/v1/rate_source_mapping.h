// The API's name for a core RateSource: the one mapping at the gRPC border,
// used by graphsieve-server's handler and by the CLI's offline path (which
// answers in the API's vocabulary, like a server). Header-only, so neither
// side links the other.
#ifndef GRAPHSIEVE_PROTO_GRAPHSIEVE_V1_RATE_SOURCE_MAPPING_H_
#define GRAPHSIEVE_PROTO_GRAPHSIEVE_V1_RATE_SOURCE_MAPPING_H_

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

#endif  // GRAPHSIEVE_PROTO_GRAPHSIEVE_V1_RATE_SOURCE_MAPPING_H_
