// StoreCore methods on registered memory: register/unregister, batch_put_from,
// batch_get_into, their _multi_buffers (scatter/gather) forms, and the prefix
// extras. Pointers arrive as integers; the Python layer turns numpy arrays and
// torch tensors into (address, nbytes) first.
//
// Crash safety: register_buffer refuses ranges the kernel says are unmapped,
// and the client refuses any transfer outside a registered range
// (BUFFER_NOT_REGISTERED) or a null pointer (INVALID_ARGUMENT), so a bad integer
// becomes a negative code rather than a fault inside a transfer. Memory that
// cannot be written (a read-only mapping, or an object the caller registered
// read_only) is never a get's destination: ValueError before any I/O.
#include <pybind11/stl.h>

#include <span>

#include "bindings.h"
#include "client/memory_map.h"

namespace crescent::python {
namespace {

constexpr int64_t kClosedCode = -static_cast<int64_t>(ErrorCode::kClosed);
constexpr int64_t kInvalidCode = -static_cast<int64_t>(ErrorCode::kInvalidArgument);

using Ptrs = std::vector<uintptr_t>;
using Sizes = std::vector<size_t>;

std::vector<void*> AsPointers(const Ptrs& ptrs) {
  std::vector<void*> out;
  out.reserve(ptrs.size());
  for (uintptr_t p : ptrs) out.push_back(reinterpret_cast<void*>(p));
  return out;
}

// Raises ValueError when a destination lies in a buffer registered read-only
// (registered to be read, not to be written): no call could write there. Other
// pointers are left to the call, which answers per key.
void RefuseReadOnly(const Client& c, const Ptrs& ptrs) {
  for (uintptr_t p : ptrs) {
    const auto* at = reinterpret_cast<const void*>(p);
    if (p != 0 && c.CheckBuffer(at, 0).ok() &&
        !c.CheckBuffer(at, 0, BufferAccess::kReadWrite).ok()) {
      throw py::value_error("destination address " + std::to_string(p) +
                            " lies in a buffer registered with read_only=True, which a get "
                            "cannot write into");
    }
  }
}

// The _multi_buffers forms: each key's (pointer, size) pairs as slices that
// the client moves straight to and from the store node (no staging copy).
// Keys whose pointers and sizes differ in number (or have none) are answered
// INVALID_ARGUMENT in `out` and left out of the call.
struct SlicedKeys {
  std::vector<std::string> keys;
  std::vector<std::vector<MemorySlice>> slices;
  std::vector<size_t> idx;  // each one's place in the caller's list
};
SlicedKeys Sliced(const std::vector<std::string>& keys, const std::vector<Ptrs>& ptrs,
                  const std::vector<Sizes>& sizes, std::vector<int64_t>& out) {
  SlicedKeys s;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (ptrs[i].empty() || ptrs[i].size() != sizes[i].size()) {
      out[i] = PyCode(Status(ErrorCode::kInvalidArgument,
                             "each key needs one size per buffer, and at least one buffer"));
      continue;
    }
    std::vector<MemorySlice>& slices = s.slices.emplace_back();
    for (size_t j = 0; j < ptrs[i].size(); ++j) {
      slices.push_back({reinterpret_cast<void*>(ptrs[i][j]), sizes[i][j]});
    }
    s.keys.push_back(keys[i]);
    s.idx.push_back(i);
  }
  return s;
}

std::vector<int64_t> PutMulti(Client& c, const std::vector<std::string>& keys,
                              const std::vector<Ptrs>& ptrs, const std::vector<Sizes>& sizes,
                              const PutOptions& opts) {
  std::vector<int64_t> out(keys.size(), kInvalidCode);
  if (ptrs.size() != keys.size() || sizes.size() != keys.size()) return out;
  const SlicedKeys s = Sliced(keys, ptrs, sizes, out);
  std::vector<Status> r = c.BatchPutFromSlices(s.keys, s.slices, opts);
  for (size_t k = 0; k < s.idx.size(); ++k) out[s.idx[k]] = PyCode(r[k]);
  return out;
}

// Returns bytes read per key (the value's size), or a negative code.
std::vector<int64_t> GetMulti(Client& c, const std::vector<std::string>& keys,
                              const std::vector<Ptrs>& ptrs, const std::vector<Sizes>& sizes) {
  std::vector<int64_t> out(keys.size(), kInvalidCode);
  if (ptrs.size() != keys.size() || sizes.size() != keys.size()) return out;
  const SlicedKeys s = Sliced(keys, ptrs, sizes, out);
  std::vector<StatusOr<size_t>> r = c.BatchGetIntoSlices(s.keys, s.slices);
  for (size_t k = 0; k < s.idx.size(); ++k) {
    out[s.idx[k]] = r[k].ok() ? static_cast<int64_t>(r[k].value()) : PyCode(r[k].status());
  }
  return out;
}

}  // namespace

