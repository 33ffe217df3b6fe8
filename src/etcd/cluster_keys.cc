#include "etcd/cluster_keys.h"

#include <charconv>
#include <cstdio>

#include "auth/token.h"
#include "etcd/etcd_client.h"

namespace crescent::etcd {
namespace {

constexpr std::string_view kScheme = "etcd://";

// Lines "key=value\n" into `fn(key, value)`; false on a line without '='.
template <typename Fn>
bool ForEachLine(std::string_view text, Fn fn) {
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.empty()) continue;
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) return false;
    fn(line.substr(0, eq), line.substr(eq + 1));
  }
  return true;
}

bool ParseU64(std::string_view text, uint64_t* out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

Status CheckClusterName(std::string_view name) { return auth::CheckName("cluster", name); }

std::string ClusterPrefix(std::string_view cluster) {
  return "/crescent/" + std::string(cluster) + "/";
}
std::string LeaderKey(std::string_view cluster) { return ClusterPrefix(cluster) + "leader"; }
std::string LogPrefix(std::string_view cluster) { return ClusterPrefix(cluster) + "log/"; }
std::string MembersPrefix(std::string_view cluster) { return ClusterPrefix(cluster) + "members/"; }
std::string MemberKey(std::string_view cluster, std::string_view master_id) {
  return MembersPrefix(cluster) + std::string(master_id);
}

std::string LogKey(std::string_view cluster, uint64_t position) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(position));
  return LogPrefix(cluster) + hex;
}

StatusOr<uint64_t> LogKeyPosition(std::string_view cluster, std::string_view key) {
  const std::string prefix = LogPrefix(cluster);
  uint64_t position = 0;
  if (key.size() != prefix.size() + 16 || !key.starts_with(prefix)) {
    return Status(ErrorCode::kInvalidArgument, "'" + std::string(key) + "' is not a log key");
  }
  const std::string_view hex = key.substr(prefix.size());
  const auto [end, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), position, 16);
  if (ec != std::errc() || end != hex.data() + hex.size()) {
    return Status(ErrorCode::kInvalidArgument, "'" + std::string(key) + "' is not a log key");
  }
  return position;
}

std::string EncodeLeaderInfo(const LeaderInfo& info) {
  return "master_id=" + info.master_id + "\ngrpc=" + info.grpc + "\nhttp=" + info.http + "\n";
}

StatusOr<LeaderInfo> DecodeLeaderInfo(std::string_view value) {
  LeaderInfo info;
  const bool lines = ForEachLine(value, [&](std::string_view k, std::string_view v) {
    if (k == "master_id") info.master_id = v;
    if (k == "grpc") info.grpc = v;
    if (k == "http") info.http = v;
  });
  if (!lines || info.master_id.empty() || info.grpc.empty()) {
    return Status(ErrorCode::kInvalidArgument, "the leader key holds no leader's endpoints");
  }
  return info;
}

std::string EncodeMemberInfo(const MemberInfo& info) {
  return "master_id=" + info.master_id + "\ngrpc=" + info.grpc + "\nhttp=" + info.http +
         "\napplied_position=" + std::to_string(info.applied_position) +
         "\napplied_records=" + std::to_string(info.applied_records) +
         "\nkeeps_snapshots=" + (info.keeps_snapshots ? "1" : "0") +
         "\nsnapshot_position=" + std::to_string(info.snapshot_position) + "\n";
}

StatusOr<MemberInfo> DecodeMemberInfo(std::string_view value) {
  MemberInfo info;
  bool numbers = true;
  const bool lines = ForEachLine(value, [&](std::string_view k, std::string_view v) {
    if (k == "master_id") info.master_id = v;
    if (k == "grpc") info.grpc = v;
    if (k == "http") info.http = v;
    if (k == "applied_position") numbers = numbers && ParseU64(v, &info.applied_position);
    if (k == "applied_records") numbers = numbers && ParseU64(v, &info.applied_records);
    if (k == "keeps_snapshots") info.keeps_snapshots = v == "1";
    if (k == "snapshot_position") numbers = numbers && ParseU64(v, &info.snapshot_position);
  });
  if (!lines || !numbers || info.master_id.empty()) {
    return Status(ErrorCode::kInvalidArgument, "not a member's record");
  }
  return info;
}

bool IsEtcdAddress(std::string_view address) { return address.starts_with(kScheme); }

StatusOr<EtcdAddress> ParseEtcdAddress(std::string_view address) {
  if (!IsEtcdAddress(address)) {
    return Status(ErrorCode::kInvalidArgument,
                  "'" + std::string(address) + "' is not etcd://H1:2379,H2:2379/NAME");
  }
  const std::string_view rest = address.substr(kScheme.size());
  const size_t slash = rest.rfind('/');
  if (slash == std::string_view::npos) {
    return Status(ErrorCode::kInvalidArgument,
                  "'" + std::string(address) + "' names no cluster: etcd://H1:2379,H2:2379/NAME");
  }
  EtcdAddress out;
  out.cluster = rest.substr(slash + 1);
  if (Status s = CheckClusterName(out.cluster); !s.ok()) return s;
  auto endpoints = ParseEndpoints(rest.substr(0, slash));
  if (!endpoints.ok()) return endpoints.status();
  out.endpoints = std::move(*endpoints);
  return out;
}

}  // namespace crescent::etcd
