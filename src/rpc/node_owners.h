// Which node token holds which store node, on a master with credentials
// (docs/security.md, "Nodes"). A node token's mount claims the node id it
// mounts for; while the master knows that node (it mounted, and has not timed
// out since), only the token holding it mounts on it, heartbeats it, unmounts
// its segments, or mounts a segment name one of its segments holds. Any other
// node token is refused PERMISSION_DENIED, naming the node or the segment.
// Admins and callers without a role (a master without credentials) are never
// narrowed.
//
// The claims live in the master's memory only: after a master restart every
// node's heartbeat answers NODE_UNKNOWN, the node mounts again, and that mount
// claims its node id anew. A claim on a node the master no longer knows (it
// timed out) is stale: the next mount of that id, by any node token, claims it.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "master/master_service.h"
#include "rpc/access.h"

namespace crescent::rpc {

class NodeOwners {
 public:
  explicit NodeOwners(const master::MasterService& master) : master_(master) {}

  // Runs `mount` unless a node token mounts on a node, or a segment name, that
  // another token holds; then, for a node token, claims the node when it
  // succeeds. One mount of a node token at a time.
  Status Mount(const Caller& caller, const master::SegmentSpec& spec,
               const std::function<Status()>& mount);
  // OK unless a node token heartbeats a node the master knows and it does not
  // hold (an unknown node is left to the master: NODE_UNKNOWN, and a mount).
  Status CheckHeartbeat(const Caller& caller, std::string_view node) const;
  // OK unless a node token unmounts a mounted segment of a node it does not
  // hold.
  Status CheckUnmount(const Caller& caller, std::string_view segment) const;

 private:
  static bool Narrowed(const Caller& caller) { return caller.role == auth::Role::kNode; }
  // Whether `caller` may act on `node`: it holds it, or the master does not
  // know it (mu_ held).
  bool MayActOnLocked(const Caller& caller, std::string_view node) const;

  const master::MasterService& master_;
  mutable std::mutex mu_;
  std::map<std::string, std::string, std::less<>> holders_;  // node id -> token name
};

}  // namespace crescent::rpc
