#include "transfer/capability.h"

#include <fcntl.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <vector>

#include "common/coding.h"
#include "common/fd.h"

namespace crescent::transfer {
namespace {

std::string Trim(std::string s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  size_t e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

}  // namespace

struct CapabilitySigner::Key {
  std::string secret;
  uint64_t id = 0;  // unique in this process: names the key in the per-thread MAC states
};

namespace {

std::atomic<uint64_t> g_next_key_id{1};

// HMAC-SHA256 states keyed with a signer's secret, one per key per thread.
// A one-shot HMAC() looks the digest up and sets up a new state every call; a
// kept state is re-keyed in place for about half of that (capability_bench).
// The key is passed again on every restart: EVP_MAC_init without a key would
// be cheaper still, but OpenSSL before 3.0.3 does not reset an HMAC state that
// way (openssl#17811) and would return wrong tags. A master signs one
// capability per replica it returns and a store node checks one per transfer,
// so batches of small pages paid the setup per page. A few keys per thread,
// least recently used dropped first: a process has one signer (tests make more).
class ThreadMacs {
 public:
  ThreadMacs() = default;
  ThreadMacs(const ThreadMacs&) = delete;
  ThreadMacs& operator=(const ThreadMacs&) = delete;
  ~ThreadMacs() {
    for (const Entry& e : entries_) EVP_MAC_CTX_free(e.ctx);
    EVP_MAC_free(mac_);
  }

  // A state keyed with `key`, restarted; null when OpenSSL fails (no memory).
  EVP_MAC_CTX* Restarted(uint64_t id, const std::string& key) {
    const auto* k = reinterpret_cast<const unsigned char*>(key.data());
    for (size_t i = 0; i < entries_.size(); ++i) {
      if (entries_[i].id != id) continue;
      Entry e = entries_[i];
      entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
      entries_.push_back(e);  // most recently used last
      return EVP_MAC_init(e.ctx, k, key.size(), nullptr) == 1 ? e.ctx : nullptr;
    }
    if (mac_ == nullptr) mac_ = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
    if (mac_ == nullptr) return nullptr;
    EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(mac_);
    if (ctx == nullptr) return nullptr;
    char digest[] = "SHA256";
    const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                                 OSSL_PARAM_construct_end()};
    if (EVP_MAC_init(ctx, k, key.size(), params) != 1) {
      EVP_MAC_CTX_free(ctx);
      return nullptr;
    }
    if (entries_.size() == kMaxKeys) {
      EVP_MAC_CTX_free(entries_.front().ctx);
      entries_.erase(entries_.begin());
    }
    entries_.push_back({id, ctx});
    return ctx;
  }

