// Bytes as hex text and back, for tests that hold a format's golden bytes:
// the bytes a known record encoded to before a change, which the encoder must
// still produce and the decoder must still read (old data dirs, old peers).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace crescent {

inline std::string HexForTest(const void* data, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const auto* p = static_cast<const uint8_t*>(data);
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out.push_back(kDigits[p[i] >> 4]);
    out.push_back(kDigits[p[i] & 15]);
  }
  return out;
}

inline std::string HexForTest(std::string_view bytes) {
  return HexForTest(bytes.data(), bytes.size());
}

// The bytes `hex` spells (an even number of lower-case digits).
inline std::string UnhexForTest(std::string_view hex) {
  auto digit = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(digit(hex[i]) << 4 | digit(hex[i + 1])));
  }
  return out;
}

}  // namespace crescent
