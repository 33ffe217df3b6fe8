// The shared byte codec (common/coding.h): values round-trip, each has one
// accepted encoding (overlong, padded, eleven-byte and cut-short varints are
// refused), length-prefixed strings stay inside their input and bound, and a
// reader's first failure is sticky.
#include "common/coding.h"

#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "common/hex_for_test.h"

namespace crescent {
namespace {

// The value a varint decodes to, or nullopt when it is refused; also checks
// that an accepted varint was read to its end and no further.
std::optional<uint64_t> ReadVarint(const std::string& bytes) {
  ByteReader in(bytes);
  uint64_t v = 0;
  if (!in.Varint(&v)) {
    EXPECT_FALSE(in.ok());
    return std::nullopt;
  }
  EXPECT_TRUE(in.done()) << HexForTest(bytes);
  return v;
}

TEST(CodingTest, FixedWidthIsLittleEndian) {
  std::string out;
  PutFixed16(out, 0x0102);
  PutFixed32(out, 0x03040506);
  PutFixed64(out, 0x0708090a0b0c0d0eull);
  EXPECT_EQ(HexForTest(out), "0201060504030e0d0c0b0a090807");
  EXPECT_EQ(DecodeFixed16(out.data()), 0x0102);
  EXPECT_EQ(DecodeFixed32(out.data() + 2), 0x03040506u);
  EXPECT_EQ(DecodeFixed64(out.data() + 6), 0x0708090a0b0c0d0eull);

  uint8_t raw[8];
  EncodeFixed64(raw, ~0ull);
  EXPECT_EQ(DecodeFixed64(raw), ~0ull);
  EncodeFixed32(raw, 0x80000001u);
  EXPECT_EQ(HexForTest(raw, 4), "01000080");
}

TEST(CodingTest, FixedWidthValuesRoundTripThroughTheReader) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 1000; ++i) {
    const uint64_t v = rng() >> (rng() % 64);
    std::string out;
    PutFixed16(out, static_cast<uint16_t>(v));
    PutFixed32(out, static_cast<uint32_t>(v));
    PutFixed64(out, v);
    ByteReader in(out);
    uint16_t a = 0;
    uint32_t b = 0;
    uint64_t c = 0;
    ASSERT_TRUE(in.Fixed16(&a) && in.Fixed32(&b) && in.Fixed64(&c));
    EXPECT_TRUE(in.done());
    EXPECT_EQ(a, static_cast<uint16_t>(v));
    EXPECT_EQ(b, static_cast<uint32_t>(v));
    EXPECT_EQ(c, v);
  }
}

TEST(CodingTest, VarintsAreLeb128) {
  auto encode = [](uint64_t v) {
    std::string out;
    PutVarint(out, v);
    return HexForTest(out);
  };
  EXPECT_EQ(encode(0), "00");
  EXPECT_EQ(encode(1), "01");
  EXPECT_EQ(encode(127), "7f");
  EXPECT_EQ(encode(128), "8001");
  EXPECT_EQ(encode(300), "ac02");
  EXPECT_EQ(encode(UINT32_MAX), "ffffffff0f");
  EXPECT_EQ(encode(uint64_t{1} << 63), "80808080808080808001");
  EXPECT_EQ(encode(UINT64_MAX), "ffffffffffffffffff01");
}

TEST(CodingTest, EveryVarintRoundTripsInItsOneEncoding) {
  std::vector<uint64_t> values = {
      0, 1, 127, 128, 16383, 16384, UINT32_MAX, uint64_t{1} << 63, UINT64_MAX};
  for (int bits = 0; bits < 64; ++bits) {
    values.push_back(uint64_t{1} << bits);
    values.push_back((uint64_t{1} << bits) - 1);
  }
  std::mt19937_64 rng(11);
  for (int i = 0; i < 1000; ++i) values.push_back(rng() >> (rng() % 64));
  for (uint64_t v : values) {
    std::string bytes;
    PutVarint(bytes, v);
    ASSERT_LE(bytes.size(), kMaxVarintBytes);
    EXPECT_EQ(ReadVarint(bytes), v) << HexForTest(bytes);
  }
}

TEST(CodingTest, OverlongAndPaddedVarintsAreRefused) {
  // Padded: a value followed by zero groups. Each decodes to a valid number
  // but is not its encoding, so it is refused.
  EXPECT_EQ(ReadVarint(UnhexForTest("8000")), std::nullopt);                  // 0 in two bytes
  EXPECT_EQ(ReadVarint(UnhexForTest("818000")), std::nullopt);                // 1 in three
  EXPECT_EQ(ReadVarint(UnhexForTest("ff8000")), std::nullopt);                // 127 in three
  EXPECT_EQ(ReadVarint(UnhexForTest("80808080808080808000")), std::nullopt);  // 0 in ten
  // A tenth byte holding more than bit 63: the value does not fit 64 bits.
  EXPECT_EQ(ReadVarint(UnhexForTest("ffffffffffffffffff02")), std::nullopt);
  EXPECT_EQ(ReadVarint(UnhexForTest("8280808080808080807f")), std::nullopt);
  // Eleven bytes (and more): the tenth carries a continuation bit.
  EXPECT_EQ(ReadVarint(UnhexForTest("ffffffffffffffffff8100")), std::nullopt);
  EXPECT_EQ(ReadVarint(UnhexForTest("8080808080808080808001")), std::nullopt);
  EXPECT_EQ(ReadVarint(std::string(20, '\xff')), std::nullopt);
  // The largest value is fine, in ten bytes.
  EXPECT_EQ(ReadVarint(UnhexForTest("ffffffffffffffffff01")), UINT64_MAX);
  EXPECT_EQ(ReadVarint(UnhexForTest("80808080808080808001")), uint64_t{1} << 63);
}

