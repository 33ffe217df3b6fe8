#include "rpc/access.h"

#include "rpc/server_metrics.h"

namespace crescent::rpc {

const Caller& Unchecked() {
  static const Caller caller;
  return caller;
}

namespace {

enum class Who : uint8_t { kAdmin, kNodes, kClients, kAll };

Who WhoMayCall(RpcMethod m) {
  switch (m) {
    case RpcMethod::kMountSegment:
    case RpcMethod::kUnmountSegment:
    case RpcMethod::kHeartbeat: return Who::kNodes;
    case RpcMethod::kPutStart:
    case RpcMethod::kPutEnd:
    case RpcMethod::kPutRevoke:
    case RpcMethod::kBatchPutStart:
    case RpcMethod::kBatchPutEnd:
    case RpcMethod::kBatchPutRevoke:
    case RpcMethod::kGetReplicaList:
    case RpcMethod::kGetLongestPrefix:
    case RpcMethod::kBatchGetReplicaList:
    case RpcMethod::kExists:
    case RpcMethod::kBatchExists:
    case RpcMethod::kBatchQueryPrefix:
    case RpcMethod::kRemove:
    case RpcMethod::kBatchRemove:
    case RpcMethod::kRemoveByPrefix:
    case RpcMethod::kRemoveAll:
    case RpcMethod::kList:
    case RpcMethod::kEndSession:
    case RpcMethod::kTouchKeys: return Who::kClients;
    case RpcMethod::kListSegments:
    case RpcMethod::kReportUnreachable:
    case RpcMethod::kReportCorruptReplica:
    case RpcMethod::kStats:
    case RpcMethod::kControlEndpoints: return Who::kAll;
    case RpcMethod::kSnapshot:
    case RpcMethod::kReadSnapshot: return Who::kAdmin;
  }
  return Who::kAdmin;
}

std::string_view WhoName(Who who) {
  switch (who) {
    case Who::kAdmin: return "the admin role";
    case Who::kNodes: return "the node or admin role";
    case Who::kClients: return "the client or admin role";
    case Who::kAll: return "any role";
  }
  return "the admin role";
}

}  // namespace

bool RoleMayCall(auth::Role role, RpcMethod m) {
  if (role == auth::Role::kAdmin) return true;
  switch (WhoMayCall(m)) {
    case Who::kAll: return true;
    case Who::kNodes: return role == auth::Role::kNode;
    case Who::kClients: return role == auth::Role::kClient;
    case Who::kAdmin: return false;
  }
  return false;
}

Status Denied(const Caller& caller, RpcMethod m) {
  std::string message(RpcMethodName(m));
  message += " needs ";
  message += WhoName(WhoMayCall(m));
  message += "; token '" + caller.name + "' has the ";
  message += caller.role ? auth::RoleName(*caller.role) : std::string_view("no");
  message += " role";
  return Status(ErrorCode::kPermissionDenied, std::move(message));
}

}  // namespace crescent::rpc
