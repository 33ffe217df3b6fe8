#include "client/replica_io.h"

#include <algorithm>

#include "common/clock.h"

namespace crescent::client {

transfer::Transport& ReplicaIo::Pick(const std::string& endpoint) {
  if (shm_ != nullptr && shm_->CanReach(endpoint)) return *shm_;
  return tcp_;
}

std::vector<Status> ReplicaIo::Run(const std::vector<transfer::TransferOp>& ops,
                                   std::vector<uint32_t>* unreachable) {
  std::vector<Status> out(ops.size());
  std::vector<size_t> via_shm, via_tcp;
  for (size_t i = 0; i < ops.size(); ++i) {
    (&Pick(ops[i].endpoint) == &tcp_ ? via_tcp : via_shm).push_back(i);
  }
  auto execute = [&](transfer::Transport& transport, const std::vector<size_t>& idx) {
    std::vector<transfer::TransferOp> group;
    group.reserve(idx.size());
    for (size_t i : idx) group.push_back(ops[i]);
    std::vector<Status> res = transport.Execute(group, timeout_ms_);
    for (size_t k = 0; k < idx.size(); ++k) out[idx[k]] = std::move(res[k]);
  };
  if (!via_shm.empty()) {
    execute(*shm_, via_shm);
    for (size_t i : via_shm) {
      if (transfer::IsShmPathFailure(out[i].code())) {
        via_tcp.push_back(i);
        shm_fallbacks_.fetch_add(1, std::memory_order_relaxed);
      }
    }
  }
  if (!via_tcp.empty()) execute(tcp_, via_tcp);
  const int64_t now = SteadyClock::Instance().NowMs();
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!transfer::IsNodeFailure(out[i].code())) continue;
    suspects_.Mark(ops[i].endpoint, now);
    if (unreachable != nullptr &&
        std::find(unreachable->begin(), unreachable->end(), ops[i].cap.segment) ==
            unreachable->end()) {
      unreachable->push_back(ops[i].cap.segment);
    }
  }
  return out;
}

