#include "transfer/capability.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace crescent::transfer {
namespace {

void AppendLe(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::string Trim(std::string s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  size_t e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

}  // namespace

int64_t UnixNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

StatusOr<CapabilitySigner> CapabilitySigner::Create(std::string secret) {
  if (secret.size() < kMinSecretBytes) {
    return Status(ErrorCode::kInvalidArgument,
                  "cluster secret must be at least " + std::to_string(kMinSecretBytes) +
                      " bytes, got " + std::to_string(secret.size()));
  }
  return CapabilitySigner(std::move(secret));
}

// The MAC input is length-prefixed binding, then fixed-width little-endian fields,
// so no two distinct capabilities share an encoding.
std::array<uint8_t, 32> CapabilitySigner::Tag(std::string_view binding,
                                              const Capability& cap) const {
  std::string msg;
  msg.reserve(binding.size() + 40);
  AppendLe(msg, binding.size(), 4);
  msg.append(binding);
  AppendLe(msg, cap.segment, 4);
  AppendLe(msg, cap.offset, 8);
  AppendLe(msg, cap.length, 8);
  AppendLe(msg, static_cast<uint8_t>(cap.op), 1);
  AppendLe(msg, static_cast<uint64_t>(cap.expiry_unix_ms), 8);
  std::array<uint8_t, 32> tag{};
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret_.data(), static_cast<int>(secret_.size()),
       reinterpret_cast<const unsigned char*>(msg.data()), msg.size(), tag.data(), &len);
  return tag;
}

Capability CapabilitySigner::Sign(std::string_view binding, uint32_t segment, uint64_t offset,
                                  uint64_t length, AccessOp op, int64_t expiry_unix_ms) const {
  Capability cap;
  cap.segment = segment;
  cap.offset = offset;
  cap.length = length;
  cap.op = op;
  cap.expiry_unix_ms = expiry_unix_ms;
  cap.tag = Tag(binding, cap);
  return cap;
}

Status CapabilitySigner::Verify(std::string_view binding, const Capability& cap, AccessOp wanted,
                                int64_t now_unix_ms) const {
  std::array<uint8_t, 32> expect = Tag(binding, cap);
  if (CRYPTO_memcmp(expect.data(), cap.tag.data(), expect.size()) != 0) {
    return Status(ErrorCode::kCapabilityInvalid, "capability signature does not match");
  }
  if (cap.op != wanted) {
    return Status(ErrorCode::kCapabilityInvalid, "capability does not grant this operation");
  }
  if (cap.expiry_unix_ms <= now_unix_ms) {
    return Status(ErrorCode::kLeaseExpired,
                  "capability expired " + std::to_string(now_unix_ms - cap.expiry_unix_ms) +
                      " ms ago");
  }
  return Status::Ok();
}

StatusOr<std::string> LoadClusterSecret(const std::string& path) {
  std::string file = path;
  if (file.empty()) {
    if (const char* env = std::getenv("CRESCENT_SECRET_FILE"); env && *env) file = env;
  }
  std::string secret;
  if (!file.empty()) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return Status(ErrorCode::kIoError, "cannot read cluster secret file " + file);
    std::stringstream ss;
    ss << in.rdbuf();
    secret = Trim(ss.str());
  } else if (const char* env = std::getenv("CRESCENT_SECRET"); env && *env) {
    secret = Trim(env);
  } else {
    return Status(ErrorCode::kInvalidArgument,
                  "no cluster secret: pass --secret-file or set CRESCENT_SECRET_FILE or "
                  "CRESCENT_SECRET (store nodes and master must share it)");
  }
  if (secret.size() < CapabilitySigner::kMinSecretBytes) {
    return Status(ErrorCode::kInvalidArgument,
                  "cluster secret must be at least " +
                      std::to_string(CapabilitySigner::kMinSecretBytes) + " bytes");
  }
  return secret;
}

std::string RandomSecret() {
  unsigned char raw[32];
  if (RAND_bytes(raw, sizeof raw) != 1) std::abort();  // no entropy: nothing safe to do
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

}  // namespace crescent::transfer
