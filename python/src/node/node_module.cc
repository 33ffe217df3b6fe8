// The `_node` extension: the in-process store node a Store starts when it
// contributes a segment (setup's global_segment_size > 0). The Python package
// imports it only then, so that a client that contributes nothing never loads
// the data-plane servers, segment memory or libpmem2. It exposes one capsule,
// FACTORY, that StoreCore::Setup calls through (local_node.h); the client code
// under it is the one copy in libcrescent_pyclient.so, shared with `_crescent`.
#include <pybind11/pybind11.h>

#include <utility>

#include "local_node.h"
#include "store/store_node.h"

namespace crescent::python {
namespace {

class InProcessNode final : public LocalNode {
 public:
  explicit InProcessNode(std::unique_ptr<store::StoreNode> node) : node_(std::move(node)) {}
  std::string node_id() const override { return node_->node_id(); }
  std::string segment_name() const override { return node_->segment_name(); }
  void Stop() override { node_->Stop(); }

 private:
  std::unique_ptr<store::StoreNode> node_;  // its destructor Stop()s
};

StatusOr<std::unique_ptr<LocalNode>> StartNode(const LocalNodeArgs& args,
                                               const std::string& secret) {
  store::StoreNodeOptions options;
  options.segment_size = args.segment_size;
  options.host = args.host;
  options.master.address = args.master_address;
  options.master.rpc_timeout_ms = args.rpc_timeout_ms;
  options.master.attempts = args.rpc_attempts;
  options.master.token = args.token;
  options.master.tls = args.tls;
  StatusOr<std::unique_ptr<store::StoreNode>> node = store::StoreNode::Start(options, secret);
  if (!node.ok()) return node.status();
  return std::unique_ptr<LocalNode>(std::make_unique<InProcessNode>(std::move(node.value())));
}

const LocalNodeFactory kFactory{&StartNode};

}  // namespace

PYBIND11_MODULE(_node, m) {
  m.doc() = "Crescent's in-process store node; loaded by crescent.Store.setup, not imported";
  // The capsule only lends the address of a constant: nothing to free.
  m.attr("FACTORY") =
      pybind11::capsule(const_cast<LocalNodeFactory*>(&kFactory), kLocalNodeCapsule);
}

}  // namespace crescent::python
