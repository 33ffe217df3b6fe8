// Process-wide gRPC settings that Crescent's control plane depends on for its
// latency. Both MasterServer::Start and MasterClient::Create call
// PrepareGrpcProcess() before they touch gRPC; it is idempotent and cheap.
#pragma once

#include "crescent/status.h"

namespace crescent::rpc {

// 1. Turns off abseil's lock-order deadlock detector (Debian's abseil is built
//    without NDEBUG, so every absl::Mutex gRPC takes pays GraphCycles
//    bookkeeping; measured ~14% of a BatchQueryPrefix(128) round trip).
// 2. Picks gRPC's "poll" I/O poller unless GRPC_POLL_STRATEGY is already set.
//    gRPC reads that variable once, when it first initialises, so this must run
//    before any channel or server exists. With the default "epoll1" poller a
//    unary call hands work between threads (one designated poller, condition
//    variables, kicks): about ten futex calls per round trip. On a VM where a
//    wake-up costs tens of microseconds that doubled the round trip (Exists
//    p50 87 -> 42 us in `crescent bench floors`, BatchQueryPrefix(128) p50
//    122 -> 78 us in `crescent bench prefix --batch 128 --miss 0`).
//    Set GRPC_POLL_STRATEGY=epoll1 to get gRPC's default back.
void PrepareGrpcProcess();

// The Crescent code for a failed call's gRPC status code (grpc::StatusCode).
// A master that shuts down or dies mid-call cancels or aborts the calls in
// flight (CANCELLED, ABORTED, UNKNOWN): that is UNAVAILABLE, not INTERNAL.
ErrorCode ErrorCodeOfGrpc(int grpc_code);

}  // namespace crescent::rpc
