// Client::Impl (crescent/client.h): the client's parts and the paths every
// call shares (puts through PutPath, gets through GetMany), for the files that
// implement Client's calls (client.cc, client_slices.cc).
#pragma once

#include <algorithm>
#include <atomic>
#include <functional>
#include <iterator>
#include <optional>
#include <string>

#include "client/buffer_registry.h"
#include "client/client_metrics.h"
#include "client/placement_hints.h"
#include "client/put_path.h"
#include "client/replica_io.h"
#include "common/clock.h"
#include "crescent/client.h"
#include "master/master_config.h"
#include "rpc/master_client.h"

namespace crescent {

using rpc::RemoteRead;
using rpc::RemoteReplica;

// At most this many bytes per call are copied ahead: the copies run before the
// reply is collected, and must stay far inside the call's deadline.
inline constexpr uint64_t kMaxCopyAheadBytes = uint64_t{64} << 20;
// A get whose capability expired before its copy asks the master again, at most this often.
inline constexpr int kLeaseRetries = 3;

// A get's destination, as GetMany's `dest` gives it: one buffer or slices.
inline StatusOr<client::ObjectMemory> AsMemory(StatusOr<std::byte*> b) {
  if (!b.ok()) return b.status();
  return client::ObjectMemory{b.value(), {}};
}
inline StatusOr<client::ObjectMemory> AsMemory(StatusOr<client::ObjectMemory> m) { return m; }

struct Client::Impl {
  explicit Impl(const ClientConfig& c) : config(c), buffers(c.warm_registered_buffers) {}
  ClientConfig config;
  std::unique_ptr<rpc::MasterClient> master;
  std::unique_ptr<transfer::Transport> tcp;
  std::unique_ptr<transfer::Transport> shm;
  std::unique_ptr<client::ReplicaIo> io;
  std::unique_ptr<client::PutPath> putter;
  std::unique_ptr<client::PlacementHints> hints;  // null without shared memory
  std::atomic<uint64_t> copy_ahead_kept{0};
  std::atomic<uint64_t> copy_ahead_discarded{0};
  std::atomic<uint64_t> checksum_mismatches{0};
  std::atomic<uint64_t> put_retries{0};
  std::atomic<uint64_t> lease_retries{0};
  client::BufferRegistry buffers;
  client::ClientMetrics metrics;

  master::PutConfig ToPutConfig(const PutOptions& o) const {
    master::PutConfig c;
    c.replica_count = std::min(o.replica_count, master::kMaxReplicas);  // best effort
    c.preferred_segment = o.preferred_segment;
    c.local_node = config.local_node;
    c.soft_pin_ttl_ms = o.soft_pin_ttl_ms;
    c.hard_pin = o.hard_pin;
    c.parent_key = o.parent_key;
    return c;
  }

  // Puts every key (PutPath: rounds, retries, ends sent again).
  std::vector<Status> PutMany(std::span<const std::string> keys,
                              std::span<const std::byte* const> data, std::span<const size_t> sizes,
                              const PutOptions& options, bool chain) {
    std::vector<client::ObjectMemory> memory;
    memory.reserve(data.size());
    for (const std::byte* d : data) memory.push_back({const_cast<std::byte*>(d), {}});
    return PutMany(keys, memory, sizes, options, chain);
  }
  // The same, each key's memory one buffer or slices (a put only reads it).
  std::vector<Status> PutMany(std::span<const std::string> keys,
                              std::span<const client::ObjectMemory> data,
                              std::span<const size_t> sizes, const PutOptions& options,
                              bool chain) {
    return putter->Put(keys, data, sizes, ToPutConfig(options),
                       std::max<uint32_t>(options.replica_count, 1), chain);
  }

  // Notes where a complete object lives on this host, for the next get.
  void Remember(const std::string& key, const std::vector<RemoteReplica>& replicas) {
    if (!hints) return;
    if (const RemoteReplica* r = io->SameHost(replicas)) {
      hints->Remember(key, *r, SteadyClock::Instance().NowMs());
    }
  }

  // Reads every readable key into the destination chosen by `dest(i, size)`,
  // which returns the buffer or an error (e.g. too small). prefix_mode stops at
  // the first key the master cannot serve. Results in input order, possibly
  // shorter than keys in prefix mode.
  //
  // A batch of more keys than one request carries (MasterClient::BatchParts)
  // is read part by part, each part's leases granted and its bytes read
  // before the next part is asked for: read leases are short (0.5 s by
  // default), and asking for every part first would let the first parts'
  // leases lapse before their reads.
  template <typename Dest>
  std::vector<StatusOr<size_t>> GetMany(std::span<const std::string> keys, bool prefix_mode,
                                        Dest&& dest) {
    std::vector<StatusOr<size_t>> out;
    out.reserve(keys.size());
    for (const rpc::KeyRange range : master->BatchParts(keys, rpc::kDefaultMaxReplicas)) {
      const size_t at = range.begin;
      const std::span<const std::string> part = keys.subspan(at, range.size());
      std::vector<StatusOr<size_t>> r =
          GetPart(part, prefix_mode, [&](size_t i, uint64_t size) { return dest(at + i, size); });
      const bool whole = r.size() == part.size() && (r.empty() || r.back().ok());
      std::move(r.begin(), r.end(), std::back_inserter(out));
      if (prefix_mode && !whole) break;  // the prefix ended in this part
    }
    return out;
  }

