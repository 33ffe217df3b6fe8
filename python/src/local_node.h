// The seam between the two extension modules. `_crescent` (what `import
// crescent` loads) is the client alone; a Store that contributes a segment
// (setup's global_segment_size > 0) starts an in-process store node, which
// lives in `_node` with the data-plane servers and libpmem2 under it. The
// Python package imports `_node` only then, and hands its LocalNodeFactory,
// wrapped in a capsule named kLocalNodeCapsule, to StoreCore::Setup. This
// header is all the two modules share: plain data and an interface, no code.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "crescent/status.h"
#include "crescent/tls_config.h"

namespace crescent::python {

// What a setup asks of its store node (store::StoreNodeOptions, in setup's terms).
struct LocalNodeArgs {
  uint64_t segment_size = 0;
  std::string host;            // data-plane bind and advertised address, a literal
  std::string master_address;  // "" = $CRESCENT_MASTER, else 127.0.0.1:50051
  int64_t rpc_timeout_ms = 5000;
  int rpc_attempts = 4;
  std::string token;  // MasterClientOptions::token ("" = none)
  TlsConfig tls;      // MasterClientOptions::tls (none: plain)
};

// A started store node, mounted on the master. Stop() unmounts and stops
// serving; destroying it Stop()s.
class LocalNode {
 public:
  virtual ~LocalNode() = default;
  virtual std::string node_id() const = 0;
  virtual std::string segment_name() const = 0;
  virtual void Stop() = 0;
};

struct LocalNodeFactory {
  // Starts a node with the cluster secret; blocking (binds, mounts).
  StatusOr<std::unique_ptr<LocalNode>> (*start)(const LocalNodeArgs& args,
                                                const std::string& secret);
};

inline constexpr const char* kLocalNodeCapsule = "crescent._node.LocalNodeFactory";

}  // namespace crescent::python
