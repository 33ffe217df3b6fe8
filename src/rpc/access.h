// Who may make which call (docs/security.md, "Roles"): the caller a connection
// authenticated as, and the role each call of the table needs. Both transports
// check it before the handler runs (control_server.cc, master_server.cc); the
// handlers then act within the caller's tenant and, for a node, on its own
// segments only.
#pragma once

#include <optional>
#include <string>

#include "auth/auth_file.h"
#include "crescent/status.h"
#include "rpc/control_methods.h"

namespace crescent::rpc {

// Who makes a call. A master started without credentials authenticates nobody:
// its callers have no role and may make every call, in the default namespace.
struct Caller {
  std::optional<auth::Role> role;  // nullopt: this master checks no credentials
  std::string name;                // the token's name; empty without a role
  std::string tenant;              // empty: the default namespace
};

// The caller of every call on a master without credentials.
const Caller& Unchecked();

// Whether a token of `role` may make call `m` at all (a node's calls on
// segments are narrowed to its own by the handlers):
//   admin  every call;
//   node   MountSegment, UnmountSegment, Heartbeat, ListSegments,
//          ReportUnreachable, ReportCorruptReplica, Stats, ControlEndpoints;
//   client the calls on keys (puts, gets, exists, prefix queries, removes,
//          RemoveAll and List of its own tenant), ListSegments,
//          ReportUnreachable, ReportCorruptReplica, Stats, ControlEndpoints.
// Only admin takes snapshots and reads them (ReadSnapshot).
bool RoleMayCall(auth::Role role, RpcMethod m);

// PERMISSION_DENIED naming the call, the roles that may make it and the
// caller's token and role.
Status Denied(const Caller& caller, RpcMethod m);

// OK when `caller` may make `m`, else Denied: a branch or two per call.
inline Status CheckRole(const Caller& caller, RpcMethod m) {
  if (!caller.role || RoleMayCall(*caller.role, m)) return Status::Ok();
  return Denied(caller, m);
}

}  // namespace crescent::rpc
