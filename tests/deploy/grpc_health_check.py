#!/usr/bin/env python3
"""Calls grpc.health.v1.Health/Check the way Kubernetes' gRPC probes do.

Usage: grpc_health_check.py HOST:PORT SERVICE [EXPECTED]
SERVICE "" is the server as a whole (liveness); graphsieve.v1.SamplingRateService is
readiness (docs/SERVER.md, "Health, readiness, drain"). Prints the status; exits 0 when
it equals EXPECTED (default SERVING), 1 otherwise or when the call fails.

The health messages are two one-field protobufs, encoded here by hand so that no
generated stubs are needed (Debian's python3-grpcio has no grpc_health module):
HealthCheckRequest{string service = 1}, HealthCheckResponse{ServingStatus status = 1}.
"""
import sys

import grpc

STATUS = {0: "UNKNOWN", 1: "SERVING", 2: "NOT_SERVING", 3: "SERVICE_UNKNOWN"}


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    target, service = sys.argv[1], sys.argv[2]
    expected = sys.argv[3] if len(sys.argv) == 4 else "SERVING"
    name = service.encode()
    request = (b"\x0a" + varint(len(name)) + name) if name else b""
    with grpc.insecure_channel(target) as channel:
        check = channel.unary_unary("/grpc.health.v1.Health/Check")
        try:
            response = check(request, timeout=10)
        except grpc.RpcError as e:
            print(f"health {target} '{service}': {e.code().name} {e.details()}")
            return 1
    # Field 1, varint: b"\x08" + status; an empty message means status 0.
    status = response[1] if len(response) >= 2 and response[0] == 0x08 else 0
    text = STATUS.get(status, str(status))
    print(f"health {target} '{service}': {text}")
    return 0 if text == expected else 1


if __name__ == "__main__":
    sys.exit(main())
