"""Checks of the arguments every Store call shares: a list where a list is
meant, text where text is meant, and list lengths that agree.

A str or bytes is iterable, so list("abc") would turn one key into three
("a", "b", "c") and a batch call would quietly answer for them; they are
refused where a list is meant. A length mismatch is answered with
INVALID_ARGUMENT like any other refused batch, and last_error() says why.
"""

from . import _crescent

_ONE_ITEM = (str, bytes, bytearray, memoryview)


def listed(name, value):
    """`value` as a list; TypeError naming `name` for a str or bytes-like."""
    if isinstance(value, _ONE_ITEM):
        raise TypeError("%s must be a list, not %s (it would be taken item by item); "
                        "to pass one, wrap it in a list" % (name, type(value).__name__))
    try:
        return list(value)
    except TypeError:
        raise TypeError("%s must be a list, not %s" % (name, type(value).__name__)) from None


def text(name, value):
    """`value` as a str: bytes are decoded as UTF-8; anything else is a TypeError."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError("%s is not UTF-8: %s" % (name, e)) from None
    raise TypeError("%s must be a str, not %s" % (name, type(value).__name__))


def lengths_differ(name_a, len_a, name_b, len_b):
    """INVALID_ARGUMENT, with last_error() naming the two lengths."""
    return _crescent.invalid_argument("%s and %s differ in length (%d and %d)" %
                                      (name_a, name_b, len_a, len_b))
