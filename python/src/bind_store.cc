// StoreCore methods: setup/close, the copying API, existence, removal,
// session hints, sizes and stats. Every client call runs with the GIL released; Python objects are
// only touched before and after, with it held.
#include <pybind11/stl.h>

#include <span>

#include "bindings.h"

namespace crescent::python {
namespace {

constexpr int64_t kClosedCode = -static_cast<int64_t>(ErrorCode::kClosed);

// A read-only byte view of a Python buffer. The Python layer hands over
// C-contiguous 1-D byte memoryviews; anything else is refused here too.
std::span<const std::byte> Bytes(const py::buffer_info& info) {
  if (info.ndim != 1 || info.itemsize != 1 || (info.size > 1 && info.strides[0] != 1)) {
    throw py::value_error("value must be a C-contiguous byte buffer");
  }
  return {static_cast<const std::byte*>(info.ptr), static_cast<size_t>(info.size)};
}

py::bytes ToBytes(const std::vector<std::byte>& v) {
  return py::bytes(reinterpret_cast<const char*>(v.data()), v.size());
}

// This process's own client: per-operation calls, keys, bytes and latency
// (Client::OpStats) and its retry and fallback counters (Client::Counters).
py::dict ClientDict(const Client& client) {
  py::dict ops;
  for (const auto& [name, s] : client.OpStats()) {
    py::dict o;
    o["calls"] = s.calls;
    o["ok_keys"] = s.ok_keys;
    o["failed_keys"] = s.failed_keys;
    o["bytes"] = s.bytes;
    o["seconds"] = s.seconds;
    o["p50_seconds"] = s.p50_seconds;
    o["p99_seconds"] = s.p99_seconds;
    ops[py::str(name)] = o;
  }
  const ClientCounters c = client.Counters();
  py::dict d;
  d["ops"] = ops;
  d["put_retries"] = c.put_retries;
  d["shm_fallbacks"] = c.shm_fallbacks;
  d["replica_fallbacks"] = c.replica_fallbacks;
  d["lease_retries"] = c.lease_retries;
  d["checksum_mismatches"] = c.checksum_mismatches;
  d["copy_ahead_kept"] = c.copy_ahead_kept;
  d["copy_ahead_discarded"] = c.copy_ahead_discarded;
  d["shm_mapped_bytes"] = c.shm_mapped_bytes;
  d["shm_warmed_bytes"] = c.shm_warmed_bytes;
  d["location_hits"] = c.location_hits;
  d["location_misses"] = c.location_misses;
  d["location_fallbacks"] = py::dict(py::arg("checksum") = c.location_fallbacks_checksum,
                                     py::arg("expired") = c.location_fallbacks_expired,
                                     py::arg("refused") = c.location_fallbacks_refused,
                                     py::arg("unreachable") = c.location_fallbacks_unreachable);
  d["location_touches_sent"] = c.location_touches_sent;
  return d;
}

py::dict StatDict(const ClusterStat& s, const StoreCore& core, const Client& client) {
  py::dict d;
  d["objects"] = s.objects;
  d["pending_puts"] = s.pending_puts;
  d["capacity_bytes"] = s.capacity_bytes;
  d["used_bytes"] = s.used_bytes;
  d["held_bytes"] = s.held_bytes;
  py::list segments;
  for (const SegmentUsage& seg : s.segments) {
    py::dict e;
    e["name"] = seg.name;
    e["owner_node"] = seg.owner_node;
    e["tier"] = seg.tier;
    e["endpoint"] = seg.endpoint;
    e["capacity"] = seg.capacity;
    e["used"] = seg.used;
    segments.append(e);
  }
  d["segments"] = segments;
  d["counters"] = s.counters;
  d["client"] = ClientDict(client);
  d["master_address"] = client.master_address();
  std::string local = core.local_segment();
  d["local_segment"] = local.empty() ? py::object(py::none()) : py::object(py::str(local));
  return d;
}

// The store node's factory from `_node`'s FACTORY capsule (local_node.h);
// null for None. Anything else is a caller's mistake: TypeError.
const LocalNodeFactory* NodeFactory(const py::object& capsule) {
  if (capsule.is_none()) return nullptr;
  if (!PyCapsule_IsValid(capsule.ptr(), kLocalNodeCapsule)) {
    throw py::type_error("node_factory must be crescent._node.FACTORY");
  }
  return static_cast<const LocalNodeFactory*>(
      PyCapsule_GetPointer(capsule.ptr(), kLocalNodeCapsule));
}

}  // namespace

void BindStore(StoreClass& cls) {
  cls.def(
         "setup",
         [](StoreCore& self, const std::string& local_hostname, const std::string& master,
            uint64_t segment_size, int64_t rpc_timeout_ms, int rpc_attempts,
            int64_t transfer_timeout_ms, int64_t put_retry_ms, const py::object& node_factory,
            const std::string& token, const std::string& node_token, const std::string& tls_ca,
            const std::string& tls_cert, const std::string& tls_key,
            const std::string& tls_server_name, size_t location_cache) {
           SetupArgs a{local_hostname, master,       segment_size,
                       rpc_timeout_ms, rpc_attempts, transfer_timeout_ms,
                       put_retry_ms,   token,        node_token};
           a.tls = {tls_ca, tls_cert, tls_key, tls_server_name};
           a.location_cache = location_cache;
           a.node_factory = NodeFactory(node_factory);
           Status s;
           {
             ReleaseGil nogil;
             s = self.Setup(a);
           }
           return py::make_tuple(PyCode(s), s.message());
         },
         py::arg("local_hostname"), py::arg("master_address"), py::arg("segment_size"),
         py::arg("rpc_timeout_ms"), py::arg("rpc_attempts"), py::arg("transfer_timeout_ms"),
         py::arg("put_retry_ms"), py::arg("node_factory") = py::none(), py::arg("token") = "",
         py::arg("node_token") = "", py::arg("tls_ca") = "", py::arg("tls_cert") = "",
         py::arg("tls_key") = "", py::arg("tls_server_name") = "", py::arg("location_cache") = 0)
      .def("close",
           [](StoreCore& self) {
             ReleaseGil nogil;
             self.Close();
           })
      .def("is_open", [](const StoreCore& self) { return self.Acquire() != nullptr; })
      .def("local_segment", &StoreCore::local_segment)
      .def("put",
           [](StoreCore& self, const std::string& key, const py::buffer& value,
              const PutOptions& opts) -> int64_t {
             py::buffer_info info = value.request();
             std::span<const std::byte> bytes = Bytes(info);
             auto c = self.Acquire();
             if (!c) return kClosedCode;
             ReleaseGil nogil;
             return PyCode(c->Put(key, bytes, opts));
           })
      .def("put_batch",
           [](StoreCore& self, const std::vector<std::string>& keys,
              const std::vector<py::buffer>& values, const PutOptions& opts) {
             std::vector<py::buffer_info> infos;
             std::vector<std::span<const std::byte>> spans;
             for (const py::buffer& b : values) {
               infos.push_back(b.request());
               spans.push_back(Bytes(infos.back()));
             }
             std::vector<int64_t> out(keys.size(), kClosedCode);
             auto c = self.Acquire();
             if (!c) return out;
             ReleaseGil nogil;
             std::vector<Status> r = c->BatchPut(keys, spans, opts);
             for (size_t i = 0; i < r.size() && i < out.size(); ++i) out[i] = PyCode(r[i]);
             return out;
           })
      // get/get_batch: (code, bytes); the Python layer maps failure to b"" as
      // Mooncake does, and keeps the code for callers that want it.
      .def("get",
           [](StoreCore& self, const std::string& key) {
             auto c = self.Acquire();
             if (!c) return py::make_tuple(kClosedCode, py::bytes());
             StatusOr<std::vector<std::byte>> r = Status();
             {
               ReleaseGil nogil;
               r = c->Get(key);
             }
             if (!r.ok()) return py::make_tuple(PyCode(r.status()), py::bytes());
             return py::make_tuple(0, ToBytes(r.value()));
           })
      // (code, key, bytes): the longest stored key prefixing `key` and its
      // value; the key as bytes (a stored key need not be UTF-8).
      .def("get_longest_prefix",
           [](StoreCore& self, const std::string& key) {
             auto c = self.Acquire();
             if (!c) return py::make_tuple(kClosedCode, py::bytes(), py::bytes());
             StatusOr<KeyValue> r = Status();
             {
               ReleaseGil nogil;
               r = c->GetLongestPrefix(key);
             }
             if (!r.ok()) return py::make_tuple(PyCode(r.status()), py::bytes(), py::bytes());
             return py::make_tuple(0, py::bytes(r->key), ToBytes(r->value));
           })
      .def("get_batch",
           [](StoreCore& self, const std::vector<std::string>& keys) {
             py::list out;
             auto c = self.Acquire();
             if (!c) {
               for (size_t i = 0; i < keys.size(); ++i) {
                 out.append(py::make_tuple(kClosedCode, py::bytes()));
               }
               return out;
             }
             std::vector<StatusOr<std::vector<std::byte>>> r;
             {
               ReleaseGil nogil;
               r = c->BatchGet(keys);
             }
             for (auto& v : r) {
               out.append(v.ok() ? py::make_tuple(0, ToBytes(v.value()))
                                 : py::make_tuple(PyCode(v.status()), py::bytes()));
             }
             return out;
           })
      .def("is_exist",
           [](StoreCore& self, const std::string& key) -> int64_t {
             auto c = self.Acquire();
             if (!c) return kClosedCode;
             ReleaseGil nogil;
             StatusOr<bool> r = c->Exists(key);
             if (!r.ok()) return PyCode(r.status());
             return r.value() ? 1 : 0;
           })
      .def("batch_is_exist",
           [](StoreCore& self, const std::vector<std::string>& keys) {
             std::vector<int64_t> out(keys.size(), kClosedCode);
             auto c = self.Acquire();
             if (!c) return out;
             ReleaseGil nogil;
             std::vector<StatusOr<bool>> r = c->BatchExists(keys);
             for (size_t i = 0; i < out.size(); ++i) {
               out[i] = r[i].ok() ? int64_t{r[i].value() ? 1 : 0} : PyCode(r[i].status());
             }
             return out;
           })
      .def("remove",
           [](StoreCore& self, const std::string& key, bool force) -> int64_t {
             auto c = self.Acquire();
             if (!c) return kClosedCode;
             ReleaseGil nogil;
             return PyCode(c->Remove(key, force));
           })
      .def("remove_all",
           [](StoreCore& self, bool force) -> int64_t {
             auto c = self.Acquire();
             if (!c) return kClosedCode;
             ReleaseGil nogil;
             StatusOr<size_t> r = c->RemoveAll(force);
             return r.ok() ? static_cast<int64_t>(r.value()) : PyCode(r.status());
           })
      .def("end_session",
           [](StoreCore& self, const std::vector<std::string>& keys) -> int64_t {
             auto c = self.Acquire();
             if (!c) return kClosedCode;
             ReleaseGil nogil;
             StatusOr<size_t> r = c->EndSession(keys);
             return r.ok() ? static_cast<int64_t>(r.value()) : PyCode(r.status());
           })
      .def("get_size",
           [](StoreCore& self, const std::string& key) -> int64_t {
             auto c = self.Acquire();
             if (!c) return kClosedCode;
             ReleaseGil nogil;
             StatusOr<uint64_t> r = c->GetSize(key);
             return r.ok() ? static_cast<int64_t>(r.value()) : PyCode(r.status());
           })
      .def("client_metrics",
           [](StoreCore& self) {
             auto c = self.Acquire();
             if (!c) return py::make_tuple(kClosedCode, std::string("store is closed"));
             return py::make_tuple(0, c->Metrics());
           })
      .def("get_stats", [](StoreCore& self) {
        auto c = self.Acquire();
        if (!c) return py::make_tuple(kClosedCode, "store is closed");
        StatusOr<ClusterStat> r = Status();
        {
          ReleaseGil nogil;
          r = c->Stat();
        }
        if (!r.ok()) return py::make_tuple(PyCode(r.status()), r.status().message());
        return py::make_tuple(0, StatDict(r.value(), self, *c));
      });
}

}  // namespace crescent::python
