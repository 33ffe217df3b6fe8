"""Values whose every byte names the put that wrote them.

A value is a 32-byte header (magic, key hash, put id, size) followed by a
stream from a PRNG seeded with (key hash, put id). `derive` builds it;
`identify` reads any bytes back and says which put of which key they are, or
why they are no put's at all. Two puts never share a put id (worker id in the
high bits), so a matching value proves exactly one origin.
"""

import hashlib
import struct

import numpy as np

MAGIC = b"CRCH"
HEADER = struct.Struct("<4sIQQQ")  # magic, reserved, key hash, put id, size
MIN_SIZE = HEADER.size


def key_hash(key):
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")


def _body(khash, put_id, length):
    rng = np.random.Generator(np.random.PCG64([khash, put_id]))
    return rng.bytes(length)


def derive(key, put_id, size):
    """The exact bytes of put `put_id` of `key` (size >= MIN_SIZE)."""
    khash = key_hash(key)
    return HEADER.pack(MAGIC, 0, khash, put_id, size) + _body(khash, put_id, size - HEADER.size)


def identify(key, data):
    """(put_id, None) when `data` is exactly a put of `key`; else (claimed put id or None, reason)."""
    if len(data) < HEADER.size:
        return None, "short value: %d bytes" % len(data)
    magic, _, khash, put_id, size = HEADER.unpack_from(data)
    if magic != MAGIC:
        return None, "no header: first bytes %s" % bytes(data[:8]).hex()
    if khash != key_hash(key):
        return put_id, "another key's value (key hash %016x, put %d)" % (khash, put_id)
    if size != len(data):
        return put_id, "length %d, header says %d" % (len(data), size)
    expected = _body(khash, put_id, size - HEADER.size)
    body = memoryview(data)[HEADER.size:]
    if body != expected:
        diff = next(i for i in range(len(expected)) if body[i] != expected[i])
        return put_id, "body differs from put %d at byte %d" % (put_id, HEADER.size + diff)
    return put_id, None
