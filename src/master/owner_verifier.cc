#include "master/owner_verifier.h"

#include <string>

#include "auth/scram.h"
#include "common/coding.h"

namespace crescent::master {

uint64_t OwnerVerifier(std::string_view segment_name, uint64_t token) {
  if (token == 0) return 0;
  // The label, then the name with its length, then the token: no two
  // (name, token) pairs share an input.
  std::string in = "crescent owner-token verifier 1";
  PutLengthPrefixed(in, segment_name);
  PutFixed64(in, token);
  const auth::Key digest = auth::Sha256(in);
  const uint64_t v = DecodeFixed64(digest.data());
  return v == 0 ? 1 : v;
}

PreviousMount WithVerifiers(std::string_view segment_name, PreviousMount previous) {
  previous.owner_token = OwnerVerifier(segment_name, previous.owner_token);
  for (MountIdentity& m : previous.earlier) {
    m.owner_token = OwnerVerifier(segment_name, m.owner_token);
  }
  return previous;
}

}  // namespace crescent::master
