// PutPath (put_path.h): the put protocol's rounds and retries.
#include "client/put_path.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "common/clock.h"
#include "transfer/transport.h"

namespace crescent::client {

namespace {
// A put's retries (ClientConfig::put_retry_ms) wait this long, doubling to the max.
constexpr int64_t kRetryBackoffMs = 10;
constexpr int64_t kRetryBackoffMaxMs = 100;
}  // namespace

std::vector<Status> PutPath::Once(std::span<const std::string> keys,
                                  std::span<const ObjectMemory> data, std::span<const size_t> sizes,
                                  const master::PutConfig& config, bool chain,
                                  std::vector<bool>& retry, std::vector<Unended>& unended) {
  std::vector<uint64_t> sizes64(sizes.begin(), sizes.end());
  std::vector<StatusOr<rpc::RemotePut>> started = master_.BatchPutStart(keys, sizes64, config, chain);
  std::vector<Status> out(keys.size());
  retry.assign(keys.size(), false);
  unended.assign(keys.size(), Unended{});
  std::vector<size_t> writing;
  std::vector<const std::vector<rpc::RemoteReplica>*> replicas;
  std::vector<ObjectMemory> buffers;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!started[i].ok()) {
      out[i] = started[i].status();
      // UNAVAILABLE: the master unreachable, or no segment to place on yet.
      // Not a TIMEOUT: the put may have started, and a retry would meet it.
      retry[i] = out[i].code() == ErrorCode::kUnavailable;
      continue;
    }
    writing.push_back(i);
    replicas.push_back(&started[i]->replicas);
    buffers.push_back(data[i]);
  }
  if (writing.empty()) return out;
  std::vector<uint32_t> unreachable;
  // Each value's checksum is taken by the transports as its bytes leave the
  // caller's buffer, and every replica must have sent the same bytes.
  std::vector<uint64_t> checksums;
  std::vector<Status> written =
      io_.WriteAll(replicas, std::span<const ObjectMemory>(buffers), &unreachable, &checksums);
  if (!unreachable.empty()) (void)master_.ReportUnreachable(unreachable);
  std::vector<std::string> end_keys, revoke_keys;
  std::vector<uint64_t> end_tokens, end_checksums, revoke_tokens;
  std::vector<size_t> end_idx;
  for (size_t k = 0; k < writing.size(); ++k) {
    const uint64_t token = started[writing[k]]->token;
    if (written[k].ok()) {
      end_keys.push_back(keys[writing[k]]);
      end_tokens.push_back(token);
      end_checksums.push_back(checksums[k]);
      end_idx.push_back(writing[k]);
    } else {
      // Revoked below, so a retry meets no pending put of its own.
      retry[writing[k]] = transfer::IsNodeFailure(written[k].code());
      out[writing[k]] = std::move(written[k]);
      revoke_keys.push_back(keys[writing[k]]);
      revoke_tokens.push_back(token);
    }
  }
  // Revoke first: a failed write must not linger as a pending put. A revoke
  // that fails (master gone) is reclaimed by the master's put timeout. The
  // tokens keep a late end or revoke off a later put of the same key.
  if (!revoke_keys.empty()) (void)master_.BatchPutRevoke(revoke_keys, revoke_tokens);
  if (end_keys.empty()) return out;
  std::vector<Status> ended = master_.BatchPutEnd(end_keys, end_tokens, end_checksums);
  for (size_t k = 0; k < end_idx.size(); ++k) {
    const size_t i = end_idx[k];
    if (ended[k].ok()) {
      ended_(end_keys[k], *started[i], end_checksums[k], sizes[i]);
    } else if (ended[k].code() == ErrorCode::kPutNotStarted) {
      // The master dropped the put after granting it: it restarted before the
      // end, or a replica's segment was unmounted (its node stopped), or the
      // put outlived the master's put timeout. Nothing of it is visible; the
      // put as a whole may be tried again.
      ended[k] = Status(ErrorCode::kUnavailable,
                        "the master no longer knows this put of '" + end_keys[k] +
                            "' (it restarted, or the replica's store node unmounted, or the put "
                            "outlived the put timeout): " +
                            ended[k].message());
      retry[i] = true;
    } else if (ended[k].code() == ErrorCode::kUnavailable) {
      // Unanswered: the end may have been applied. Ended again next round.
      retry[i] = true;
      unended[i] = {true, end_tokens[k], end_checksums[k], sizes[i], *started[i]};
    }
    out[i] = std::move(ended[k]);
  }
  return out;
}

