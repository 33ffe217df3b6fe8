// The byte codec that every persisted and wire format shares: fixed-width
// little-endian integers, LEB128 varints, varint-length-prefixed byte strings,
// and ByteReader, which decodes them from a bounded input.
//
// Built on it: the operation log's files (durability/file_log.h), snapshots
// (durability/snapshot_file.h), log records (master/log_record.h), the offset
// allocator's blob (cache/offset_allocator.h), the data plane's frames
// (transfer/wire.h) and the capability MAC input (transfer/capability.h).
// Their bytes are fixed on disk and on the wire (golden-byte tests in each
// format's test): a change here must not change any encoding.
//
// One accepted encoding per value. Encoders write, and decoders accept, only:
//  - fixed-width values as exactly their width in bytes, least significant first;
//  - varints of 7 bits a byte, least significant group first, the high bit set
//    on every byte but the last; at most kMaxVarintBytes bytes, the tenth
//    holding only bit 63 (so it is 1); and minimal: the last byte is 0 only
//    when it is the only byte (0x80 0x00 is not 0);
//  - length-prefixed strings as a varint length and that many bytes.
// Anything else (an overlong or padded varint, one cut short, a length past
// the input's end or the caller's bound) is refused. So a decoder that
// accepts a record knows it is the one the encoder would have written.
//
// ByteReader never reads past its input. Its first failure is sticky: every
// later read fails too and leaves its output untouched, so a decoder may read
// a run of fields and ask ok() once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace crescent {

inline constexpr size_t kMaxVarintBytes = 10;

inline void EncodeFixed16(void* out, uint16_t v) {
  auto* p = static_cast<uint8_t*>(out);
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}
inline void EncodeFixed32(void* out, uint32_t v) {
  auto* p = static_cast<uint8_t*>(out);
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void EncodeFixed64(void* out, uint64_t v) {
  auto* p = static_cast<uint8_t*>(out);
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

// The compiler turns these into single loads on a little-endian host.
inline uint16_t DecodeFixed16(const void* in) {
  const auto* p = static_cast<const uint8_t*>(in);
  return static_cast<uint16_t>(p[0] | p[1] << 8);
}
inline uint32_t DecodeFixed32(const void* in) {
  const auto* p = static_cast<const uint8_t*>(in);
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{p[i]} << (8 * i);
  return v;
}
inline uint64_t DecodeFixed64(const void* in) {
  const auto* p = static_cast<const uint8_t*>(in);
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}

inline void PutFixed16(std::string& out, uint16_t v) {
  char b[2];
  EncodeFixed16(b, v);
  out.append(b, sizeof b);
}
inline void PutFixed32(std::string& out, uint32_t v) {
  char b[4];
  EncodeFixed32(b, v);
  out.append(b, sizeof b);
}
inline void PutFixed64(std::string& out, uint64_t v) {
  char b[8];
  EncodeFixed64(b, v);
  out.append(b, sizeof b);
}

inline void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

inline void PutLengthPrefixed(std::string& out, std::string_view bytes) {
  PutVarint(out, bytes.size());
  out.append(bytes);
}

class ByteReader {
 public:
  explicit ByteReader(std::string_view in)
      : at_(reinterpret_cast<const uint8_t*>(in.data())), begin_(at_), end_(at_ + in.size()) {}
  ByteReader(const void* data, size_t n)
      : at_(static_cast<const uint8_t*>(data)), begin_(at_), end_(at_ + n) {}
  // The reader keeps no copy: a temporary string would be gone before the reads.
  explicit ByteReader(std::string&&) = delete;

  bool Byte(uint8_t* v) {
    if (!Need(1)) return false;
    *v = *at_++;
    return true;
  }
  bool Fixed16(uint16_t* v) { return Fixed(v, DecodeFixed16); }
  bool Fixed32(uint32_t* v) { return Fixed(v, DecodeFixed32); }
  bool Fixed64(uint64_t* v) { return Fixed(v, DecodeFixed64); }

  // A strict varint (the header's rules).
  bool Varint(uint64_t* v) {
    if (failed_) return false;
    uint64_t result = 0;
    for (size_t i = 0; i < kMaxVarintBytes; ++i) {
      if (at_ + i == end_) return Fail();  // cut short
      const uint8_t byte = at_[i];
      // The tenth byte may hold only bit 63: any other bit is past 64, and
      // a continuation would make an eleventh byte.
      if (i == kMaxVarintBytes - 1 && byte != 1) return Fail();
      result |= uint64_t{byte & 0x7fu} << (7 * i);
      if (byte < 0x80) {
        if (byte == 0 && i > 0) return Fail();  // padded: not the minimal encoding
        at_ += i + 1;
        *v = result;
        return true;
      }
    }
    return Fail();  // not reached: the tenth byte either ends the varint or fails
  }
  // A varint that must fit 32 bits.
  bool Varint32(uint32_t* v) {
    uint64_t w = 0;
    if (!Varint(&w)) return false;
    if (w > UINT32_MAX) return Fail();
    *v = static_cast<uint32_t>(w);
    return true;
  }

  // The next `n` bytes, in place.
  bool Bytes(size_t n, std::string_view* out) {
    if (!Need(n)) return false;
    *out = {reinterpret_cast<const char*>(at_), n};
    at_ += n;
    return true;
  }
  // A varint length of at most `max_len`, then that many bytes, in place.
  bool LengthPrefixed(std::string_view* out, uint64_t max_len = UINT64_MAX) {
    uint64_t n = 0;
    if (!Varint(&n)) return false;
    if (n > max_len || n > remaining()) return Fail();
    return Bytes(static_cast<size_t>(n), out);
  }
  // The same, copied into *out (reusing its memory).
  bool LengthPrefixed(std::string* out, uint64_t max_len) {
    std::string_view bytes;
    if (!LengthPrefixed(&bytes, max_len)) return false;
    out->assign(bytes);
    return true;
  }

  // No read has failed.
  bool ok() const { return !failed_; }
  // Every read succeeded and the input is used up: a decoder's last check,
  // which refuses trailing bytes.
  bool done() const { return !failed_ && at_ == end_; }
  size_t remaining() const { return static_cast<size_t>(end_ - at_); }
  // Bytes consumed so far.
  size_t position() const { return static_cast<size_t>(at_ - begin_); }

 private:
  bool Fail() {
    failed_ = true;
    return false;
  }
  bool Need(size_t n) {
    if (failed_) return false;
    return n <= remaining() || Fail();
  }
  template <typename T>
  bool Fixed(T* v, T (*decode)(const void*)) {
    if (!Need(sizeof(T))) return false;
    *v = decode(at_);
    at_ += sizeof(T);
    return true;
  }

  const uint8_t* at_;
  const uint8_t* begin_;
  const uint8_t* end_;
  bool failed_ = false;
};

}  // namespace crescent
