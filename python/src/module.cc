// The `_crescent` extension: error codes, PutOptions and the Store core. The
// Python package (python/crescent) builds the Mooncake-shaped API on top:
// buffer conversion, ReplicateConfig, exceptions.
#include <pybind11/stl.h>

#include "bindings.h"
#include "master/master_config.h"

namespace crescent::python {
namespace {

void BindErrors(py::module_& m) {
  // code (negative, as methods return it) -> stable name, e.g. -4 -> "OBJECT_NOT_FOUND".
  py::dict names;
  for (int32_t c = 0; c <= static_cast<int32_t>(kLastErrorCode); ++c) {
    names[py::int_(-c)] = std::string(ErrorCodeName(static_cast<ErrorCode>(c)));
  }
  m.attr("ERROR_NAMES") = names;
}

void BindPutOptions(py::module_& m) {
  py::class_<PutOptions>(m, "PutOptions")
      .def(py::init<>())
      .def_readwrite("replica_count", &PutOptions::replica_count)
      .def_readwrite("preferred_segment", &PutOptions::preferred_segment)
      .def_readwrite("soft_pin_ttl_ms", &PutOptions::soft_pin_ttl_ms)
      .def_readwrite("hard_pin", &PutOptions::hard_pin)
      .def_readwrite("parent_key", &PutOptions::parent_key);
}

}  // namespace

PYBIND11_MODULE(_crescent, m) {
  m.doc() = "Crescent client core; use the `crescent` package, not this module";
  BindErrors(m);
  m.def("last_error", [] { return py::make_tuple(PyCode(last_error), last_error.message()); });
  // For arguments the Python layer refuses with a code rather than an exception
  // (batch lists of different lengths): the code, and last_error() says why.
  m.def("invalid_argument",
        [](const std::string& why) { return PyCode(Status(ErrorCode::kInvalidArgument, why)); });
  m.attr("MAX_REPLICAS") = master::kMaxReplicas;
  BindPutOptions(m);
  StoreClass cls(m, "StoreCore");
  cls.def(py::init<>());
  BindStore(cls);
  BindZeroCopy(cls);
}

}  // namespace crescent::python
