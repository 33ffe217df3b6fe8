#include "common/value_hash.h"

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t's definition
#include <xxhash.h>
#if defined(CRESCENT_XXH_DISPATCH)
// XXH3_64bits and XXH3_64bits_update become their _dispatch forms, which pick
// the widest vector code the CPU runs (CMakeLists.txt). Same results.
#include <xxh_x86dispatch.h>
#endif

namespace crescent {
namespace {

static_assert(sizeof(XXH3_state_t) <= 576 && alignof(XXH3_state_t) <= 64,
              "ValueHasher::state_ cannot hold this xxhash's XXH3_state_t");

}  // namespace

void ValueHasher::Reset() { XXH3_64bits_reset(reinterpret_cast<XXH3_state_t*>(state_)); }

void ValueHasher::Update(const void* data, size_t size) {
  XXH3_64bits_update(reinterpret_cast<XXH3_state_t*>(state_), data, size);
}

uint64_t ValueHasher::Digest() const {
  return XXH3_64bits_digest(reinterpret_cast<const XXH3_state_t*>(state_));
}

uint64_t HashValue(const void* data, size_t size) { return XXH3_64bits(data, size); }

}  // namespace crescent