  // GetMany of one part.
  //
  // Keys with a placement hint are copied ahead, during the lease round trip
  // (placement_hints.h); not in prefix mode, where buffers past the prefix must
  // stay untouched.
  //
  // With config.verify_checksums every read, copies ahead included, is hashed
  // as it is copied and kept only if it matches the value's checksum. A replica
  // that does not is reported to the master and the next one is read.
  template <typename Dest>
  std::vector<StatusOr<size_t>> GetPart(std::span<const std::string> keys, bool prefix_mode,
                                        Dest&& dest) {
    struct Ahead {
      client::PlacementHint hint;
      client::ObjectMemory memory;  // one buffer or slices, as dest gave them
      bool copied = false;
      uint64_t checksum = 0;  // of the bytes copied, when verifying
    };
    const bool verify = config.verify_checksums;
    std::vector<std::optional<Ahead>> ahead;
    std::function<void()> copy_ahead;
    if (hints && !prefix_mode) {
      ahead.resize(keys.size());
      const int64_t now = SteadyClock::Instance().NowMs();
      uint64_t budget = kMaxCopyAheadBytes;
      for (size_t i = 0; i < keys.size(); ++i) {
        std::optional<client::PlacementHint> h = hints->Lookup(keys[i], now);
        if (!h || h->length > budget) continue;
        StatusOr<client::ObjectMemory> buf = AsMemory(dest(i, h->length));
        if (!buf.ok()) continue;
        budget -= h->length;
        ahead[i] = Ahead{std::move(*h), *buf};
      }
      if (budget < kMaxCopyAheadBytes) {  // something to copy
        copy_ahead = [&] {
          for (auto& a : ahead) {
            if (a) a->copied = io->CopyAhead(a->hint, a->memory, verify ? &a->checksum : nullptr);
          }
        };
      }
    }
    std::vector<StatusOr<RemoteRead>> reads =
        master->BatchGetReplicaList(keys, prefix_mode, copy_ahead);
    std::vector<StatusOr<size_t>> out;
    out.reserve(reads.size());
    std::vector<size_t> reading;
    std::vector<const RemoteRead*> granted;
    std::vector<client::ObjectMemory> buffers;
    for (size_t i = 0; i < reads.size(); ++i) {
      const bool copied = !ahead.empty() && ahead[i] && ahead[i]->copied;
      const RemoteReplica* confirmed =
          copied && reads[i].ok()
              ? client::Confirming(ahead[i]->hint, reads[i]->size, reads[i]->replicas, UnixNowMs())
              : nullptr;
      if (confirmed != nullptr && verify && ahead[i]->checksum != reads[i]->checksum) {
        // The very replica granted holds other bytes: report it and read the
        // others (not it again) below.
        ReportCorrupt(keys[i], *reads[i], *confirmed);
        hints->Forget(keys[i]);
        std::vector<RemoteReplica>& list = reads[i].value().replicas;
        list.erase(list.begin() + (confirmed - list.data()));
        confirmed = nullptr;
        if (list.empty()) {
          copy_ahead_discarded.fetch_add(1, std::memory_order_relaxed);
          out.emplace_back(Status(
              ErrorCode::kChecksumMismatch,
              "the bytes of '" + keys[i] + "' do not match the checksum recorded when it was put"));
          continue;
        }
      }
      if (confirmed != nullptr) {
        copy_ahead_kept.fetch_add(1, std::memory_order_relaxed);
        // Confirmed now: good for longer.
        hints->Remember(keys[i], *confirmed, SteadyClock::Instance().NowMs());
        out.emplace_back(size_t{reads[i].value().size});
        continue;
      }
      if (copied) copy_ahead_discarded.fetch_add(1, std::memory_order_relaxed);
      if (!reads[i].ok()) {
        if (hints && reads[i].status().code() == ErrorCode::kObjectNotFound) {
          hints->Forget(keys[i]);
        }
        out.emplace_back(reads[i].status());
        continue;
      }
      StatusOr<client::ObjectMemory> buf = AsMemory(dest(i, reads[i].value().size));
      if (!buf.ok()) {
        out.emplace_back(buf.status());
        // The prefix ends here: reading later pages would overwrite buffers
        // the caller is told were not fetched.
        if (prefix_mode) break;
        continue;
      }
      out.emplace_back(size_t{reads[i].value().size});
      reading.push_back(i);
      granted.push_back(&reads[i].value());
      buffers.push_back(buf.value());
    }
    ReadGranted(keys, reading, granted, buffers, out);
    // A read whose capability ran out before its copy (a first mapping of a
    // node's segment, a stalled client) is granted again, as the object may
    // well still be there; kLeaseRetries rounds at most.
    for (int round = 0; round < kLeaseRetries; ++round) {
      std::vector<size_t> expired;
      std::vector<std::string> again;
      for (size_t i : reading) {
        if (out[i].ok() || out[i].status().code() != ErrorCode::kLeaseExpired) continue;
        expired.push_back(i);
        again.push_back(keys[i]);
      }
      if (expired.empty()) break;
      lease_retries.fetch_add(expired.size(), std::memory_order_relaxed);
      std::vector<StatusOr<RemoteRead>> regranted = master->BatchGetReplicaList(again, false);
      reading.clear();
      granted.clear();
      buffers.clear();
      for (size_t j = 0; j < expired.size() && j < regranted.size(); ++j) {
        const size_t i = expired[j];
        StatusOr<client::ObjectMemory> buf =
            regranted[j].ok() ? AsMemory(dest(i, regranted[j]->size))
                              : StatusOr<client::ObjectMemory>(regranted[j].status());
        if (!buf.ok()) {
          out[i] = buf.status();
          continue;
        }
        out[i] = size_t{regranted[j]->size};
        reading.push_back(i);
        granted.push_back(&regranted[j].value());
        buffers.push_back(buf.value());
      }
      ReadGranted(keys, reading, granted, buffers, out);
    }
    return out;
  }

