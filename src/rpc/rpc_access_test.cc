// The role table (access.h): which role may make which call of the control
// table, and what a refusal says.
#include <gmock/gmock.h>

#include "rpc/access.h"

namespace crescent::rpc {
namespace {

using auth::Role;
using ::testing::HasSubstr;

constexpr RpcMethod kKeyCalls[] = {RpcMethod::kPutStart,         RpcMethod::kPutEnd,
                                   RpcMethod::kPutRevoke,        RpcMethod::kBatchPutStart,
                                   RpcMethod::kBatchPutEnd,      RpcMethod::kBatchPutRevoke,
                                   RpcMethod::kGetReplicaList,   RpcMethod::kBatchGetReplicaList,
                                   RpcMethod::kExists,           RpcMethod::kBatchExists,
                                   RpcMethod::kBatchQueryPrefix, RpcMethod::kRemove,
                                   RpcMethod::kBatchRemove,      RpcMethod::kRemoveByPrefix,
                                   RpcMethod::kRemoveAll,        RpcMethod::kList,
                                   RpcMethod::kEndSession,       RpcMethod::kGetLongestPrefix,
                                   RpcMethod::kTouchKeys};
constexpr RpcMethod kNodeCalls[] = {RpcMethod::kMountSegment, RpcMethod::kUnmountSegment,
                                    RpcMethod::kHeartbeat};
constexpr RpcMethod kEveryRoleCalls[] = {RpcMethod::kListSegments, RpcMethod::kReportUnreachable,
                                         RpcMethod::kReportCorruptReplica, RpcMethod::kStats,
                                         RpcMethod::kControlEndpoints};

TEST(AccessTest, AdminMayMakeEveryCall) {
  for (size_t i = 0; i < kRpcMethodCount; ++i) {
    EXPECT_TRUE(RoleMayCall(Role::kAdmin, static_cast<RpcMethod>(i))) << i;
  }
}

TEST(AccessTest, EachCallBelongsToItsRoles) {
  size_t listed = 0;
  for (RpcMethod m : kKeyCalls) {
    EXPECT_TRUE(RoleMayCall(Role::kClient, m)) << static_cast<int>(m);
    EXPECT_FALSE(RoleMayCall(Role::kNode, m)) << static_cast<int>(m);
    ++listed;
  }
  for (RpcMethod m : kNodeCalls) {
    EXPECT_TRUE(RoleMayCall(Role::kNode, m)) << static_cast<int>(m);
    EXPECT_FALSE(RoleMayCall(Role::kClient, m)) << static_cast<int>(m);
    ++listed;
  }
  for (RpcMethod m : kEveryRoleCalls) {
    EXPECT_TRUE(RoleMayCall(Role::kNode, m)) << static_cast<int>(m);
    EXPECT_TRUE(RoleMayCall(Role::kClient, m)) << static_cast<int>(m);
    ++listed;
  }
  for (RpcMethod m : {RpcMethod::kSnapshot, RpcMethod::kReadSnapshot}) {
    EXPECT_FALSE(RoleMayCall(Role::kClient, m)) << static_cast<int>(m);
    EXPECT_FALSE(RoleMayCall(Role::kNode, m)) << static_cast<int>(m);
    ++listed;
  }
  EXPECT_EQ(listed, kRpcMethodCount);  // a new call must be placed here too
}

TEST(AccessTest, ARefusalNamesTheCallTheRolesAndTheToken) {
  const Caller app{Role::kClient, "app", "t1"};
  Status s = CheckRole(app, RpcMethod::kMountSegment);
  EXPECT_EQ(s.code(), ErrorCode::kPermissionDenied);
  EXPECT_EQ(s.message(),
            "MountSegment needs the node or admin role; token 'app' has the client role");
  EXPECT_TRUE(CheckRole(app, RpcMethod::kPutStart).ok());
  // A master without credentials checks nobody.
  EXPECT_TRUE(CheckRole(Unchecked(), RpcMethod::kSnapshot).ok());
  EXPECT_THAT(CheckRole(Caller{Role::kNode, "n", ""}, RpcMethod::kList).message(),
              HasSubstr("List needs the client or admin role"));
}

}  // namespace
}  // namespace crescent::rpc
