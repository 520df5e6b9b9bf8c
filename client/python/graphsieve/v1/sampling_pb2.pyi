from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
RATE_SOURCE_DEFAULT: RateSource
RATE_SOURCE_EXACT: RateSource
RATE_SOURCE_INFERRED: RateSource
RATE_SOURCE_UNSPECIFIED: RateSource

class GetSamplingRateRequest(_message.Message):
    __slots__ = ["instance_keys", "item_ids", "labels", "snapshot_version", "user_ids"]
    INSTANCE_KEYS_FIELD_NUMBER: _ClassVar[int]
    ITEM_IDS_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_VERSION_FIELD_NUMBER: _ClassVar[int]
    USER_IDS_FIELD_NUMBER: _ClassVar[int]
    instance_keys: _containers.RepeatedScalarFieldContainer[int]
    item_ids: _containers.RepeatedScalarFieldContainer[int]
    labels: _containers.RepeatedScalarFieldContainer[bool]
    snapshot_version: str
    user_ids: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, user_ids: _Optional[_Iterable[int]] = ..., item_ids: _Optional[_Iterable[int]] = ..., labels: _Optional[_Iterable[bool]] = ..., instance_keys: _Optional[_Iterable[int]] = ..., snapshot_version: _Optional[str] = ...) -> None: ...

class GetSamplingRateResponse(_message.Message):
    __slots__ = ["keep", "log_odds_offsets", "rates", "snapshot_version", "sources"]
    KEEP_FIELD_NUMBER: _ClassVar[int]
    LOG_ODDS_OFFSETS_FIELD_NUMBER: _ClassVar[int]
    RATES_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_VERSION_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    keep: _containers.RepeatedScalarFieldContainer[bool]
    log_odds_offsets: _containers.RepeatedScalarFieldContainer[float]
    rates: _containers.RepeatedScalarFieldContainer[float]
    snapshot_version: str
    sources: _containers.RepeatedScalarFieldContainer[RateSource]
    def __init__(self, rates: _Optional[_Iterable[float]] = ..., sources: _Optional[_Iterable[_Union[RateSource, str]]] = ..., snapshot_version: _Optional[str] = ..., keep: _Optional[_Iterable[bool]] = ..., log_odds_offsets: _Optional[_Iterable[float]] = ...) -> None: ...

class GetStatusRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class GetStatusResponse(_message.Message):
    __slots__ = ["active", "current_error", "current_on_disk", "freshness_lag_seconds", "held_version", "pinned_version", "refresh_history", "rejected_versions", "server_version", "serving", "snapshot_age_seconds", "versions_on_disk"]
    ACTIVE_FIELD_NUMBER: _ClassVar[int]
    CURRENT_ERROR_FIELD_NUMBER: _ClassVar[int]
    CURRENT_ON_DISK_FIELD_NUMBER: _ClassVar[int]
    FRESHNESS_LAG_SECONDS_FIELD_NUMBER: _ClassVar[int]
    HELD_VERSION_FIELD_NUMBER: _ClassVar[int]
    PINNED_VERSION_FIELD_NUMBER: _ClassVar[int]
    REFRESH_HISTORY_FIELD_NUMBER: _ClassVar[int]
    REJECTED_VERSIONS_FIELD_NUMBER: _ClassVar[int]
    SERVER_VERSION_FIELD_NUMBER: _ClassVar[int]
    SERVING_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_AGE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    VERSIONS_ON_DISK_FIELD_NUMBER: _ClassVar[int]
    active: SnapshotSummary
    current_error: str
    current_on_disk: str
    freshness_lag_seconds: float
    held_version: str
    pinned_version: str
    refresh_history: _containers.RepeatedCompositeFieldContainer[RefreshEvent]
    rejected_versions: _containers.RepeatedScalarFieldContainer[str]
    server_version: str
    serving: bool
    snapshot_age_seconds: float
    versions_on_disk: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, serving: bool = ..., active: _Optional[_Union[SnapshotSummary, _Mapping]] = ..., current_on_disk: _Optional[str] = ..., versions_on_disk: _Optional[_Iterable[str]] = ..., pinned_version: _Optional[str] = ..., rejected_versions: _Optional[_Iterable[str]] = ..., refresh_history: _Optional[_Iterable[_Union[RefreshEvent, _Mapping]]] = ..., snapshot_age_seconds: _Optional[float] = ..., server_version: _Optional[str] = ..., held_version: _Optional[str] = ..., freshness_lag_seconds: _Optional[float] = ..., current_error: _Optional[str] = ...) -> None: ...

