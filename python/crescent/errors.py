"""Error codes and the exception of the `crescent` package.

Methods that Mooncake's MooncakeDistributedStore defines as returning an int
return 0 (or a count) on success and a negative code on failure here too. The
codes are Crescent's ErrorCode numbers negated (docs/errors.md); they are stable.
Exceptions are raised only where Mooncake has no int to return (setup, get_stats)
or for arguments no call could accept (wrong types, non-contiguous arrays).
"""

from . import _crescent

# code -> name, e.g. -4 -> "OBJECT_NOT_FOUND" (0 -> "OK").
ERROR_NAMES = dict(_crescent.ERROR_NAMES)

# Every code as a module constant: OK = 0, INVALID_ARGUMENT = -1, ...,
# OBJECT_NOT_FOUND = -4, ..., BUFFER_NOT_REGISTERED = -23, CLOSED = -25,
# CHECKSUM_MISMATCH = -26.
CODE_NAMES = sorted(ERROR_NAMES.values())
globals().update({name: code for code, name in ERROR_NAMES.items()})

def last_error():
    """(code, message) of the last failure a Store call returned on this thread
    (by any Store), or (0, "") if none has: the words behind a returned code,
    e.g. (-2, "key of 1025 bytes exceeds the limit of 1024")."""
    return tuple(_crescent.last_error())


def error_name(code):
    """The stable name of a returned code, e.g. error_name(-4) == "OBJECT_NOT_FOUND"."""
    if code >= 0:
        return "OK"
    return ERROR_NAMES.get(code, "UNKNOWN(%d)" % code)


class CrescentError(RuntimeError):
    """A failure the API reports by raising; `code` is the negative error code."""

    def __init__(self, code, message):
        self.code = code
        super().__init__("%s: %s" % (error_name(code), message))
