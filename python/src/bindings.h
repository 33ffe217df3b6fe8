// The pieces of the `_crescent` extension module, one binder per file.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>

#include "store_core.h"

namespace crescent::python {

namespace py = pybind11;
using StoreClass = py::class_<StoreCore, std::shared_ptr<StoreCore>>;

// Releases the GIL for a client call; every binding uses it instead of
// py::gil_scoped_release. When the interpreter finalises while a daemon thread
// is inside a call, taking the GIL back ends that thread with pthread_exit,
// which unwinds its stack by a forced-unwind exception. That unwind starts in
// this destructor, so it must not be noexcept (pybind11's is): a noexcept frame
// turns it into std::terminate, and the process aborts at exit.
class ReleaseGil {
 public:
  ReleaseGil() : state_(PyEval_SaveThread()) {}
  ~ReleaseGil() noexcept(false) { PyEval_RestoreThread(state_); }
  ReleaseGil(const ReleaseGil&) = delete;
  ReleaseGil& operator=(const ReleaseGil&) = delete;

 private:
  PyThreadState* state_;
};

// Lifecycle, copying API, namespace and stats (bind_store.cc).
void BindStore(StoreClass& cls);
// Registered buffers, *_from / *_into, the multi-buffer and prefix forms
// (bind_zero_copy.cc).
void BindZeroCopy(StoreClass& cls);

}  // namespace crescent::python
