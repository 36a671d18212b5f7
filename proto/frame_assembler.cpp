#include "frame_assembler.h"

#include <algorithm>
#include <cstring>

#include "payload_pipe.h"

namespace zipper::proto {

bool FrameAssembler::decode(std::span<const std::byte, kHeaderSize> h) {
  const DecodeError dec = decode_header(h, max_payload_, &hdr_);
  if (dec == DecodeError::kBadVersion) {
    // Its own kind: each end names both versions in its own words.
    error_ = {LinkErrorKind::kVersionMismatch, 0,
              "the peer at " + peer_ + " speaks zipper protocol version " +
                  std::to_string(hdr_.version) + ", this end speaks " + std::to_string(kVersion),
              hdr_.version};
    return false;
  }
  if (dec != DecodeError::kOk) {
    error_ = {LinkErrorKind::kMalformed, 0,
              "malformed frame from " + peer_ + ": " + std::string(to_string(dec))};
    return false;
  }
  state_ = State::kDest;
  hgot_ = 0;
  return true;
}

bool FrameAssembler::ask_dest(RecvSink& sink) {
  auto d = sink.payload_dest(hdr_);
  if (!d) return false;  // paused: asked again on the next feed()
  if (d->bytes.size() != hdr_.payload_len) {
    error_ = {LinkErrorKind::kInternal, 0,
              "internal: payload buffer of " + std::to_string(d->bytes.size()) +
                  " bytes for a frame of " + std::to_string(hdr_.payload_len) + " from " + peer_};
    return false;
  }
  dest_ = std::move(d);
  got_ = 0;
  state_ = State::kPayload;
  return true;
}

void FrameAssembler::deliver(RecvSink& sink) {
  state_ = State::kHeader;
  last_len_ = hdr_.payload_len;
  Payload p = std::move(*dest_);
  dest_.reset();
  sink.on_frame(hdr_, std::move(p));
}

FrameAssembler::Result FrameAssembler::feed(std::span<const std::byte> in, RecvSink& sink,
                                            std::size_t max_frames) {
  Result r;
  if (error_) {
    r.outcome = Outcome::kError;
    return r;
  }
  for (;;) {
    switch (state_) {
      case State::kHeader: {
        const std::size_t left = in.size() - r.consumed;
        if (left == 0) return r;
        if (hgot_ == 0 && left >= kHeaderSize) {
          // The common case: decode in place, no copy.
          if (!decode(in.subspan(r.consumed).first<kHeaderSize>())) {
            r.outcome = Outcome::kError;
            return r;
          }
          r.consumed += kHeaderSize;
          break;
        }
        const std::size_t take = std::min(kHeaderSize - hgot_, left);
        std::memcpy(hbuf_.data() + hgot_, in.data() + r.consumed, take);
        hgot_ += take;
        r.consumed += take;
        if (hgot_ < kHeaderSize) return r;
        if (!decode(hbuf_)) {
          r.outcome = Outcome::kError;
          return r;
        }
        break;
      }
      case State::kDest:
        if (!ask_dest(sink)) {
          r.outcome = error_ ? Outcome::kError : Outcome::kPaused;
          return r;
        }
        break;
      case State::kPayload: {
        const std::size_t n = std::min(in.size() - r.consumed, hdr_.payload_len - got_);
        if (n > 0 && dest_->pipe) {
          // Bytes a read brought along with the header go into the pipe
          // ahead of those spliced after them.
          if (!dest_->pipe->write_bytes(in.subspan(r.consumed, n))) {
            error_ = LinkError::from_errno("write(pipe)", errno);
            error_.kind = LinkErrorKind::kInternal;
            r.outcome = Outcome::kError;
            return r;
          }
        } else if (n > 0) {
          std::memcpy(dest_->bytes.data() + got_, in.data() + r.consumed, n);
        }
        got_ += n;
        r.consumed += n;
        if (got_ < hdr_.payload_len) return r;  // r.consumed == in.size() here
        deliver(sink);
        ++r.frames;
        if (max_frames != 0 && r.frames >= max_frames) {
          r.outcome = Outcome::kLimit;
          return r;
        }
        break;
      }
    }
  }
}

std::span<std::byte> FrameAssembler::direct_span() const {
  if (state_ != State::kPayload || dest_->pipe) return {};
  return dest_->bytes.subspan(got_);
}

PayloadPipe* FrameAssembler::direct_pipe() const {
  if (state_ != State::kPayload) return nullptr;
  return dest_->pipe.get();
}

bool FrameAssembler::unpipe() {
  if (state_ != State::kPayload || !dest_->pipe) return true;
  if (materialize(*dest_)) return true;
  error_ = LinkError::from_errno("read(pipe)", errno);
  error_.kind = LinkErrorKind::kInternal;
  return false;
}

std::size_t FrameAssembler::direct_remaining() const {
  return state_ == State::kPayload ? hdr_.payload_len - got_ : 0;
}

bool FrameAssembler::direct_received(std::size_t n, RecvSink& sink) {
  if (state_ != State::kPayload) return false;
  got_ += std::min(n, hdr_.payload_len - got_);
  if (got_ < hdr_.payload_len) return false;
  deliver(sink);
  return true;
}

}  // namespace zipper::proto
