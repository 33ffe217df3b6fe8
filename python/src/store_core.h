// StoreCore: the state behind one Python `crescent.Store`.
//
// It owns the Client and, when setup() was asked to contribute memory, an
// in-process store node mounted on the master (Mooncake's global_segment_size
// > 0), started through the `_node` module's factory (local_node.h).
// Every binding method takes its own reference to the Client through Acquire(),
// so close() on one thread never frees a Client another thread is still using:
// the last in-flight call releases it. A null Acquire() means "not set up or
// closed", which the bindings report as -CLOSED.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "crescent/client.h"
#include "crescent/status.h"
#include "local_node.h"

namespace crescent::python {

struct SetupArgs {
  std::string local_hostname;  // data-plane host of a contributed segment
  std::string master_address;  // "" = $CRESCENT_MASTER, else 127.0.0.1:50051
  uint64_t segment_size = 0;   // > 0: contribute a segment of this size
  int64_t rpc_timeout_ms = 5000;
  int rpc_attempts = 4;
  int64_t transfer_timeout_ms = 10000;
  int64_t put_retry_ms = 5000;  // ClientConfig::put_retry_ms
  std::string token;            // ClientConfig::token ("" = none); the local node's too
  std::string node_token;       // the local node's instead ("" = token)
  TlsConfig tls;                // ClientConfig::tls (none: plain); the local node's too
  size_t location_cache = 0;    // ClientConfig::location_cache (0: off)
  // Starts the store node when segment_size > 0 (the `_node` module's; Setup
  // fails with kInternal if a segment is asked for without it).
  const LocalNodeFactory* node_factory = nullptr;
};

// The last failure a call returned to Python on this thread, with its message:
// the int-returning methods (Mooncake's convention) carry only the code, and
// crescent.last_error() gives the words behind it.
inline thread_local Status last_error;

// A Status as Python sees it: 0, or the ErrorCode negated (and kept as the
// thread's last_error).
inline int64_t PyCode(const Status& s) {
  if (!s.ok()) last_error = s;
  return -static_cast<int64_t>(s.code());
}
inline int64_t PyCode(ErrorCode c) { return -static_cast<int64_t>(c); }

class StoreCore {
 public:
  StoreCore();
  ~StoreCore();  // Close()s
  StoreCore(const StoreCore&) = delete;
  StoreCore& operator=(const StoreCore&) = delete;

  // Connects (and proves the master answers), then starts the local segment if
  // asked. Blocking; call without the GIL. Fails if already set up.
  Status Setup(const SetupArgs& args);
  // Drops the client and unmounts the local segment. Idempotent; blocking.
  void Close();

  std::shared_ptr<Client> Acquire() const;
  // Name of the segment this process contributes ("" if none).
  std::string local_segment() const;
  std::string local_node() const;

 private:
  mutable std::mutex mu_;  // guards the three members below, never held across I/O
  std::shared_ptr<Client> client_;
  std::shared_ptr<LocalNode> node_;
  bool setting_up_ = false;
};

}  // namespace crescent::python
