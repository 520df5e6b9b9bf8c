"""The id hashing and keep rule every part of graphsieve shares (core/io/ids.h).

String ids map to uint64 with XXH3-64 (seed 0) of their UTF-8 bytes; the
keep decision of a negative impression is
    unit_interval_from_key(key, seed) < rate,
with the top 53 bits of XXH3-64(key as 8 little-endian bytes, seed) scaled to
[0, 1). XXH3 comes from Debian's libxxhash0 (the library the C++ code links),
through ctypes, so both sides use the same implementation.
"""
import ctypes
import ctypes.util

_lib = None


def _xxhash():
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


_MAX_U64 = (1 << 64) - 1


def hash_string_id(text):
    """XXH3-64 (seed 0) of the UTF-8 bytes of `text` (str or bytes)."""
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    return int(_xxhash().XXH3_64bits(data, len(data)))


def parse_id(value, mode="auto"):
    """An id as graphsieve-build reads it.

    int -> itself (must be in [0, 2^64)). Text: mode "auto" uses a decimal
    integer as is and hashes any other text; "int" requires an integer;
    "string" always hashes. Raises ValueError naming the id.
    """
    if isinstance(value, int) and not isinstance(value, bool):
        if not 0 <= value <= _MAX_U64:
            raise ValueError(f"id {value} does not fit in uint64")
        return value
    text = str(value)
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


def unit_interval_from_key(instance_key, seed):
    """The uniform number in [0, 1) behind keep_negative."""
    data = int(instance_key).to_bytes(8, "little")
    h = int(_xxhash().XXH3_64bits_withSeed(data, 8, int(seed)))
    return (h >> 11) * (2.0 ** -53)


def keep_negative(instance_key, seed, rate):
    """True when a negative impression with this key is kept at this rate."""
    return unit_interval_from_key(instance_key, seed) < rate
