// The key schedule of Crescent's challenge-and-response authentication, after
// SCRAM (RFC 5802, with SHA-256 as in RFC 7677). From a token's 256-bit secret
// and a random salt:
//   SaltedKey = HMAC(secret, salt)
//   ClientKey = HMAC(SaltedKey, "Client Key")    known only to the token holder
//   StoredKey = SHA-256(ClientKey)               kept by the server
//   ServerKey = HMAC(SaltedKey, "Server Key")    kept by the server
// The server keeps (salt, StoredKey, ServerKey): the verifier. Neither the
// secret nor ClientKey can be computed from it (SHA-256 and HMAC are one-way),
// and a client proves knowledge of ClientKey, which StoredKey is not.
//
// No key stretching (RFC 5802's iteration count): a token is 256 random bits,
// not a password, so there is nothing for a dictionary to guess.
//
// Every function here is pure; OpenSSL failing (out of memory) aborts, as no
// key can then be computed and returning an all-zero key would be worse.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace crescent::auth {

inline constexpr size_t kKeyBytes = 32;  // SHA-256 output; also token secrets, salts and nonces
using Key = std::array<uint8_t, kKeyBytes>;

struct Verifier {
  Key salt{};
  Key stored_key{};
  Key server_key{};
};

// HMAC-SHA256(key, data).
Key Hmac(std::string_view key, std::string_view data);
Key Hmac(const Key& key, std::string_view data);
Key Sha256(std::string_view data);

inline std::string_view View(const Key& k) {
  return {reinterpret_cast<const char*>(k.data()), k.size()};
}

Key ClientKeyOf(const Key& secret, const Key& salt);
// The verifier of `secret` under `salt`.
Verifier MakeVerifier(const Key& secret, const Key& salt);

// a XOR b (the proof is ClientKey XOR ClientSignature).
Key Xor(const Key& a, const Key& b);
// Constant-time equality.
bool Equal(const Key& a, const Key& b);

// kKeyBytes fresh random bytes (OpenSSL's RAND_bytes); aborts without entropy.
Key RandomKey();

}  // namespace crescent::auth
