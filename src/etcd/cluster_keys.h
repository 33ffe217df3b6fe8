// The keys a Crescent cluster of masters keeps in etcd (docs/ha.md), all under
// "/crescent/NAME/":
//  - "leader": the leader key (leadership.h), created under the leader's lease.
//    Its value is empty while the new leader gets ready, then a LeaderInfo:
//    clients and nodes follow a leader only once it published one.
//  - "log/" + 16 hex digits: one batch of the leader's operation log, named by
//    the log position it starts at (etcd_log.h).
//  - "members/" + master id: each master's MemberInfo, under its own lease.
// A cluster name is 1 to 64 letters, digits, '.', '_' or '-', starting with a
// letter or digit (the rule of token names, auth/token.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "crescent/status.h"

namespace crescent::etcd {

Status CheckClusterName(std::string_view name);

std::string ClusterPrefix(std::string_view cluster);  // "/crescent/NAME/"
std::string LeaderKey(std::string_view cluster);
std::string LogPrefix(std::string_view cluster);
std::string LogKey(std::string_view cluster, uint64_t position);
std::string MembersPrefix(std::string_view cluster);
std::string MemberKey(std::string_view cluster, std::string_view master_id);
// The position a LogKey names; INVALID_ARGUMENT for another key.
StatusOr<uint64_t> LogKeyPosition(std::string_view cluster, std::string_view key);

// What the leader publishes once it serves.
struct LeaderInfo {
  std::string master_id;  // the master's random instance id
  std::string grpc;       // host:port of its gRPC service
  std::string http;       // host:port of its admin HTTP port; empty: none
};
// Lines "key=value"; Decode refuses a value without master_id and grpc.
std::string EncodeLeaderInfo(const LeaderInfo& info);
StatusOr<LeaderInfo> DecodeLeaderInfo(std::string_view value);

// What each master says of itself (the status page's cluster section).
struct MemberInfo {
  std::string master_id;
  std::string grpc;
  std::string http;
  uint64_t applied_position = 0;  // the log position it has applied up to
  uint64_t applied_records = 0;   // the records of the log it has applied
  // Whether it keeps snapshots (a --data-dir), and the newest one's position:
  // the leader trims the log only before what every such member holds.
  bool keeps_snapshots = false;
  uint64_t snapshot_position = 0;
};
std::string EncodeMemberInfo(const MemberInfo& info);
StatusOr<MemberInfo> DecodeMemberInfo(std::string_view value);

// An "etcd://H1:2379,H2:2379/NAME" master address: the etcd endpoints (as
// gRPC targets, H:PORT) and the cluster name. INVALID_ARGUMENT for a malformed one;
// IsEtcdAddress says whether `address` means to be one.
bool IsEtcdAddress(std::string_view address);
struct EtcdAddress {
  std::vector<std::string> endpoints;
  std::string cluster;
};
StatusOr<EtcdAddress> ParseEtcdAddress(std::string_view address);

}  // namespace crescent::etcd
