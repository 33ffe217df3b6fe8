// Whether an address range supplied from Python is mapped memory.
//
// Python hands the binding raw integers as pointers. A wrong one must fail with
// an error code, not crash the interpreter later inside a transfer, so
// register_buffer asks the kernel (mincore) before the range is accepted.
#pragma once

#include <cstddef>
#include <cstdint>

namespace crescent::python {

// True when every page of [ptr, ptr+size) is mapped in this process. False for
// ptr 0, size 0, or a range that wraps around the address space.
bool IsMapped(uintptr_t ptr, size_t size);

}  // namespace crescent::python
