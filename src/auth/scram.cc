#include "auth/scram.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <cstdlib>

namespace crescent::auth {

Key Hmac(std::string_view key, std::string_view data) {
  Key out{};
  unsigned int len = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.data(),
           &len) == nullptr ||
      len != out.size()) {
    std::abort();
  }
  return out;
}

Key Hmac(const Key& key, std::string_view data) { return Hmac(View(key), data); }

Key Sha256(std::string_view data) {
  Key out{};
  if (SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.data()) ==
      nullptr) {
    std::abort();
  }
  return out;
}

namespace {

Key SaltedKey(const Key& secret, const Key& salt) { return Hmac(secret, View(salt)); }

}  // namespace

Key ClientKeyOf(const Key& secret, const Key& salt) {
  return Hmac(SaltedKey(secret, salt), "Client Key");
}

Verifier MakeVerifier(const Key& secret, const Key& salt) {
  const Key salted = SaltedKey(secret, salt);
  Verifier v;
  v.salt = salt;
  v.stored_key = Sha256(View(Hmac(salted, "Client Key")));
  v.server_key = Hmac(salted, "Server Key");
  return v;
}

Key Xor(const Key& a, const Key& b) {
  Key out{};
  for (size_t i = 0; i < out.size(); ++i) out[i] = a[i] ^ b[i];
  return out;
}

bool Equal(const Key& a, const Key& b) { return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0; }

Key RandomKey() {
  Key out{};
  if (RAND_bytes(out.data(), static_cast<int>(out.size())) != 1) std::abort();
  return out;
}

}  // namespace crescent::auth