class PinVersionRequest(_message.Message):
    __slots__ = ["reject_active", "version"]
    REJECT_ACTIVE_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    reject_active: bool
    version: str
    def __init__(self, version: _Optional[str] = ..., reject_active: bool = ...) -> None: ...

class PinVersionResponse(_message.Message):
    __slots__ = ["active_version", "pinned_version"]
    ACTIVE_VERSION_FIELD_NUMBER: _ClassVar[int]
    PINNED_VERSION_FIELD_NUMBER: _ClassVar[int]
    active_version: str
    pinned_version: str
    def __init__(self, active_version: _Optional[str] = ..., pinned_version: _Optional[str] = ...) -> None: ...

class RefreshEvent(_message.Message):
    __slots__ = ["at", "load_seconds", "message", "ok", "version"]
    AT_FIELD_NUMBER: _ClassVar[int]
    LOAD_SECONDS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    OK_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    at: str
    load_seconds: float
    message: str
    ok: bool
    version: str
    def __init__(self, version: _Optional[str] = ..., at: _Optional[str] = ..., ok: bool = ..., message: _Optional[str] = ..., load_seconds: _Optional[float] = ...) -> None: ...

class SnapshotSummary(_message.Message):
    __slots__ = ["achieved_negative_mean_rate", "alpha", "base_version", "components", "covers_through", "created_at", "floor", "gamma", "input_digest", "instances", "items", "manifest_json", "method", "pairs", "positive_pairs", "resistance", "seed", "sketch_dim", "users", "version"]
    ACHIEVED_NEGATIVE_MEAN_RATE_FIELD_NUMBER: _ClassVar[int]
    ALPHA_FIELD_NUMBER: _ClassVar[int]
    BASE_VERSION_FIELD_NUMBER: _ClassVar[int]
    COMPONENTS_FIELD_NUMBER: _ClassVar[int]
    COVERS_THROUGH_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    FLOOR_FIELD_NUMBER: _ClassVar[int]
    GAMMA_FIELD_NUMBER: _ClassVar[int]
    INPUT_DIGEST_FIELD_NUMBER: _ClassVar[int]
    INSTANCES_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    MANIFEST_JSON_FIELD_NUMBER: _ClassVar[int]
    METHOD_FIELD_NUMBER: _ClassVar[int]
    PAIRS_FIELD_NUMBER: _ClassVar[int]
    POSITIVE_PAIRS_FIELD_NUMBER: _ClassVar[int]
    RESISTANCE_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    SKETCH_DIM_FIELD_NUMBER: _ClassVar[int]
    USERS_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    achieved_negative_mean_rate: float
    alpha: float
    base_version: str
    components: int
    covers_through: str
    created_at: str
    floor: float
    gamma: float
    input_digest: str
    instances: int
    items: int
    manifest_json: str
    method: str
    pairs: int
    positive_pairs: int
    resistance: str
    seed: int
    sketch_dim: int
    users: int
    version: str
    def __init__(self, version: _Optional[str] = ..., created_at: _Optional[str] = ..., method: _Optional[str] = ..., alpha: _Optional[float] = ..., floor: _Optional[float] = ..., gamma: _Optional[float] = ..., instances: _Optional[int] = ..., pairs: _Optional[int] = ..., positive_pairs: _Optional[int] = ..., users: _Optional[int] = ..., items: _Optional[int] = ..., components: _Optional[int] = ..., achieved_negative_mean_rate: _Optional[float] = ..., resistance: _Optional[str] = ..., sketch_dim: _Optional[int] = ..., seed: _Optional[int] = ..., input_digest: _Optional[str] = ..., manifest_json: _Optional[str] = ..., base_version: _Optional[str] = ..., covers_through: _Optional[str] = ...) -> None: ...

class RateSource(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
