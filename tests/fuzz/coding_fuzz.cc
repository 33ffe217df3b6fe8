// Fuzzes the shared byte codec (common/coding.h) through ByteReader: the
// input is a run of (op byte, field) pairs, each op reading one kind of field
// from the bytes that follow it.
//
// Invariants:
//  - The reader never reads past its input; position() + remaining() is
//    always the input's size.
//  - Each read succeeds exactly when a plain model says it should: a fixed
//    field when its bytes are there; a varint when its bytes are the one
//    encoding the encoder writes for some 64-bit value (so never overlong,
//    padded, over ten bytes or cut short); a Varint32 when that value also
//    fits 32 bits; a length-prefixed slice when its length varint is good and
//    the length is within both the bytes left and the bound.
//  - A read that succeeds returns the model's value; after the first failure
//    every read fails.
//  - Re-encoding every field read reproduces the bytes consumed, exactly.
#include <optional>
#include <string>
#include <string_view>

#include "common/coding.h"
#include "fuzz_support.h"

namespace {

using crescent::ByteReader;

// The varint at the front of `in` by the plain rule (7 bits a byte, at most
// ten bytes, no bits past 64), when it is also the encoder's encoding of its
// value; with the bytes it takes.
std::optional<std::pair<uint64_t, size_t>> ModelVarint(std::string_view in) {
  uint64_t v = 0;
  for (size_t i = 0; i < in.size() && i < crescent::kMaxVarintBytes; ++i) {
    const auto byte = static_cast<uint8_t>(in[i]);
    // Bit 63 is the tenth byte's lowest: any bit above it is past 64.
    if (i == 9 && (byte & 0x7f) > 1) return std::nullopt;
    v |= uint64_t{byte & 0x7fu} << (7 * i);
    if (byte >= 0x80) continue;
    std::string again;
    crescent::PutVarint(again, v);
    if (again != in.substr(0, i + 1)) return std::nullopt;
    return std::make_pair(v, i + 1);
  }
  return std::nullopt;
}

// Reads one fixed-width T with `read` and checks it against the model: it
// succeeds exactly when sizeof(T) bytes are left, and gives what `decode`
// reads there. Re-encodes it into `again` and moves *pos past it.
template <typename T>
bool CheckFixed(ByteReader& in, std::string_view rest, bool (ByteReader::*read)(T*),
                T (*decode)(const void*), void (*put)(std::string&, T), std::string& again,
                size_t* pos) {
  T v = 0;
  const bool ok = (in.*read)(&v);
  FUZZ_CHECK(ok == (rest.size() >= sizeof(T)));
  if (!ok) return false;
  FUZZ_CHECK(v == decode(rest.data()));
  put(again, v);
  *pos += sizeof(T);
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  ByteReader in(data, size);
  size_t pos = 0;       // the model's position
  bool failed = false;  // the model's failure
  std::string again;    // every field read, encoded again
  while (!failed && pos < size) {
    FUZZ_CHECK(in.position() == pos && in.remaining() == size - pos);
    uint8_t op = 0;
    FUZZ_CHECK(in.Byte(&op) && op == data[pos]);
    again.push_back(static_cast<char>(op));
    ++pos;
    const std::string_view rest = input.substr(pos);
    switch (op % 8) {
      case 0:
        failed = !CheckFixed<uint16_t>(in, rest, &ByteReader::Fixed16, crescent::DecodeFixed16,
                                       crescent::PutFixed16, again, &pos);
        break;
      case 1:
        failed = !CheckFixed<uint32_t>(in, rest, &ByteReader::Fixed32, crescent::DecodeFixed32,
                                       crescent::PutFixed32, again, &pos);
        break;
      case 2:
        failed = !CheckFixed<uint64_t>(in, rest, &ByteReader::Fixed64, crescent::DecodeFixed64,
                                       crescent::PutFixed64, again, &pos);
        break;
      case 3:
      case 4: {
        const auto model = ModelVarint(rest);
        uint64_t v = 0;
        uint32_t v32 = 0;
        const bool want32 = op % 8 == 4;
        const bool ok = want32 ? in.Varint32(&v32) : in.Varint(&v);
        if (want32) v = v32;
        FUZZ_CHECK(ok == (model && (!want32 || model->first <= UINT32_MAX)));
        if (ok) {
          FUZZ_CHECK(v == model->first);
          crescent::PutVarint(again, v);
          pos += model->second;
        }
        failed = !ok;
        break;
      }
      case 5:
      case 6: {
        // A bound from the op's high bits: 0, 1, 2, ... 31 bytes, or none.
        const uint64_t bound = op % 8 == 5 ? op >> 3 : UINT64_MAX;
        const auto model = ModelVarint(rest);
        std::string_view slice;
        const bool ok = in.LengthPrefixed(&slice, bound);
        FUZZ_CHECK(ok ==
                   (model && model->first <= bound && model->first <= rest.size() - model->second));
        if (ok) {
          FUZZ_CHECK(slice == rest.substr(model->second, model->first));
          crescent::PutLengthPrefixed(again, slice);
          pos += model->second + slice.size();
        }
        failed = !ok;
        break;
      }
      default: {
        const size_t n = op >> 3;
        std::string_view bytes;
        const bool ok = in.Bytes(n, &bytes);
        FUZZ_CHECK(ok == (n <= rest.size()));
        if (ok) {
          FUZZ_CHECK(bytes == rest.substr(0, n));
          again.append(bytes);
          pos += n;
        }
        failed = !ok;
        break;
      }
    }
    FUZZ_CHECK(in.ok() == !failed);
  }
  if (failed) {
    // Sticky: nothing reads after the first failure, not even what is there.
    uint8_t b = 0;
    uint64_t v = 0;
    std::string_view s;
    FUZZ_CHECK(!in.Byte(&b) && !in.Varint(&v) && !in.Bytes(0, &s) && !in.done());
    return 0;
  }
  FUZZ_CHECK(in.done() && in.position() == size);
  FUZZ_CHECK(again == input);
  return 0;
}
