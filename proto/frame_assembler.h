// One frame assembler for every link: turns received bytes into frames.
//
//   header bytes -> decode_header -> sink.payload_dest -> payload bytes -> sink.on_frame
//
// The transport hands it bytes as they arrive (a TCP read, the data of a
// verbs SEND) with feed(), or writes payload bytes straight into the
// destination itself (a readv into direct_span(), an RDMA WRITE) and reports
// them with direct_received(). Headers are decoded in place when the input
// holds all 64 bytes and gathered here only when a header straddles two
// inputs, so no byte is copied more than once: payload bytes from the input
// go straight into the sink's destination.
//
// Pause: when the sink returns nullopt for a destination, feed() stops
// after the header (counted as consumed) and asks again on the next call,
// also when called with no input.
//
// Errors are typed (link_error.h): kMalformed for a header that fails
// decoding, kInternal for a destination of the wrong size. After an error
// the assembler refuses further input.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "frame.h"
#include "link.h"
#include "link_error.h"

namespace zipper::proto {

class FrameAssembler {
 public:
  /// `peer` names the remote end in error messages.
  explicit FrameAssembler(std::string peer) : peer_(std::move(peer)) {}

  /// Largest payload accepted (bytes); larger headers are malformed (kOversize).
  void set_max_payload(std::uint32_t bytes) { max_payload_ = bytes; }

  enum class Outcome : std::uint8_t {
    kNeedMore,  // every input byte consumed; waiting for more
    kPaused,    // the sink refused a destination; call again (input from `consumed` on)
    kLimit,     // `max_frames` frames delivered; input from `consumed` on (maybe none) is left
    kError,     // see error()
  };
  struct Result {
    Outcome outcome = Outcome::kNeedMore;
    std::size_t consumed = 0;  // input bytes used (headers included)
    std::size_t frames = 0;    // frames delivered to the sink
  };

  /// Consumes `in` and delivers every frame it completes, at most `max_frames`
  /// (0 = no limit). With empty `in`, retries a paused destination request.
  Result feed(std::span<const std::byte> in, RecvSink& sink, std::size_t max_frames = 0);

  /// Where the rest of the current payload goes (empty unless a destination
  /// is held and bytes are missing): a transport may write there directly.
  std::span<std::byte> direct_span() const;
  /// The pipe the rest of the current payload goes into (Payload::pipe), or
  /// nullptr: a transport splices up to direct_remaining() bytes into it and
  /// reports them with direct_received(). direct_span() is empty then.
  PayloadPipe* direct_pipe() const;
  /// Moves the current payload's bytes out of its pipe into Payload::bytes,
  /// so the rest arrives by copy (the pipe is full). Returns false (error()
  /// set, kInternal) when the pipe cannot be read.
  bool unpipe();
  /// Payload bytes of the current frame still missing (0 outside a payload).
  std::size_t direct_remaining() const;
  /// `n` bytes (at most direct_remaining()) were written to direct_span() or direct_pipe();
  /// delivers the frame when it is complete. Returns true when it delivered.
  bool direct_received(std::size_t n, RecvSink& sink);

  /// No frame in progress (not even part of a header).
  bool at_boundary() const { return state_ == State::kHeader && hgot_ == 0; }
  /// Bytes of a header gathered so far (0..63, state header).
  std::size_t header_bytes() const { return state_ == State::kHeader ? hgot_ : 0; }
  /// A header was decoded and its frame is not complete yet.
  bool in_frame() const { return state_ != State::kHeader; }
  /// The header is decoded and the sink has not given a destination yet.
  bool awaiting_dest() const { return state_ == State::kDest; }
  /// Header of the frame in progress (valid while in_frame()).
  const FrameHeader& header() const { return hdr_; }
  /// payload_len of the last frame delivered (0 before any).
  std::uint32_t last_payload_len() const { return last_len_; }

  const LinkError& error() const { return error_; }

 private:
  enum class State : std::uint8_t { kHeader, kDest, kPayload };
  bool decode(std::span<const std::byte, kHeaderSize> h);
  bool ask_dest(RecvSink& sink);  // false: paused or error
  void deliver(RecvSink& sink);

  std::string peer_;
  std::uint32_t max_payload_ = kMaxPayloadLimit;
  State state_ = State::kHeader;
  std::array<std::byte, kHeaderSize> hbuf_{};  // a header that straddles two inputs
  std::size_t hgot_ = 0;
  FrameHeader hdr_;
  std::optional<Payload> dest_;
  std::size_t got_ = 0;  // payload bytes in dest_
  std::uint32_t last_len_ = 0;
  LinkError error_;
};

}  // namespace zipper::proto
