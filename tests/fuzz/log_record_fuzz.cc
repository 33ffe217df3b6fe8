// Fuzzes the operation log's record decoder (master/log_record.h).
//
// Invariants:
//  - Decoding never reads past its input or crashes, whatever the bytes.
//  - An accepted record encodes and decodes back to an equal record.
#include "fuzz_support.h"
#include "master/log_record.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using crescent::master::DecodeLogRecord;
  using crescent::master::EncodeLogRecord;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto r = DecodeLogRecord(bytes);
  if (!r.ok()) {
    FUZZ_CHECK(r.status().code() == crescent::ErrorCode::kCorruptData);
    return 0;
  }
  auto again = DecodeLogRecord(EncodeLogRecord(*r));
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(*again == *r);
  return 0;
}
