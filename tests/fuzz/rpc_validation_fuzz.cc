// Fuzzes the master's request validation (rpc/server_validation.h): the input
// is parsed as one of the request messages (picked by the first byte) and run
// through the checks its handler runs (server_handlers.cc) before anything
// reaches the engine, under fuzzed limits.
//
// Invariants:
//  - Parsing and validating never crash, whatever the bytes.
//  - Each check accepts exactly the requests its contract admits (restated here
//    from server_validation.h): an accepted request's keys, names and counts are
//    within the limits, and a refused one breaks at least one of them, with
//    the documented code and a message.
//  - A parsed request that is serialised and parsed again gets the same verdict.
#include <google/protobuf/stubs/logging.h>

#include <string>

#include "common/endpoint.h"
#include "fuzz_support.h"
#include "rpc/server_validation.h"

using crescent::ErrorCode;
using crescent::Status;
using crescent::fuzz::FuzzInput;
namespace proto = crescent::proto;
namespace rpc = crescent::rpc;
using Keys = google::protobuf::RepeatedPtrField<std::string>;

namespace {

struct Limits {
  uint32_t max_batch;
  uint32_t max_key_length;
  uint32_t max_replicas;
};

bool NameOk(const std::string& v) { return !v.empty() && v.size() <= rpc::kMaxNameBytes; }
bool OptionalNameOk(const std::string& v) { return v.size() <= rpc::kMaxNameBytes; }

// A refusal carries the expected code and says why.
void CheckVerdict(const Status& s, bool admissible, ErrorCode refusal) {
  FUZZ_CHECK(s.ok() == admissible);
  if (!s.ok()) {
    FUZZ_CHECK(s.code() == refusal);
    FUZZ_CHECK(!s.message().empty());
  }
}

Status Names(const proto::UnmountSegmentRequest& req, const Limits&) {
  Status s = rpc::CheckName("segment name", req.name());
  if (s.ok()) s = rpc::CheckName("owner node", req.owner_node());
  CheckVerdict(s, NameOk(req.name()) && NameOk(req.owner_node()), ErrorCode::kInvalidArgument);
  return s;
}

Status Names(const proto::HeartbeatRequest& req, const Limits&) {
  Status s = rpc::CheckName("node", req.node());
  CheckVerdict(s, NameOk(req.node()), ErrorCode::kInvalidArgument);
  return s;
}

Status Spec(const proto::MountSegmentRequest& req, const Limits&) {
  const proto::SegmentSpec& spec = req.spec();
  Status s = rpc::CheckSegmentSpec(spec);
  bool admissible = NameOk(spec.name()) && NameOk(spec.owner_node()) && spec.capacity() > 0 &&
                    spec.tier() <= 1 && spec.owner_token() != 0 &&
                    crescent::ParseEndpoint(spec.endpoint()).ok();
  CheckVerdict(s, admissible, ErrorCode::kInvalidArgument);
  return s;
}

// Only the count concerns the whole batch; a bad key is the engine's to refuse alone.
Status KeyList(const Keys& keys, const Limits& limits) {
  Status s = rpc::CheckKeys(keys, limits.max_batch, /*allow_empty=*/false);
  bool count_ok = !keys.empty() && static_cast<uint64_t>(keys.size()) <= limits.max_batch;
  CheckVerdict(s, count_ok, ErrorCode::kInvalidArgument);
  return s;
}

Status Config(const proto::PutConfig& config, const Limits& limits) {
  Status s = rpc::CheckPutConfig(config, limits.max_replicas, limits.max_key_length);
  bool others_ok = config.replica_count() <= limits.max_replicas && config.soft_pin_ttl_ms() >= 0 &&
                   OptionalNameOk(config.preferred_segment()) &&
                   OptionalNameOk(config.local_node());
  bool parent_ok = config.parent_key().size() <= limits.max_key_length;
  CheckVerdict(s, others_ok && parent_ok,
               others_ok ? ErrorCode::kInvalidKey : ErrorCode::kInvalidArgument);
  return s;
}

Status Put(const proto::PutStartRequest& req, const Limits& limits) {
  return Config(req.config(), limits);
}

Status BatchPut(const proto::BatchPutStartRequest& req, const Limits& limits) {
  Status s = KeyList(req.keys(), limits);
  return s.ok() ? Config(req.config(), limits) : s;
}

template <typename Request>
Status Batch(const Request& req, const Limits& limits) {
  return KeyList(req.keys(), limits);
}

// Parses `bytes` as a Request and validates it, then checks that the
// re-serialised request gets the same verdict.
template <typename Request>
void Run(std::string_view bytes, const Limits& limits,
         Status (*validate)(const Request&, const Limits&)) {
  Request req;
  if (!req.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return;
  Status first = validate(req, limits);
  std::string again;
  FUZZ_CHECK(req.SerializeToString(&again));
  Request reparsed;
  FUZZ_CHECK(reparsed.ParseFromString(again));
  FUZZ_CHECK(validate(reparsed, limits).code() == first.code());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Invalid UTF-8 in a string field fails the parse, which protobuf also logs.
  static const bool quiet = [] {
    google::protobuf::SetLogHandler(nullptr);
    return true;
  }();
  (void)quiet;
  FuzzInput in(data, size);
  uint8_t which = in.Take<uint8_t>();
  // Small limits, so that the fuzzer can reach both sides of each.
  Limits limits{in.Take<uint8_t>(), in.Take<uint8_t>(), in.Take<uint8_t>() % 8u};
  std::string_view bytes = in.Rest();
  switch (which % 9) {
    case 0: Run<proto::MountSegmentRequest>(bytes, limits, &Spec); break;
    case 1: Run<proto::UnmountSegmentRequest>(bytes, limits, &Names); break;
    case 2: Run<proto::HeartbeatRequest>(bytes, limits, &Names); break;
    case 3: Run<proto::PutStartRequest>(bytes, limits, &Put); break;
    case 4: Run<proto::BatchPutStartRequest>(bytes, limits, &BatchPut); break;
    case 5:
      Run<proto::BatchPutTokenRequest>(bytes, limits, &Batch<proto::BatchPutTokenRequest>);
      break;
    case 6:
      Run<proto::BatchGetReplicaListRequest>(bytes, limits,
                                             &Batch<proto::BatchGetReplicaListRequest>);
      break;
    case 7:  // BatchExists, BatchQueryPrefix, EndSession
      Run<proto::KeysRequest>(bytes, limits, &Batch<proto::KeysRequest>);
      break;
    default:
      Run<proto::BatchRemoveRequest>(bytes, limits, &Batch<proto::BatchRemoveRequest>);
      break;
  }
  return 0;
}
