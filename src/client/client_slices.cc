// Client's multi-buffer calls (crescent/client.h): each key's value moves
// straight between its slices and the store node, as one object in the
// transfer layer (transfer::TransferOp::slices): no staging buffer.
#include <vector>

#include "client/client_impl.h"

namespace crescent {

namespace {

// A key's slices, checked against the registered buffers for `need`.
Status CheckSlices(const client::BufferRegistry& buffers, const std::vector<MemorySlice>& slices,
                   BufferAccess need) {
  if (slices.empty()) {
    return Status(ErrorCode::kInvalidArgument, "each key needs at least one buffer slice");
  }
  for (const MemorySlice& s : slices) {
    if (s.size == 0) return Status(ErrorCode::kInvalidSize, "empty buffer slice");
    if (Status c = buffers.Check(s.data, s.size, need); !c.ok()) return c;
  }
  return Status::Ok();
}

// The transfer layer's form of `slices`, cut to their first `bytes` bytes.
std::vector<transfer::BufferSlice> Cut(const std::vector<MemorySlice>& slices, uint64_t bytes) {
  std::vector<transfer::BufferSlice> out;
  for (const MemorySlice& s : slices) {
    if (bytes == 0) break;
    const size_t take = static_cast<size_t>(std::min<uint64_t>(s.size, bytes));
    out.push_back({static_cast<std::byte*>(s.data), take});
    bytes -= take;
  }
  return out;
}

}  // namespace

std::vector<Status> Client::BatchPutFromSlices(std::span<const std::string> keys,
                                               std::span<const std::vector<MemorySlice>> slices,
                                               const PutOptions& options) {
  client::CallTimer timer(impl_->metrics, client::ClientOp::kPut);
  if (slices.size() != keys.size()) {
    return client::Timed(
        timer, std::vector<Status>(keys.size(), Status(ErrorCode::kInvalidArgument,
                                                       "one list of slices per key needed")));
  }
  std::vector<Status> out(keys.size());
  std::vector<std::string> ok_keys;
  std::vector<std::vector<transfer::BufferSlice>> cut;
  std::vector<size_t> ok_sizes, ok_idx;
  cut.reserve(keys.size());  // stable: the memory below points into it
  for (size_t i = 0; i < keys.size(); ++i) {
    if (Status s = CheckSlices(impl_->buffers, slices[i], BufferAccess::kReadOnly); !s.ok()) {
      out[i] = std::move(s);
      continue;
    }
    uint64_t total = 0;
    for (const MemorySlice& s : slices[i]) total += s.size;
    ok_keys.push_back(keys[i]);
    cut.push_back(Cut(slices[i], total));
    ok_sizes.push_back(static_cast<size_t>(total));
    ok_idx.push_back(i);
  }
  std::vector<client::ObjectMemory> memory;
  for (const auto& c : cut) {
    // One slice is one buffer: the transports' plainer path.
    memory.push_back(c.size() == 1 ? client::ObjectMemory{c[0].data, {}}
                                   : client::ObjectMemory{nullptr, c});
  }
  std::vector<Status> r = impl_->PutMany(ok_keys, memory, ok_sizes, options, false);
  impl_->metrics.AddBytes(client::ClientOp::kPut, client::OkBytes(r, ok_sizes));
  for (size_t k = 0; k < ok_idx.size(); ++k) out[ok_idx[k]] = std::move(r[k]);
  return client::Timed(timer, std::move(out));
}

std::vector<StatusOr<size_t>> Client::BatchGetIntoSlices(
    std::span<const std::string> keys, std::span<const std::vector<MemorySlice>> slices) {
  client::CallTimer timer(impl_->metrics, client::ClientOp::kGet);
  if (slices.size() != keys.size()) {
    return client::Timed(timer, std::vector<StatusOr<size_t>>(
                                    keys.size(), Status(ErrorCode::kInvalidArgument,
                                                        "one list of slices per key needed")));
  }
  std::vector<Status> checked(keys.size());
  std::vector<uint64_t> capacity(keys.size(), 0);
  for (size_t i = 0; i < keys.size(); ++i) {
    checked[i] = CheckSlices(impl_->buffers, slices[i], BufferAccess::kReadWrite);
    for (const MemorySlice& s : slices[i]) capacity[i] += s.size;
  }
  std::vector<std::vector<transfer::BufferSlice>> cut(keys.size());
  std::vector<StatusOr<size_t>> got =
      impl_->GetMany(keys, false, [&](size_t i, uint64_t size) -> StatusOr<client::ObjectMemory> {
        if (!checked[i].ok()) return checked[i];
        if (size > capacity[i]) {
          return Status(ErrorCode::kBufferTooSmall,
                        "buffers of " + std::to_string(capacity[i]) + " bytes are too small: '" +
                            keys[i] + "' needs " + std::to_string(size) + " bytes");
        }
        cut[i] = Cut(slices[i], size);
        if (cut[i].size() == 1) return client::ObjectMemory{cut[i][0].data, {}};
        return client::ObjectMemory{nullptr, cut[i]};
      });
  uint64_t bytes = 0;
  for (const auto& g : got) bytes += g.ok() ? g.value() : 0;
  impl_->metrics.AddBytes(client::ClientOp::kGet, bytes);
  return client::Timed(timer, std::move(got));
}

}  // namespace crescent
