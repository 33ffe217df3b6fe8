// LocationCache: where this client's recently read objects live (their
// replicas, each with a read capability, the value's size and checksum), so
// that a get of a key it holds goes straight to a store node, without asking
// the master (ClientConfig::location_cache; docs/network.md, "Location cache").
//
// Invariants:
//  - An entry is a whole RemoteRead the master granted for that key; it is
//    only ever used as a whole, and only until its earliest capability
//    expires (less a margin that leaves the transfer time to finish).
//  - What an entry says may be stale: the key removed, put again, its space
//    given to another object. Only the remembered checksum, checked by the
//    reader as the bytes land, makes a hit safe; the caller drops the entry at
//    the first read that does not match or fails (Forget) and asks the master.
//  - At most `capacity` entries; the least recently used one goes first.
//
// Concurrency: every call takes one mutex; a lookup copies the entry out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "rpc/master_client.h"

namespace crescent::client {

class LocationCache {
 public:
  explicit LocationCache(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

  enum class Found { kHit, kAbsent, kExpired };
  // `key`'s read when every capability of it is valid past `until_unix_ms`
  // (kHit, *read set). An entry that is not is dropped (kExpired).
  Found Lookup(const std::string& key, int64_t until_unix_ms, rpc::RemoteRead* read);
  // Keeps `read` as `key`'s entry, replacing any, as the most recently used.
  void Remember(const std::string& key, const rpc::RemoteRead& read);
  void Forget(const std::string& key);
  void Clear();

 private:
  struct Entry {
    std::string key;
    rpc::RemoteRead read;
    int64_t expiry_unix_ms;  // the earliest of its capabilities'
  };
  mutable std::mutex mu_;
  const size_t capacity_;
  std::list<Entry> lru_;  // most recently used first
  std::unordered_map<std::string_view, std::list<Entry>::iterator> index_;  // keys live in lru_
};

}  // namespace crescent::client
