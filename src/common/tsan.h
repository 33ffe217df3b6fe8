// Happens-before edges that ThreadSanitizer cannot see by itself.
//
// A client that writes a range of a store node's segment over one connection
// and, after the write is acknowledged, reads it back over another is correctly
// ordered: the acknowledgement and the next request travel through the kernel.
// When two server threads serve those connections, TSan sees no
// synchronisation between the write into the segment and the later send from
// it (or between a send and a later overwrite), and reports a race. The data
// server acquires the segment before it touches segment bytes and releases it
// after. No-ops outside TSan builds.
#pragma once

#if defined(__SANITIZE_THREAD__)
#define CRESCENT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CRESCENT_TSAN 1
#endif
#endif

#ifdef CRESCENT_TSAN
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
extern "C" void __tsan_ignore_thread_begin();
extern "C" void __tsan_ignore_thread_end();
#endif

namespace crescent {

inline void TsanRelease([[maybe_unused]] const void* addr) {
#ifdef CRESCENT_TSAN
  __tsan_release(const_cast<void*>(addr));
#endif
}

inline void TsanAcquire([[maybe_unused]] const void* addr) {
#ifdef CRESCENT_TSAN
  __tsan_acquire(const_cast<void*>(addr));
#endif
}

// Between these, TSan ignores this thread's memory accesses: for reads whose
// value is discarded and that may overlap any write (the page warmer's).
inline void TsanIgnoreBegin() {
#ifdef CRESCENT_TSAN
  __tsan_ignore_thread_begin();
#endif
}

inline void TsanIgnoreEnd() {
#ifdef CRESCENT_TSAN
  __tsan_ignore_thread_end();
#endif
}

}  // namespace crescent
