// The pieces of the `_crescent` extension module, one binder per file.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>

#include "store_core.h"

namespace crescent::python {

namespace py = pybind11;
using StoreClass = py::class_<StoreCore, std::shared_ptr<StoreCore>>;

// Lifecycle, copying API, namespace and stats (bind_store.cc).
void BindStore(StoreClass& cls);
// Registered buffers, *_from / *_into, the multi-buffer and prefix forms
// (bind_zero_copy.cc).
void BindZeroCopy(StoreClass& cls);

}  // namespace crescent::python
