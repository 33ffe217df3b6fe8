// FrameBuffer: what a reader of a framed stream has read but not yet consumed
// (the lean control protocol's server and client: control_server.cc,
// control_channel.cc).
//
// Invariant: the buffer grows only as bytes arrive, never to what a header
// merely claims. Room() offers at least kStep / 2 free bytes; it grows only
// when the bytes it holds leave less than that, and then geometrically, to
// less than twice the bytes held plus one step. So a header that claims a
// 64 MiB body and sends nothing costs one step, and one that sends 40 MiB of
// it costs at most about 80 MiB of address space, of which only the bytes
// written are resident (growth does not zero the new room). A buffer left
// empty after a large frame shrinks back to one step.
//
// Single-threaded: its one reader owns it.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string_view>

namespace crescent::transfer {

class FrameBuffer {
 public:
  static constexpr size_t kStep = 64 << 10;

  FrameBuffer() : data_(new char[kStep]), size_(kStep) {}

  // Where to read next: at least kStep / 2 bytes, compacting or growing first.
  std::span<char> Room();
  // `n` bytes were read into the front of Room().
  void Filled(size_t n) { end_ += n; }
  // The bytes read and not yet consumed.
  std::string_view Pending() const { return {data_.get() + begin_, end_ - begin_}; }
  // Drops the first `n` pending bytes (a frame handled).
  void Consume(size_t n) { begin_ += n; }
  // The bytes allocated now (for tests of the invariant above).
  size_t capacity() const { return size_; }

 private:
  std::unique_ptr<char[]> data_;
  size_t size_;
  size_t begin_ = 0;  // the first pending byte
  size_t end_ = 0;    // past the last byte read
};

}  // namespace crescent::transfer
