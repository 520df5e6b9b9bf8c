"""The id hashing and keep rule every part of graphsieve shares (core/io/ids.h,
client/ingestion_filter.h).

String ids map to uint64 with XXH3-64 (seed 0) of their UTF-8 bytes; the
keep decision of a negative impression is
    unit_interval_from_key(key, seed) < rate,
with the top 53 bits of XXH3-64(key as 8 little-endian bytes, seed) scaled to
[0, 1). XXH3 comes from Debian's libxxhash0 (the library the C++ code links),
through ctypes, so both sides use the same implementation. Likewise the
log-odds offset log(rate) is computed in float32 by the C library's logf, the
function the C++ side's std::log(float) calls, so offsets match bit for bit.
"""
import ctypes
import ctypes.util
import numbers
from typing import Any, List, Optional, Sequence, Tuple, Union

# An id or instance key: an int in [0, 2^64) (numpy integers too), or text
# (a decimal integer, or any other text, which is hashed).
Id = Union[int, str, bytes]
# An impression's label: True/False, 0/1 or "0"/"1"/"true"/"false".
Label = Union[bool, int, str]

_lib: Optional[ctypes.CDLL] = None
_libm: Optional[ctypes.CDLL] = None


def _xxhash() -> ctypes.CDLL:
    global _lib
    if _lib is None:
        name = ctypes.util.find_library("xxhash") or "libxxhash.so.0"
        lib = ctypes.CDLL(name)
        lib.XXH3_64bits.restype = ctypes.c_uint64
        lib.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        lib.XXH3_64bits_withSeed.restype = ctypes.c_uint64
        lib.XXH3_64bits_withSeed.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64]
        _lib = lib
    return _lib


def _logf() -> Any:
    global _libm
    if _libm is None:
        lib = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
        lib.logf.restype = ctypes.c_float
        lib.logf.argtypes = [ctypes.c_float]
        _libm = lib
    return _libm.logf


_MAX_U64 = (1 << 64) - 1


def hash_string_id(text: Union[str, bytes]) -> int:
    """XXH3-64 (seed 0) of the UTF-8 bytes of `text` (str or bytes)."""
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    return int(_xxhash().XXH3_64bits(data, len(data)))


def parse_id(value: Id, mode: str = "auto") -> int:
    """An id as graphsieve-build reads it.

    int (numpy integers too) -> itself (must be in [0, 2^64)). Text: mode
    "auto" uses a decimal integer as is and hashes any other text; "int"
    requires an integer; "string" always hashes. Floats and bools are refused
    (a float column is usually an id column with missing values). Raises
    ValueError naming the id.
    """
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        number = int(value)
        if not 0 <= number <= _MAX_U64:
            raise ValueError(f"id {number} does not fit in uint64")
        return number
    if not isinstance(value, (str, bytes)):
        raise ValueError(f"id {value!r} is a {type(value).__name__}, expected an int or text")
    text = value.decode("utf-8") if isinstance(value, bytes) else value
    if text == "":
        raise ValueError("empty id")
    if mode == "string":
        return hash_string_id(text)
    if mode not in ("auto", "int"):
        raise ValueError(f"unknown id mode '{mode}', expected auto, int or string")
    if text.isascii() and text.isdigit():
        number = int(text)
        if number > _MAX_U64:
            raise ValueError(f"id '{text}' does not fit in uint64 (max {_MAX_U64})")
        return number
    if mode == "int":
        raise ValueError(f"id '{text}' is not a decimal integer (id mode 'int')")
    return hash_string_id(text)


def unit_interval_from_key(instance_key: int, seed: int) -> float:
    """The uniform number in [0, 1) behind keep_negative."""
    data = int(instance_key).to_bytes(8, "little")
    h = int(_xxhash().XXH3_64bits_withSeed(data, 8, int(seed)))
    return (h >> 11) * (2.0 ** -53)


def keep_negative(instance_key: int, seed: int, rate: float) -> bool:
    """True when a negative impression with this key is kept at this rate."""
    return unit_interval_from_key(instance_key, seed) < rate


_LABEL_TEXT = {"0": False, "1": True, "false": False, "true": True}


def parse_label(value: Label, index: Optional[int] = None) -> bool:
    """An impression's label as a bool (True = positive): True/False, 0/1 (any
    numeric type) or the text "0", "1", "true", "false". Anything else raises
    ValueError naming the value (and its index when given): bool("0") would
    silently make every text label positive."""
    if isinstance(value, str):
        label = _LABEL_TEXT.get(value.strip().lower())
        if label is not None:
            return label
    elif value in (0, 1):
        return bool(value)
    where = "" if index is None else f" at index {index}"
    raise ValueError(f"label {value!r}{where} is not one of 0, 1, True, False, '0', '1'")


def log_odds_offset(rate: float) -> float:
    """log(rate) rounded as the C++ side rounds it (float32 logf)."""
    return float(_logf()(rate))


def decide_locally(rates: Sequence[float], labels: Sequence[bool], instance_keys: Sequence[int],
                   seed: int) -> Tuple[List[bool], List[float]]:
    """(keep, log_odds_offsets) as the server decides them: positives always
    kept, a negative iff keep_negative(key, seed, rate); every impression carries
    log(rate). labels are bools, instance_keys ints."""
    keep = [bool(label) or keep_negative(key, seed, rate)
            for rate, label, key in zip(rates, labels, instance_keys)]
    return keep, [log_odds_offset(rate) for rate in rates]