TEST(CodingTest, VarintsCutShortAreRefused) {
  EXPECT_EQ(ReadVarint(""), std::nullopt);
  for (uint64_t v : {uint64_t{128}, uint64_t{300}, uint64_t{UINT32_MAX}, UINT64_MAX}) {
    std::string bytes;
    PutVarint(bytes, v);
    for (size_t n = 0; n < bytes.size(); ++n) {
      EXPECT_EQ(ReadVarint(bytes.substr(0, n)), std::nullopt) << v << " cut at " << n;
    }
  }
}

TEST(CodingTest, Varint32RefusesWhatDoesNotFit) {
  std::string bytes;
  PutVarint(bytes, UINT32_MAX);
  PutVarint(bytes, uint64_t{UINT32_MAX} + 1);
  ByteReader in(bytes);
  uint32_t v = 0;
  ASSERT_TRUE(in.Varint32(&v));
  EXPECT_EQ(v, UINT32_MAX);
  EXPECT_FALSE(in.Varint32(&v));
  EXPECT_EQ(v, UINT32_MAX) << "a failed read leaves its output alone";
  EXPECT_FALSE(in.ok());
}

TEST(CodingTest, LengthPrefixedStringsRoundTrip) {
  std::string out;
  PutLengthPrefixed(out, "");
  PutLengthPrefixed(out, std::string("a\0b", 3));
  PutLengthPrefixed(out, std::string(300, 'x'));
  EXPECT_EQ(HexForTest(out.substr(0, 7)), "0003610062ac02");
  ByteReader in(out);
  std::string_view a, b;
  std::string c = "kept memory";
  ASSERT_TRUE(in.LengthPrefixed(&a));
  ASSERT_TRUE(in.LengthPrefixed(&b, 3));
  ASSERT_TRUE(in.LengthPrefixed(&c, 300));
  EXPECT_TRUE(in.done());
  EXPECT_EQ(a, "");
  EXPECT_EQ(b, std::string_view("a\0b", 3));
  EXPECT_EQ(c, std::string(300, 'x'));
}

TEST(CodingTest, LengthPrefixedStringsStayInsideTheirInputAndBound) {
  std::string out;
  PutLengthPrefixed(out, "hello");
  std::string_view s;
  // Every cut: the length or the bytes are short.
  for (size_t n = 0; n < out.size(); ++n) {
    ByteReader in(std::string_view(out).substr(0, n));
    EXPECT_FALSE(in.LengthPrefixed(&s)) << "cut at " << n;
  }
  // A length past the end, by one and by far, never reads on.
  for (const char* hex : {"0568656c6c", "ffffffffffffffffff0168"}) {
    const std::string bytes = UnhexForTest(hex);
    ByteReader past(bytes);
    EXPECT_FALSE(past.LengthPrefixed(&s)) << hex;
  }
  // The caller's bound: a length above it is refused even though the bytes are there.
  ByteReader bounded(out);
  EXPECT_FALSE(bounded.LengthPrefixed(&s, 4));
  ByteReader exact(out);
  ASSERT_TRUE(exact.LengthPrefixed(&s, 5));
  EXPECT_EQ(s, "hello");
  // A slice ends where the next field starts.
  out += "rest";
  ByteReader in(out);
  ASSERT_TRUE(in.LengthPrefixed(&s));
  EXPECT_EQ(in.position(), 6u);
  EXPECT_EQ(in.remaining(), 4u);
}

TEST(CodingTest, TheFirstFailureIsSticky) {
  std::string out;
  PutVarint(out, 5);
  ByteReader in(out);
  uint64_t v = 0;
  uint8_t b = 0;
  ASSERT_TRUE(in.Varint(&v));
  EXPECT_FALSE(in.Byte(&b));  // nothing left
  EXPECT_FALSE(in.ok());
  EXPECT_FALSE(in.done());
  // Later reads fail too, even ones that the remaining bytes would allow.
  const std::string padded = UnhexForTest("800007");
  ByteReader again(padded);
  EXPECT_FALSE(again.Varint(&v));
  EXPECT_FALSE(again.Byte(&b));
}

TEST(CodingTest, TheReaderTracksItsPosition) {
  std::string out;
  out.push_back('\x09');
  PutFixed32(out, 1);
  PutVarint(out, 300);
  out += "tail";
  ByteReader in(out);
  uint8_t b = 0;
  uint32_t f = 0;
  uint64_t v = 0;
  std::string_view tail;
  ASSERT_TRUE(in.Byte(&b) && in.Fixed32(&f) && in.Varint(&v));
  EXPECT_EQ(in.position(), 7u);
  EXPECT_EQ(in.remaining(), 4u);
  ASSERT_TRUE(in.Bytes(4, &tail));
  EXPECT_EQ(tail, "tail");
  EXPECT_TRUE(in.done());
  EXPECT_FALSE(in.Bytes(1, &tail));
}

}  // namespace
}  // namespace crescent
