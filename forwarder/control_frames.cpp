// Frames zipperd sends to a client itself (control_frames.h).
#include "control_frames.h"

#include <cstring>

#include "job_registry.h"

namespace zipper::forwarder {

using proto::FrameType;
using proto::LinkStatus;
using proto::OutFrame;
using proto::Payload;

void send_control(const std::shared_ptr<Connection>& conn, OutFrame frame) {
  if (conn->closed && frame.hdr.type != FrameType::kError) return;
  conn->link->post(std::move(frame));
  if (conn->link->progress_send() == LinkStatus::kError) conn->link->shutdown();
}

void send_error(const std::shared_ptr<Connection>& conn, proto::ErrorCode code,
                std::uint32_t about_rank, std::uint64_t seq, const std::string& text,
                std::uint16_t version) {
  OutFrame f;
  f.hdr.version = version;
  f.hdr.type = FrameType::kError;
  f.hdr.flags = static_cast<std::uint8_t>(code);
  f.hdr.job_id = conn->job ? conn->job->id() : 0;
  f.hdr.src = about_rank;
  f.hdr.dst = conn->vrank;
  f.hdr.seq = seq;
  const std::string msg = text.substr(0, 1024);
  f.payload = Payload::allocate(msg.size());
  std::memcpy(f.payload.bytes.data(), msg.data(), msg.size());
  send_control(conn, std::move(f));
}

}  // namespace zipper::forwarder
