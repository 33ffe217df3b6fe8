// What MasterClient (master_client.cc) builds its calls from: gRPC outcomes
// as Status, replies as the client's types, requests from keys and tokens,
// and checks of a master address. Internal to the client side of rpc/.
#pragma once

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/listen_check.h"
#include "rpc/convert.h"
#include "rpc/grpc_setup.h"
#include "rpc/master_client.h"

namespace crescent::rpc::client_wire {

// A failed call to the master at `address` (UNAVAILABLE is retried before it
// gets here), naming the address and, for a deadline, the time it waited.
inline Status FromGrpc(const grpc::Status& s, const char* rpc, const std::string& address,
                       int64_t timeout_ms) {
  const ErrorCode code = ErrorCodeOfGrpc(static_cast<int>(s.error_code()));
  std::string waited;
  if (code == ErrorCode::kTimeout) {
    waited = " (no answer within " + std::to_string(timeout_ms) + " ms)";
  }
  return Status(code, std::string("master RPC ") + rpc + " to " + address + " failed (grpc code " +
                          std::to_string(static_cast<int>(s.error_code())) +
                          "): " + s.error_message() + waited);
}

inline StatusOr<std::vector<RemoteReplica>> ReplicasFromProto(
    const google::protobuf::RepeatedPtrField<proto::Replica>& replicas) {
  std::vector<RemoteReplica> out;
  out.reserve(replicas.size());
  for (const proto::Replica& r : replicas) {
    auto cap = FromProto(r.cap());
    if (!cap.ok()) return cap.status();
    out.push_back({r.endpoint(), *cap, r.placement()});
  }
  return out;
}

inline std::vector<master::SegmentInfo> SegmentsFromProto(
    const google::protobuf::RepeatedPtrField<proto::SegmentInfo>& segments) {
  std::vector<master::SegmentInfo> out;
  out.reserve(segments.size());
  for (const proto::SegmentInfo& info : segments) out.push_back(FromProto(info));
  return out;
}

inline StatusOr<RemotePut> PutFromProto(const proto::PutStartResponse& r) {
  if (auto s = FromProto(r.status()); !s.ok()) return s;
  auto replicas = ReplicasFromProto(r.replicas());
  if (!replicas.ok()) return replicas.status();
  RemotePut put{std::move(replicas).value(), r.token(), {}};
  if (static_cast<size_t>(r.read_caps_size()) == put.replicas.size()) {
    for (const proto::Capability& c : r.read_caps()) {
      auto cap = FromProto(c);
      if (!cap.ok()) return cap.status();
      put.read_caps.push_back(*cap);
    }
  }
  return put;
}

inline StatusOr<RemoteRead> ReadFromProto(const proto::ReadResult& r) {
  if (auto s = FromProto(r.status()); !s.ok()) return s;
  auto replicas = ReplicasFromProto(r.replicas());
  if (!replicas.ok()) return replicas.status();
  return RemoteRead{r.size(), r.checksum(), std::move(replicas).value(), r.lease_expiry_unix_ms()};
}

inline proto::KeysRequest MakeKeys(std::span<const std::string> keys) {
  proto::KeysRequest req;
  req.mutable_keys()->Assign(keys.begin(), keys.end());
  return req;
}

inline proto::PutTokenRequest MakeToken(const std::string& key, uint64_t token,
                                        uint64_t checksum = 0) {
  proto::PutTokenRequest req;
  req.set_key(key);
  req.set_token(token);
  req.set_checksum(checksum);
  return req;
}

inline proto::BatchPutTokenRequest MakeTokens(std::span<const std::string> keys,
                                              std::span<const uint64_t> tokens) {
  proto::BatchPutTokenRequest req;
  req.mutable_keys()->Assign(keys.begin(), keys.end());
  req.mutable_tokens()->Assign(tokens.begin(), tokens.end());
  return req;
}

// The share of `values` (one per key of `keys` keys) of the keys [at, at + n).
// Values of another count are sent whole, for the master to refuse the shape.
template <typename T>
std::span<const T> PartOf(std::span<const T> values, size_t keys, size_t at, size_t n) {
  return values.size() == keys ? values.subspan(at, n) : values;
}

template <typename T>
std::vector<T> Every(size_t n, const Status& s) {
  return std::vector<T>(n, T(s));
}

inline Status ShortReply(size_t got, size_t want) {
  return Status(ErrorCode::kInternal, "master replied with " + std::to_string(got) +
                                          " results for " + std::to_string(want) + " keys");
}

inline std::vector<Status> StatusesFromProto(const proto::StatusesResponse& resp, size_t want) {
  if (static_cast<size_t>(resp.statuses_size()) != want) {
    return Every<Status>(want, ShortReply(resp.statuses_size(), want));
  }
  std::vector<Status> out;
  out.reserve(want);
  for (const proto::Status& s : resp.statuses()) out.push_back(FromProto(s));
  return out;
}

// gRPC accepts nearly any target string and reports a typo only as "unreachable"
// after every retry (it even wraps "host:99999" to another port), so a malformed
// HOST:PORT is refused here, naming what is expected. gRPC URIs
// (dns:///..., ipv4:..., unix:...) pass through to gRPC.
inline Status CheckAddress(const std::string& address) {
  if (address.rfind("unix:", 0) == 0) {
    // unix:PATH or unix:///PATH (gRPC's forms).
    std::string path = address.substr(5);
    if (path.rfind("//", 0) == 0) path = path.substr(2);
    return CheckUnixSocketPath("invalid master address " + address, path);
  }
  for (const char* scheme : {"unix-abstract:", "dns:", "ipv4:", "ipv6:", "vsock:"}) {
    if (address.rfind(scheme, 0) == 0) return Status::Ok();
  }
  size_t colon = address.rfind(':');
  std::string port = colon == std::string::npos ? "" : address.substr(colon + 1);
  bool numeric = !port.empty() && port.size() <= 5 &&
                 std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (colon == 0 || !numeric || std::stoi(port) < 1 || std::stoi(port) > 65535) {
    return Status(ErrorCode::kInvalidArgument, "invalid master address '" + address +
                                                   "': want HOST:PORT (port 1-65535) or unix:PATH");
  }
  return Status::Ok();
}

// The host a gRPC target names, for the lean protocol's TCP port on it
// (127.0.0.1 for a Unix socket: the master is on this host).
inline std::string HostOfAddress(const std::string& address) {
  std::string a = address;
  if (a.rfind("unix", 0) == 0 || a.rfind("vsock:", 0) == 0) return "127.0.0.1";
  for (const char* scheme : {"dns:///", "dns:", "ipv4:", "ipv6:"}) {
    if (a.rfind(scheme, 0) == 0) {
      a = a.substr(std::string_view(scheme).size());
      break;
    }
  }
  a = a.substr(0, a.find(','));  // the first of a list of addresses
  const size_t colon = a.rfind(':');
  return colon == std::string::npos ? a : a.substr(0, colon);
}

}  // namespace crescent::rpc::client_wire
