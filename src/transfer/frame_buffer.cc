#include "transfer/frame_buffer.h"

#include <algorithm>
#include <cstring>

namespace crescent::transfer {

std::span<char> FrameBuffer::Room() {
  const size_t pending = end_ - begin_;
  if (pending == 0 && size_ > 4 * kStep) {  // a large frame is gone: give its room back
    data_.reset(new char[kStep]);
    size_ = kStep;
  }
  if (size_ - end_ < kStep / 2) {
    if (begin_ > 0 && size_ - pending >= kStep / 2) {
      std::memmove(data_.get(), data_.get() + begin_, pending);
    } else {
      const size_t grown = std::max(2 * size_, pending + kStep);
      std::unique_ptr<char[]> more(new char[grown]);  // not zeroed: only what is read is touched
      std::memcpy(more.get(), data_.get() + begin_, pending);
      data_ = std::move(more);
      size_ = grown;
    }
    begin_ = 0;
    end_ = pending;
  } else if (pending == 0) {
    begin_ = end_ = 0;
  }
  return {data_.get() + end_, size_ - end_};
}

}  // namespace crescent::transfer