std::vector<size_t> PutPath::EndAgain(std::span<const std::string> keys,
                                      const std::vector<size_t>& idx,
                                      std::vector<Unended>& unended, std::vector<Status>& out,
                                      std::vector<size_t>& again) {
  std::vector<std::string> k;
  std::vector<uint64_t> tokens, checksums;
  for (size_t i : idx) {
    k.push_back(keys[i]);
    tokens.push_back(unended[i].token);
    checksums.push_back(unended[i].checksum);
  }
  std::vector<Status> ended = master_.BatchPutEnd(k, tokens, checksums);
  std::vector<size_t> restart;
  for (size_t j = 0; j < idx.size(); ++j) {
    const size_t i = idx[j];
    if (ended[j].ok()) {
      ended_(keys[i], unended[i].put, unended[i].checksum, unended[i].size);
      unended[i].pending = false;
    } else if (ended[j].code() == ErrorCode::kPutNotStarted) {
      unended[i].pending = false;  // not applied: the put starts over
      restart.push_back(i);
      continue;
    } else if (ended[j].code() == ErrorCode::kUnavailable) {
      again.push_back(i);
    } else {
      unended[i].pending = false;
    }
    out[i] = std::move(ended[j]);
  }
  return restart;
}

std::vector<Status> PutPath::Put(std::span<const std::string> keys,
                                 std::span<const ObjectMemory> data, std::span<const size_t> sizes,
                                 const master::PutConfig& base, uint32_t replicas, bool chain) {
  const int64_t deadline = SteadyClock::Instance().NowMs() + config_.put_retry_ms;
  std::vector<Status> out(keys.size());
  std::vector<Unended> unended(keys.size());
  std::vector<size_t> pending(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) pending[i] = i;
  int64_t backoff_ms = kRetryBackoffMs;
  for (bool first = true;; first = false) {
    std::vector<size_t> again;
    if (!first) {
      // Keys whose end went unanswered are ended again, the rest start over.
      std::vector<size_t> end_again, start_over;
      for (size_t i : pending) (unended[i].pending ? end_again : start_over).push_back(i);
      if (!end_again.empty()) {
        for (size_t i : EndAgain(keys, end_again, unended, out, again)) start_over.push_back(i);
        std::sort(start_over.begin(), start_over.end());
      }
      pending = std::move(start_over);
    }
    // One round of every pending key; a chain's in runs of consecutive keys.
    for (size_t a = 0; a < pending.size();) {
      size_t b = a + 1;
      while (b < pending.size() && (!chain || pending[b] == pending[b - 1] + 1)) ++b;
      // The run's keys, values and sizes: the caller's own when the run is
      // every key (a first round), else copies.
      std::span<const std::string> run_keys = keys;
      std::span<const ObjectMemory> run_data = data;
      std::span<const size_t> run_sizes = sizes;
      std::vector<std::string> k;
      std::vector<ObjectMemory> d;
      std::vector<size_t> z;
      if (b - a != keys.size()) {
        for (size_t j = a; j < b; ++j) {
          k.push_back(keys[pending[j]]);
          d.push_back(data[pending[j]]);
          z.push_back(sizes[pending[j]]);
        }
        run_keys = k;
        run_data = d;
        run_sizes = z;
      }
      // Keys go part by part (MasterClient::BatchParts, one request each): a
      // part's puts are started, written and ended before the next part's
      // start, so that no put of a large batch outlives its write capability
      // or the master's put timeout while earlier parts are written.
      for (const rpc::KeyRange part : master_.BatchParts(run_keys, replicas)) {
        const size_t first_key = pending[a + part.begin];
        master::PutConfig cfg = base;
        // Linked to the page before, unless that key was refused as invalid
        // (as a parent it would fail the whole part).
        if (chain && first_key > 0 && out[first_key - 1].code() != ErrorCode::kInvalidKey) {
          cfg.parent_key = keys[first_key - 1];
        }
        std::vector<bool> retry;
        std::vector<Unended> part_unended;
        std::vector<Status> r =
            Once(run_keys.subspan(part.begin, part.size()), run_data.subspan(part.begin, part.size()),
                 run_sizes.subspan(part.begin, part.size()), cfg, chain, retry, part_unended);
        for (size_t j = 0; j < part.size(); ++j) {
          const size_t i = pending[a + part.begin + j];
          out[i] = std::move(r[j]);
          unended[i] = std::move(part_unended[j]);
          if (retry[j]) again.push_back(i);
        }
      }
      a = b;
    }
    if (again.empty()) break;
    const int64_t now = SteadyClock::Instance().NowMs();
    if (now + backoff_ms > deadline) break;
    retries_.fetch_add(again.size(), std::memory_order_relaxed);
    std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms));
    backoff_ms = std::min(backoff_ms * 2, kRetryBackoffMaxMs);
    std::sort(again.begin(), again.end());
    pending = std::move(again);
  }
  return out;
}

}  // namespace crescent::client