void BindZeroCopy(StoreClass& cls) {
  cls.def("register_buffer",
          [](StoreCore& self, uintptr_t ptr, size_t size, bool read_only) -> int64_t {
            auto c = self.Acquire();
            if (!c) return kClosedCode;
            ReleaseGil nogil;
            const void* at = reinterpret_cast<const void*>(ptr);
            // Read-only memory registered for gets is a ValueError; the client
            // refuses the rest (null, empty, unmapped, overlapping) with a code.
            if (!read_only && client::MappingOf(at, size) == client::Mapping::kReadOnly) {
              throw py::value_error(
                  "the buffer is read-only memory, which a get cannot write into; pass "
                  "read_only=True to register it as a put source only");
            }
            return PyCode(c->RegisterBuffer(
                at, size, read_only ? BufferAccess::kReadOnly : BufferAccess::kReadWrite));
          })
      .def("unregister_buffer",
           [](StoreCore& self, uintptr_t ptr) -> int64_t {
             auto c = self.Acquire();
             if (!c) return kClosedCode;
             ReleaseGil nogil;
             return PyCode(c->UnregisterBuffer(reinterpret_cast<void*>(ptr)));
           })
      // chain=True is batch_put_chain_from: key i records key i-1 as its parent.
      .def("batch_put_from",
           [](StoreCore& self, const std::vector<std::string>& keys, const Ptrs& ptrs,
              const Sizes& sizes, const PutOptions& opts, bool chain) {
             std::vector<int64_t> out(keys.size(), kClosedCode);
             auto c = self.Acquire();
             if (!c) return out;
             ReleaseGil nogil;
             std::vector<void*> p = AsPointers(ptrs);
             std::vector<Status> r = c->BatchPutFrom(keys, p, sizes, opts, chain);
             for (size_t i = 0; i < out.size(); ++i) out[i] = PyCode(r[i]);
             return out;
           })
      .def("batch_get_into",
           [](StoreCore& self, const std::vector<std::string>& keys, const Ptrs& ptrs,
              const Sizes& sizes) {
             std::vector<int64_t> out(keys.size(), kClosedCode);
             auto c = self.Acquire();
             if (!c) return out;
             RefuseReadOnly(*c, ptrs);
             ReleaseGil nogil;
             std::vector<void*> p = AsPointers(ptrs);
             std::vector<StatusOr<size_t>> r = c->BatchGetInto(keys, p, sizes);
             for (size_t i = 0; i < out.size(); ++i) {
               out[i] = r[i].ok() ? static_cast<int64_t>(r[i].value()) : PyCode(r[i].status());
             }
             return out;
           })
      .def("batch_put_from_multi_buffers",
           [](StoreCore& self, const std::vector<std::string>& keys, const std::vector<Ptrs>& ptrs,
              const std::vector<Sizes>& sizes, const PutOptions& opts) {
             auto c = self.Acquire();
             if (!c) return std::vector<int64_t>(keys.size(), kClosedCode);
             ReleaseGil nogil;
             return PutMulti(*c, keys, ptrs, sizes, opts);
           })
      .def("batch_get_into_multi_buffers",
           [](StoreCore& self, const std::vector<std::string>& keys, const std::vector<Ptrs>& ptrs,
              const std::vector<Sizes>& sizes) {
             auto c = self.Acquire();
             if (!c) return std::vector<int64_t>(keys.size(), kClosedCode);
             for (const Ptrs& slices : ptrs) RefuseReadOnly(*c, slices);
             ReleaseGil nogil;
             return GetMulti(*c, keys, ptrs, sizes);
           })
      .def("batch_query_prefix",
           [](StoreCore& self, const std::vector<std::string>& keys) -> int64_t {
             auto c = self.Acquire();
             if (!c) return kClosedCode;
             ReleaseGil nogil;
             StatusOr<size_t> r = c->BatchQueryPrefix(keys);
             return r.ok() ? static_cast<int64_t>(r.value()) : PyCode(r.status());
           })
      .def("batch_get_prefix_into",
           [](StoreCore& self, const std::vector<std::string>& keys, const Ptrs& ptrs,
              const Sizes& sizes) -> int64_t {
             auto c = self.Acquire();
             if (!c) return kClosedCode;
             RefuseReadOnly(*c, ptrs);
             ReleaseGil nogil;
             std::vector<void*> p = AsPointers(ptrs);
             StatusOr<size_t> r = c->GetPrefixInto(keys, p, sizes);
             return r.ok() ? static_cast<int64_t>(r.value()) : PyCode(r.status());
           });
}

}  // namespace crescent::python
