"""The errors graphsieve_client raises for a failed RPC."""
from typing import Optional

import grpc


class ServerError(grpc.RpcError):
    """A call to graphsieve-server failed: the gRPC status code and the server's message.

    Attributes: status_code (grpc.StatusCode, e.g. INVALID_ARGUMENT for a bad
    request, UNAVAILABLE once the retries ran out, NOT_FOUND for a pinned
    version the server no longer holds), message (the server's or gRPC's
    details text), method ("GetSamplingRate", "GetStatus", "PinVersion") and
    target (the "host:port" called). It is a grpc.RpcError, and like the
    errors grpc raises it answers code() and details().
    """

    def __init__(self, status_code: grpc.StatusCode, message: str, method: str, target: str):
        super().__init__(f"{method} on {target}: {status_code.name}: {message}")
        self.status_code = status_code
        self.message = message
        self.method = method
        self.target = target

    def code(self) -> grpc.StatusCode:
        return self.status_code

    def details(self) -> str:
        return self.message

    @classmethod
    def from_rpc_error(cls, error: grpc.RpcError, method: str, target: str) -> "ServerError":
        """The ServerError of an error grpc raised (its code() and details())."""
        code: Optional[grpc.StatusCode] = error.code() if hasattr(error, "code") else None
        details: Optional[str] = error.details() if hasattr(error, "details") else None
        return cls(code or grpc.StatusCode.UNKNOWN, details or str(error), method, target)


class SnapshotChangedError(RuntimeError):
    """IngestionFilter(mode="local") only: the server swapped snapshots under a batch. Retry it."""


class VersionMismatchError(RuntimeError):
    """A partitioned target's parts kept answering from different snapshot versions
    (a swap outlasting the servers' --previous-version-hold-seconds, or parts that
    follow different roots). Retry later; the message names the versions."""