std::vector<size_t> ReplicaIo::PreferenceOrder(const std::vector<rpc::RemoteReplica>& list) {
  std::vector<size_t> order(list.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (shm_ != nullptr) {
    std::stable_partition(order.begin(), order.end(),
                          [&](size_t i) { return shm_->CanReach(list[i].endpoint); });
  }
  if (list.size() > 1) {
    const int64_t now = SteadyClock::Instance().NowMs();
    std::stable_partition(order.begin(), order.end(),
                          [&](size_t i) { return !suspects_.IsSuspect(list[i].endpoint, now); });
  }
  return order;
}

const rpc::RemoteReplica* ReplicaIo::SameHost(const std::vector<rpc::RemoteReplica>& list) {
  if (shm_ == nullptr) return nullptr;
  for (const rpc::RemoteReplica& r : list) {
    if (shm_->CanReach(r.endpoint)) return &r;
  }
  return nullptr;
}

bool ReplicaIo::CopyAhead(const PlacementHint& hint, const ObjectMemory& memory,
                          uint64_t* checksum_out) {
  if (shm_ == nullptr) return false;
  const transfer::BufferSlice one{memory.buffer, static_cast<size_t>(hint.length)};
  const std::span<const transfer::BufferSlice> to =
      memory.slices.empty() ? std::span<const transfer::BufferSlice>(&one, 1) : memory.slices;
  return shm_->CopyAhead(hint.endpoint, hint.segment, hint.offset, hint.length, to, checksum_out);
}

std::vector<Status> ReplicaIo::WriteAll(
    std::span<const std::vector<rpc::RemoteReplica>* const> replicas,
    std::span<const ObjectMemory> memory, std::vector<uint32_t>* unreachable,
    std::vector<uint64_t>* checksums) {
  std::vector<Status> out(replicas.size());
  std::vector<transfer::TransferOp> ops;
  std::vector<size_t> owner;
  size_t total = 0;
  for (const auto* list : replicas) total += list->size();
  std::vector<uint64_t> hashed(total, 0);  // one per op; stable for the ops' pointers
  for (size_t i = 0; i < replicas.size(); ++i) {
    if (replicas[i]->empty()) {
      out[i] = Status(ErrorCode::kInternal, "master returned no replica to write");
      continue;
    }
    for (const rpc::RemoteReplica& r : *replicas[i]) {
      // A write op only reads the buffer; TransferOp's pointer is shared with reads.
      transfer::TransferOp& op = ops.emplace_back(r.endpoint, r.cap, memory[i].buffer);
      op.slices = memory[i].slices;
      if (checksums != nullptr) op.checksum_out = &hashed[ops.size() - 1];
      owner.push_back(i);
    }
  }
  std::vector<Status> res = Run(ops, unreachable);
  for (size_t k = 0; k < ops.size(); ++k) {
    if (!res[k].ok() && out[owner[k]].ok()) out[owner[k]] = std::move(res[k]);
  }
  if (checksums == nullptr) return out;
  checksums->assign(replicas.size(), 0);
  std::vector<bool> seen(replicas.size(), false);
  for (size_t k = 0; k < ops.size(); ++k) {
    const size_t i = owner[k];
    if (!out[i].ok()) continue;
    if (!seen[i]) {
      seen[i] = true;
      (*checksums)[i] = hashed[k];
    } else if ((*checksums)[i] != hashed[k]) {
      (*checksums)[i] = 0;
      out[i] = Status(ErrorCode::kInvalidArgument,
                      "the value's bytes changed while its replicas were written (the buffer "
                      "must stay unchanged until the put returns)");
    }
  }
  return out;
}

std::vector<Status> ReplicaIo::ReadAny(
    std::span<const std::vector<rpc::RemoteReplica>* const> replicas,
    std::span<const ObjectMemory> memory, std::span<const uint64_t> checksums,
    std::vector<CorruptRead>* corrupt, std::vector<uint32_t>* unreachable) {
  const bool verify = !checksums.empty();
  std::vector<Status> out(replicas.size(),
                          Status(ErrorCode::kObjectNotFound, "object has no readable replica"));
  std::vector<std::vector<size_t>> order(replicas.size());
  std::vector<size_t> pending;
  size_t rounds = 0;
  for (size_t i = 0; i < replicas.size(); ++i) {
    order[i] = PreferenceOrder(*replicas[i]);
    if (!order[i].empty()) pending.push_back(i);
    rounds = std::max(rounds, order[i].size());
  }
  for (size_t round = 0; round < rounds && !pending.empty(); ++round) {
    std::vector<transfer::TransferOp> ops;
    std::vector<size_t> owner;
    std::vector<uint64_t> sums(pending.size(), 0);
    for (size_t i : pending) {
      if (round >= order[i].size()) continue;
      const rpc::RemoteReplica& r = (*replicas[i])[order[i][round]];
      ops.push_back({r.endpoint, r.cap, memory[i].buffer, verify ? &sums[ops.size()] : nullptr});
      ops.back().slices = memory[i].slices;
      owner.push_back(i);
    }
    std::vector<Status> res = Run(ops, unreachable);
    std::vector<size_t> still;
    for (size_t k = 0; k < ops.size(); ++k) {
      const size_t i = owner[k];
      if (verify && res[k].ok() && sums[k] != checksums[i]) {
        const size_t replica = order[i][round];
        const transfer::Capability& cap = (*replicas[i])[replica].cap;
        res[k] = Status(ErrorCode::kChecksumMismatch,
                        "the bytes read from " + ops[k].endpoint + " (segment " +
                            std::to_string(cap.segment) + ", offset " +
                            std::to_string(cap.offset) +
                            ") do not match the checksum recorded when the value was put");
        if (corrupt != nullptr) corrupt->push_back({i, replica});
      }
      out[owner[k]] = std::move(res[k]);
      // An expired lease will not improve on another replica of the same grant.
      if (!out[owner[k]].ok() && out[owner[k]].code() != ErrorCode::kLeaseExpired) {
        still.push_back(owner[k]);
        if (round + 1 < order[owner[k]].size()) {
          replica_fallbacks_.fetch_add(1, std::memory_order_relaxed);
        }
      }
    }
    pending = std::move(still);
  }
  return out;
}

}  // namespace crescent::client