 private:
  static constexpr size_t kMaxKeys = 8;
  struct Entry {
    uint64_t id;
    EVP_MAC_CTX* ctx;
  };
  EVP_MAC* mac_ = nullptr;
  std::vector<Entry> entries_;
};

thread_local ThreadMacs t_macs;

}  // namespace

StatusOr<CapabilitySigner> CapabilitySigner::Create(std::string secret) {
  if (secret.size() < kMinSecretBytes) {
    return Status(ErrorCode::kInvalidArgument, "cluster secret must be at least " +
                                                   std::to_string(kMinSecretBytes) +
                                                   " bytes, got " + std::to_string(secret.size()));
  }
  auto key = std::make_shared<Key>();
  key->secret = std::move(secret);
  key->id = g_next_key_id.fetch_add(1, std::memory_order_relaxed);
  return CapabilitySigner(std::move(key));
}

// The MAC input is length-prefixed binding, then fixed-width little-endian fields,
// so no two distinct capabilities share an encoding.
std::optional<std::array<uint8_t, 32>> CapabilitySigner::Tag(std::string_view binding,
                                                             const Capability& cap) const {
  if (!key_) return std::nullopt;  // a moved-from signer signs nothing
  unsigned char head[4];
  EncodeFixed32(head, static_cast<uint32_t>(binding.size()));
  unsigned char fields[29];
  EncodeFixed32(fields, cap.segment);
  EncodeFixed64(fields + 4, cap.offset);
  EncodeFixed64(fields + 12, cap.length);
  fields[20] = static_cast<uint8_t>(cap.op);
  EncodeFixed64(fields + 21, static_cast<uint64_t>(cap.expiry_unix_ms));
  EVP_MAC_CTX* ctx = t_macs.Restarted(key_->id, key_->secret);
  if (ctx == nullptr) return std::nullopt;
  auto feed = [ctx](std::string_view part) {
    return EVP_MAC_update(ctx, reinterpret_cast<const unsigned char*>(part.data()), part.size()) ==
           1;
  };
  std::array<uint8_t, 32> tag{};
  size_t len = 0;
  if (!feed({reinterpret_cast<const char*>(head), sizeof head}) || !feed(binding) ||
      !feed({reinterpret_cast<const char*>(fields), sizeof fields}) ||
      EVP_MAC_final(ctx, tag.data(), &len, tag.size()) != 1 || len != tag.size()) {
    return std::nullopt;
  }
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
  // Without a tag (OpenSSL out of memory) the capability keeps an all-zero
  // one, which no store node accepts: Verify computes the real tag, or refuses.
  if (std::optional<std::array<uint8_t, 32>> tag = Tag(binding, cap)) cap.tag = *tag;
  return cap;
}

Status CapabilitySigner::Verify(std::string_view binding, const Capability& cap, AccessOp wanted,
                                int64_t now_unix_ms) const {
  std::optional<std::array<uint8_t, 32>> expect = Tag(binding, cap);
  if (!expect) return Status(ErrorCode::kInternal, "cannot compute a capability tag (OpenSSL)");
  if (CRYPTO_memcmp(expect->data(), cap.tag.data(), expect->size()) != 0) {
    return Status(ErrorCode::kCapabilityInvalid, "capability signature does not match");
  }
  if (cap.op != wanted) {
    return Status(ErrorCode::kCapabilityInvalid, "capability does not grant this operation");
  }
  if (cap.expiry_unix_ms <= now_unix_ms) {
    // In unsigned arithmetic: the age can exceed INT64_MAX (an expiry far in
    // the past), and it fits uint64_t exactly since expiry <= now.
    uint64_t age = static_cast<uint64_t>(now_unix_ms) - static_cast<uint64_t>(cap.expiry_unix_ms);
    return Status(ErrorCode::kLeaseExpired,
                  "capability expired " + std::to_string(age) + " ms ago");
  }
  return Status::Ok();
}

namespace {

// How to make a good secret, for the messages below.
std::string SecretHowTo(const std::string& file) {
  return " (make one with: head -c 32 /dev/urandom | base64 > " + (file.empty() ? "FILE" : file) +
         ")";
}

// Reads the secret file `file`: a regular file (or a pipe, as from a shell's
// <(...)) of at most kMaxSecretFileBytes, so that a wrong path (a directory,
// /dev/zero) gets an error saying so rather than a misleading length or an
// endless read.
StatusOr<std::string> ReadSecretFile(const std::string& file) {
  auto io_error = [&file](int err) {
    return IoError("cannot read cluster secret file " + file, err);
  };
  const ScopedFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return io_error(errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return io_error(errno);
  if (S_ISDIR(st.st_mode)) {
    return Status(ErrorCode::kInvalidArgument,
                  "cluster secret file " + file + " is a directory, not a file" + SecretHowTo(""));
  }
  std::string text(kMaxSecretFileBytes + 1, '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::read(fd.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_error(errno);
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  if (done > kMaxSecretFileBytes) {
    return Status(ErrorCode::kInvalidArgument, "cluster secret file " + file + " is larger than " +
                                                   std::to_string(kMaxSecretFileBytes >> 10) +
                                                   " KiB: a secret is one short line" +
                                                   SecretHowTo(""));
  }
  text.resize(done);
  return text;
}

}  // namespace

StatusOr<std::string> LoadClusterSecret(const std::string& path) {
  std::string file = path;
  if (file.empty()) {
    if (const char* env = std::getenv("CRESCENT_SECRET_FILE"); env && *env) file = env;
  }
  std::string secret;
  if (!file.empty()) {
    StatusOr<std::string> text = ReadSecretFile(file);
    if (!text.ok()) return text.status();
    secret = Trim(*text);
  } else if (const char* env = std::getenv("CRESCENT_SECRET"); env && *env) {
    secret = Trim(env);
  } else {
    return Status(ErrorCode::kInvalidArgument,
                  "no cluster secret: pass --secret-file or set CRESCENT_SECRET_FILE or "
                  "CRESCENT_SECRET (store nodes and master must share it)");
  }
  if (secret.size() < CapabilitySigner::kMinSecretBytes) {
    const std::string where = file.empty() ? "$CRESCENT_SECRET" : "cluster secret file " + file;
    return Status(ErrorCode::kInvalidArgument,
                  where + " holds " + std::to_string(secret.size()) +
                      " bytes (without surrounding whitespace); a cluster secret needs at least " +
                      std::to_string(CapabilitySigner::kMinSecretBytes) + " bytes" +
                      SecretHowTo(file));
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
