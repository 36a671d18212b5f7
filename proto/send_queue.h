// One send queue for every link: frames in posting order, except that urgent
// control frames (OutFrame::urgent, e.g. returned credit) overtake the frames
// not yet started, in order among themselves. A started frame (any byte
// handed to the transport) is never interleaved with another, and data frames
// keep their order (per-pair message order).
//
// Not thread-safe: the link guards it with its send lock.
#pragma once

#include <array>
#include <cstddef>
#include <deque>
#include <iterator>

#include "frame.h"
#include "link.h"

namespace zipper::proto {

/// One queued frame and how far its bytes (64-byte header + payload) got.
struct QueuedFrame {
  OutFrame frame;
  std::array<std::byte, kHeaderSize> wire{};  // the encoded header
  bool encoded = false;                       // the header hook ran and wire holds the header
  std::size_t handed = 0;  // bytes handed to the transport (written / in posted WRs)

  std::size_t total() const { return kHeaderSize + frame.payload.bytes.size(); }
  bool started() const { return handed > 0; }
  /// Every byte handed over (or dropped by the header hook).
  bool all_handed() const { return encoded && handed == total(); }
};

/// `Entry` is QueuedFrame or a type derived from it that adds transport
/// state (e.g. the verbs link's registrations).
template <class Entry = QueuedFrame>
class SendQueue {
 public:
  using iterator = typename std::deque<Entry>::iterator;
  using const_iterator = typename std::deque<Entry>::const_iterator;

  /// Queues `f` (payload_len set from the payload) by the urgent rule.
  void push(OutFrame f) {
    f.hdr.payload_len = static_cast<std::uint32_t>(f.payload.bytes.size());
    Entry e;
    const bool urgent = f.urgent;
    e.frame = std::move(f);
    queued_bytes_ += e.total();
    if (!urgent) {
      q_.push_back(std::move(e));
      return;
    }
    // Behind started frames and earlier urgent frames only: a credit return
    // queued behind megabytes of data would stall the opposite direction for
    // as long as that data takes to drain.
    auto at = q_.end();
    while (at != q_.begin()) {
      const Entry& prev = *std::prev(at);
      if (prev.started() || prev.frame.urgent) break;
      --at;
    }
    q_.insert(at, std::move(e));
  }

  /// Runs the header hook on `e` once and encodes its header. Returns false
  /// when `e` has nothing (left) to hand over: already fully handed, or
  /// dropped by the hook, in which case it counts as handed.
  bool encode(Entry& e, const HeaderHook& hook) {
    if (e.encoded) return e.handed < e.total();
    e.encoded = true;
    if (hook && !hook(e.frame.hdr)) {
      handed(e, e.total());
      return false;
    }
    encode_header(e.frame.hdr, e.wire);
    return true;
  }

  /// `n` more bytes of `e` went to the transport.
  void handed(Entry& e, std::size_t n) {
    e.handed += n;
    queued_bytes_ -= n;
  }

  bool empty() const { return q_.empty(); }
  std::size_t size() const { return q_.size(); }
  /// Bytes queued and not yet handed to the transport.
  std::size_t queued_bytes() const { return queued_bytes_; }
  Entry& front() { return q_.front(); }
  void pop_front() { q_.pop_front(); }
  iterator begin() { return q_.begin(); }
  iterator end() { return q_.end(); }
  const_iterator begin() const { return q_.begin(); }
  const_iterator end() const { return q_.end(); }
  /// True when every queued frame is fully handed over (e.g. before a FIN).
  bool all_handed() const {
    for (const Entry& e : q_)
      if (!e.all_handed()) return false;
    return true;
  }
  /// Drops everything (teardown); queued_bytes() becomes 0.
  void clear() {
    q_.clear();
    queued_bytes_ = 0;
  }

 private:
  std::deque<Entry> q_;
  std::size_t queued_bytes_ = 0;
};

}  // namespace zipper::proto
