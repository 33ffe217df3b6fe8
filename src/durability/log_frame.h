// The frame of one operation-log record, the same in every log (the files of
// file_log.h, the batches of etcd_log.h):
//   u32 length | u32 check | payload
// little-endian; check = the low 32 bits of XXH3-64 of the payload, seeded with
// its length (so a length that changed fails the check too).
#pragma once

#include <xxhash.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "common/coding.h"

namespace crescent::durability {

inline constexpr uint64_t kFrameBytes = 8;
inline constexpr uint32_t kMaxRecordBytes = 16u << 20;

inline uint32_t FrameCheck(std::string_view payload) {
  return static_cast<uint32_t>(
      XXH3_64bits_withSeed(payload.data(), payload.size(), payload.size()));
}

// Appends `record`'s frame to `out`.
inline void AppendFrame(std::string& out, std::string_view record) {
  PutFixed32(out, static_cast<uint32_t>(record.size()));
  PutFixed32(out, FrameCheck(record));
  out.append(record);
}

// Walks the frames of `data` from offset `at`: fn(offset, payload) per good
// frame; returns the offset where good frames end (data.size() when all are).
template <typename Fn>
uint64_t ScanFrames(std::string_view data, uint64_t at, Fn&& fn) {
  while (data.size() - at >= kFrameBytes) {
    const uint64_t len = DecodeFixed32(data.data() + at);
    const uint32_t check = DecodeFixed32(data.data() + at + 4);
    if (len > kMaxRecordBytes || data.size() - at - kFrameBytes < len) break;
    const std::string_view payload = data.substr(at + kFrameBytes, len);
    if (FrameCheck(payload) != check) break;
    fn(at, payload);
    at += kFrameBytes + len;
  }
  return at;
}

}  // namespace crescent::durability
