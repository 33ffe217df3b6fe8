"""Turning Python objects into (address, nbytes) for the zero-copy calls.

Accepted where a buffer is expected:
  * an int: a raw address (the caller vouches for it; the C++ side still
    refuses null and anything outside a registered buffer);
  * a numpy array (or any object with __array_interface__): C-contiguous only;
  * a torch tensor: contiguous and on the CPU only (the data plane reads host
    memory; a CUDA pointer would be dereferenced by memcpy and crash).
Values for put/put_batch may also be bytes, bytearray or memoryview.
"""

import ctypes

from ._args import listed


def _is_torch_tensor(obj):
    return type(obj).__module__.startswith("torch") and hasattr(obj, "data_ptr")


def address_of(obj):
    """(address, nbytes or None) of `obj`; None when obj is a bare int."""
    if isinstance(obj, bool):
        raise TypeError("a buffer is expected, not a bool")
    if isinstance(obj, int):
        if obj < 0:
            raise ValueError("a pointer cannot be negative")
        return obj, None
    if _is_torch_tensor(obj):
        if obj.device.type != "cpu":
            raise ValueError("only CPU tensors can be used as buffers (got %s)" % obj.device)
        if not obj.is_contiguous():
            raise ValueError("tensor must be contiguous")
        return obj.data_ptr(), obj.numel() * obj.element_size()
    ai = getattr(obj, "__array_interface__", None)
    if ai is not None:
        flags = getattr(obj, "flags", None)
        contiguous = flags.c_contiguous if flags is not None else ai.get("strides") is None
        if not contiguous:
            raise ValueError("array must be C-contiguous")
        return ai["data"][0], int(obj.nbytes)
    raise TypeError("a buffer is expected (int address, numpy array or CPU torch tensor), "
                    "got %s" % type(obj).__name__)


def is_read_only(obj):
    """True when Python marks `obj` as not to be written (a numpy array with
    writeable=False: a read-only memmap, or an array over an immutable bytes).
    An int address says nothing; the kernel's mapping is checked in C++."""
    flags = getattr(obj, "flags", None)
    return getattr(obj, "__array_interface__", None) is not None and \
        flags is not None and not flags.writeable


def refuse_read_only(objs):
    """ValueError when a get would write into an object marked read-only."""
    for obj in objs:
        if is_read_only(obj):
            raise ValueError("a get cannot write into a read-only array (writeable=False); "
                             "pass a writable destination")


def address_and_size(obj, size=None):
    """(address, size): `size` defaults to the object's nbytes and may not exceed it."""
    addr, nbytes = address_of(obj)
    if size is None:
        if nbytes is None:
            raise ValueError("a size is required with an int address")
        return addr, nbytes
    size = int(size)
    if size < 0:
        raise ValueError("a size cannot be negative")
    if nbytes is not None and size > nbytes:
        raise ValueError("size %d exceeds the buffer's %d bytes" % (size, nbytes))
    return addr, size


def addresses_and_sizes(objs, sizes):
    """Parallel lists for a batch; `sizes` may be None when every obj knows its size."""
    objs = list(objs)
    sizes = [None] * len(objs) if sizes is None else listed("sizes", sizes)
    if len(sizes) != len(objs):
        raise ValueError("%d buffers but %d sizes" % (len(objs), len(sizes)))
    pairs = [address_and_size(o, s) for o, s in zip(objs, sizes)]
    return [p for p, _ in pairs], [s for _, s in pairs]


def byte_view(value):
    """A C-contiguous 1-D byte memoryview of a value to put."""
    if _is_torch_tensor(value):
        if value.device.type != "cpu":
            raise ValueError("only CPU tensors can be stored (got %s)" % value.device)
        # Tensors have no buffer protocol (and bfloat16 has no numpy dtype), so
        # view the bytes through ctypes; the view keeps the tensor alive.
        tensor = value.contiguous()
        nbytes = tensor.numel() * tensor.element_size()
        if nbytes == 0:
            return memoryview(b"")
        raw = (ctypes.c_ubyte * nbytes).from_address(tensor.data_ptr())
        raw._owner = tensor
        value = raw
    if isinstance(value, str):
        raise TypeError("put takes bytes-like values, not str (encode it first)")
    mv = memoryview(value)
    if not mv.c_contiguous:
        raise ValueError("value must be C-contiguous")
    return mv.cast("B") if (mv.ndim != 1 or mv.format != "B") else mv