  // Reads keys[reading[k]] into buffers[k] by its grant granted[k]; a failure
  // replaces out[reading[k]]. Corrupt replicas are reported, unreachable nodes too.
  void ReadGranted(std::span<const std::string> keys, const std::vector<size_t>& reading,
                   const std::vector<const RemoteRead*>& granted,
                   const std::vector<client::ObjectMemory>& buffers,
                   std::vector<StatusOr<size_t>>& out) {
    if (reading.empty()) return;
    const bool verify = config.verify_checksums;
    std::vector<const std::vector<RemoteReplica>*> replicas;
    std::vector<uint64_t> checksums;
    for (const RemoteRead* g : granted) {
      replicas.push_back(&g->replicas);
      checksums.push_back(g->checksum);
    }
    std::vector<client::ReplicaIo::CorruptRead> corrupt;
    std::vector<uint32_t> unreachable;
    std::vector<Status> res =
        io->ReadAny(replicas, buffers,
                    verify ? std::span<const uint64_t>(checksums) : std::span<const uint64_t>(),
                    &corrupt, &unreachable);
    if (!unreachable.empty()) (void)master->ReportUnreachable(unreachable);
    for (const client::ReplicaIo::CorruptRead& c : corrupt) {
      ReportCorrupt(keys[reading[c.object]], *granted[c.object], (*replicas[c.object])[c.replica]);
    }
    for (size_t k = 0; k < reading.size(); ++k) {
      if (res[k].ok()) {
        Remember(keys[reading[k]], *replicas[k]);
      } else {
        out[reading[k]] = std::move(res[k]);
      }
    }
  }

  // Counts a replica that failed its checksum and tells the master, which
  // drops it if it is still that version's. A report that fails (master
  // unreachable) changes nothing: the next reader finds and reports it again.
  void ReportCorrupt(const std::string& key, const RemoteRead& read, const RemoteReplica& replica) {
    checksum_mismatches.fetch_add(1, std::memory_order_relaxed);
    (void)master->ReportCorruptReplica(key, replica.cap.segment, replica.cap.offset, read.checksum);
  }

  Status CheckBatch(size_t keys, size_t a, size_t b) const {
    if (a != keys || b != keys) {
      return Status(ErrorCode::kInvalidArgument, "batch needs one pointer and one size per key (" +
                                                     std::to_string(keys) + " keys, " +
                                                     std::to_string(a) + " pointers, " +
                                                     std::to_string(b) + " sizes)");
    }
    return Status::Ok();
  }
};

namespace client {

// How many of a call's per-key results succeeded.
template <typename T>
uint64_t OkCount(const std::vector<T>& results) {
  uint64_t n = 0;
  for (const auto& r : results) n += r.ok() ? 1 : 0;
  return n;
}

// Records a call that returns one result per key.
template <typename T>
std::vector<T> Timed(CallTimer& timer, std::vector<T> results) {
  const uint64_t ok = OkCount(results);
  timer.Done(ok, results.size() - ok);
  return results;
}

// Records a call that returns one status for all of its keys.
template <typename T>
T TimedOne(CallTimer& timer, T result) {
  timer.Done(result.ok() ? 1 : 0, result.ok() ? 0 : 1);
  return result;
}

// Bytes of the keys whose put succeeded.
inline uint64_t OkBytes(const std::vector<Status>& results, std::span<const size_t> sizes) {
  uint64_t n = 0;
  for (size_t i = 0; i < results.size() && i < sizes.size(); ++i) {
    if (results[i].ok()) n += sizes[i];
  }
  return n;
}

}  // namespace client
}  // namespace crescent
