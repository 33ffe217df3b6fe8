// The roles table of docs/security.md ("Roles"), written out on its own for
// the tests that check it over each transport (node_roles_test over the lean
// protocol, tls_test over gRPC): the calls of Master each role may make; an
// admin may make all of them.
#pragma once

#include <set>
#include <string>

namespace crescent::itest {

inline const std::set<std::string> kNodeCalls{
    "MountSegment",         "Heartbeat",         "UnmountSegment", "ListSegments",
    "ReportCorruptReplica", "ReportUnreachable", "Stats",          "ControlEndpoints"};

inline const std::set<std::string> kClientCalls{"ListSegments",
                                                "PutStart",
                                                "PutEnd",
                                                "PutRevoke",
                                                "BatchPutStart",
                                                "BatchPutEnd",
                                                "BatchPutRevoke",
                                                "GetReplicaList",
                                                "BatchGetReplicaList",
                                                "GetLongestPrefix",
                                                "Exists",
                                                "BatchExists",
                                                "BatchQueryPrefix",
                                                "ReportCorruptReplica",
                                                "ReportUnreachable",
                                                "Remove",
                                                "BatchRemove",
                                                "RemoveByPrefix",
                                                "RemoveAll",
                                                "List",
                                                "EndSession",
                                                "TouchKeys",
                                                "Stats",
                                                "ControlEndpoints"};

// Every call of the control table (control_methods.h), 29: the node's and
// the client's, and the admin's own.
inline const std::set<std::string> kEveryMasterCall = [] {
  std::set<std::string> all = kNodeCalls;
  all.insert(kClientCalls.begin(), kClientCalls.end());
  all.insert("Snapshot");
  all.insert("ReadSnapshot");
  return all;
}();

inline bool RoleMayCall(const std::string& role, const std::string& call) {
  return role == "admin" || (role == "node" && kNodeCalls.contains(call)) ||
         (role == "client" && kClientCalls.contains(call));
}

}  // namespace crescent::itest
