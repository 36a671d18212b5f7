#include "virtual_rank.h"

#include <algorithm>

#include "payload_check.h"
#include "virtual_job.h"

namespace zipper::loadgen {

using proto::FrameHeader;
using proto::FrameType;
using proto::Payload;

VirtualRank::VirtualRank(VirtualJob& job, std::uint32_t vrank, std::uint64_t id, GroupStats& stats,
                         RunErrors& errors)
    : job_(job),
      vrank_(vrank),
      id_(id),
      stats_(stats),
      errors_(errors),
      high_(!job.table().low(vrank)),
      send_rail_(static_cast<int>((high_ ? vrank - job.table().x() : vrank) %
                                  job.addresses(false).size())) {
  const auto& addrs = job.addresses(high_);
  client::ClientConfig cfg = job.config();
  cfg.site = high_ ? 1 : 0;
  for (std::size_t i = 0; i < addrs.size(); ++i)
    rails_.push_back(std::make_unique<client::Channel>(cfg, static_cast<int>(vrank), addrs[i],
                                                       static_cast<int>(i)));
  connect_ns_.assign(addrs.size(), 0);
  recv_buf_.resize(addrs.size());
  const PairTable& t = job.table();
  dests_ = t.dest_count(vrank);
  send_total_ = job.spec().messages * dests_;
  expect_.assign(t.src_count(vrank), 1);
  recv_total_ = job.spec().messages * expect_.size();
  if (job.spec().rate > 0) interval_ns_ = static_cast<std::uint64_t>(1e9 / job.spec().rate);
}

VirtualRank::~VirtualRank() = default;

void VirtualRank::fail(const std::string& what) {
  errors_.add(job_.name() + " rank " + std::to_string(vrank_) + ": " + what);
}

bool VirtualRank::begin_connect(int rail, int timeout_ms) {
  stats_.rail_connections[rail][high_] += 1;
  connect_ns_[rail] = now_ns();
  if (!rails_[rail]->begin_connect(timeout_ms)) {
    fail("cannot connect to zipperd at " + rails_[rail]->address() + ": " + rails_[rail]->error());
    return false;
  }
  rails_[rail]->flush();  // the HELLO
  return true;
}

void VirtualRank::progress(int rail) {
  client::Channel& ch = *rails_[rail];
  current_rail_ = rail;
  ch.progress(*this);
  if (connect_ns_[rail] && ch.admitted()) {
    stats_.rank_admission.add(now_ns() - connect_ns_[rail]);
    connect_ns_[rail] = 0;
    ++newly_admitted_;
  }
}

int VirtualRank::take_newly_admitted() { return std::exchange(newly_admitted_, 0); }

bool VirtualRank::ready() const {
  return std::all_of(rails_.begin(), rails_.end(), [](const auto& c) { return c->ready(); });
}

void VirtualRank::start_traffic(std::uint64_t now) {
  traffic_ = true;
  const bool pingpong = job_.spec().pattern == Pattern::kPingPong;
  // Pingpong: the low rank of a pair opens, the high one answers.
  allowance_ = !pingpong ? send_total_ : (high_ || dests_ == 0 ? 0 : 1);
  // Spread the first sends over one interval: ranks on one rate in step
  // would send in bursts.
  if (interval_ns_) next_send_ns_ = now + (id_ * 0x9e3779b97f4a7c15ull) % interval_ns_;
}

std::uint64_t VirtualRank::pump(std::uint64_t now) {
  if (!traffic_ || closing_ || sent_ == send_total_) return 0;
  client::Channel& ch = *rails_[send_rail_];
  if (!ch.ready()) return 0;
  // No backlog of missed sends after a stall: the rate stays a rate.
  if (interval_ns_ && next_send_ns_ + interval_ns_ < now) next_send_ns_ = now - interval_ns_;
  bool any = false;
  while (sent_ < send_total_ && allowance_ > 0 && ch.free_credit() > 0) {
    if (interval_ns_) {
      if (now < next_send_ns_) break;
      next_send_ns_ += interval_ns_;
    }
    send_one(now);
    any = true;
  }
  if (any) ch.flush();
  const bool blocked = ch.free_credit() <= 0 || allowance_ == 0;
  return interval_ns_ && sent_ < send_total_ && !blocked ? next_send_ns_ : 0;
}

void VirtualRank::send_one(std::uint64_t now) {
  const std::uint32_t dst = job_.table().dest(vrank_, static_cast<std::uint32_t>(sent_ % dests_));
  const std::uint64_t seq = sent_ / dests_ + 1;
  const std::uint32_t size = job_.spec().size;
  proto::OutFrame f;
  f.hdr.type = FrameType::kEager;
  f.hdr.dst = dst;
  f.hdr.seq = seq;
  f.hdr.msg_len = size;
  f.payload = Payload::allocate(size);
  fill_payload(job_.plan().id, vrank_, dst, seq, f.payload.bytes);
  stamp_send_time(f.hdr, now_ns());
  rails_[send_rail_]->send(std::move(f));
  ++sent_;
  --allowance_;
  ++stats_.sent;
  stats_.bytes_sent += size;
  stats_.rail_frames[send_rail_][high_] += 1;
  stats_.rail_bytes[send_rail_][high_] += size;
  if (stats_.first_send_ns == 0) stats_.first_send_ns = now;
}

std::optional<Payload> VirtualRank::payload_dest(const FrameHeader& h) {
  // Exactly the bytes the frame says; a wrong size is reported once it is in.
  auto& buf = recv_buf_[current_rail_];
  if (h.payload_len != job_.spec().size) return Payload::allocate(h.payload_len);
  if (buf.size() != h.payload_len) buf.resize(h.payload_len);
  return Payload::borrow(buf.data(), buf.size());
}

void VirtualRank::on_data_frame(const FrameHeader& h, Payload payload) {
  const std::uint64_t now = now_ns();
  // Built only for a fault: this runs once per message.
  const auto what = [&] {
    return "frame " + std::string(proto::to_string(h.type)) + " from rank " +
           std::to_string(h.src) + " seq " + std::to_string(h.seq);
  };
  if (h.type != FrameType::kEager) return fail(what() + ": only EAGER frames were sent");
  if (h.job_id != job_.plan().id || h.dst != vrank_)
    return fail(what() + ": addressed to job " + std::to_string(h.job_id) + " rank " +
                std::to_string(h.dst));
  const auto src = job_.table().src_index(vrank_, h.src);
  if (!src)
    return fail(what() + ": that rank sends nothing to this one in pattern " +
                std::string(to_string(job_.spec().pattern)));
  std::uint64_t& want = expect_[*src];
  if (h.seq != want)
    return fail(what() + ": out of sequence, expected seq " + std::to_string(want) +
                (h.seq < want ? " (a duplicate)" : " (messages lost or reordered)"));
  if (payload.bytes.size() != job_.spec().size || h.msg_len != job_.spec().size)
    return fail(what() + ": " + std::to_string(payload.bytes.size()) + " payload bytes, msg_len " +
                std::to_string(h.msg_len) + ", sent " + std::to_string(job_.spec().size));
  const std::size_t bad = check_payload(job_.plan().id, h.src, vrank_, h.seq, payload.bytes);
  if (bad != payload.bytes.size())
    return fail(what() + ": payload byte " + std::to_string(bad) + " of " +
                std::to_string(payload.bytes.size()) + " differs from what was sent");
  ++want;
  ++received_;
  ++stats_.received;
  stats_.bytes_received += payload.bytes.size();
  stats_.last_recv_ns = std::max(stats_.last_recv_ns, now);
  const std::uint64_t sent_at = send_time(h);
  stats_.latency.add(now > sent_at ? now - sent_at : 0);
  // Pingpong: an answer lets the opener send the next; a message makes the
  // other answer.
  if (job_.spec().pattern == Pattern::kPingPong && sent_ + allowance_ < send_total_) ++allowance_;
}

bool VirtualRank::on_peer_gone(int vrank, const std::string& why) {
  if (!closing_)
    fail("zipperd at " + rails_[current_rail_]->address() + " says rank " + std::to_string(vrank) +
         " is gone: " + why);
  return true;
}

void VirtualRank::on_link_failed() {
  if (!closing_)
    fail("link to zipperd at " + rails_[current_rail_]->address() +
         " failed: " + rails_[current_rail_]->error());
}

void VirtualRank::on_draining() {
  fail("zipperd at " + rails_[current_rail_]->address() + " is draining");
}

void VirtualRank::on_abort(int from, int code) {
  fail("zipperd relayed an ABORT of rank " + std::to_string(from) + " (code " +
       std::to_string(code) + "), which nobody sent");
}

void VirtualRank::begin_close() {
  closing_ = true;
  for (auto& c : rails_) c->begin_close();
}

bool VirtualRank::closed() const {
  return std::all_of(rails_.begin(), rails_.end(), [](const auto& c) { return c->closed(); });
}

std::string VirtualRank::waiting_for() const {
  std::string out = "rank " + std::to_string(vrank_) + ":";
  for (std::size_t i = 0; i < rails_.size(); ++i) {
    const auto& c = *rails_[i];
    out += " zipperd " + c.address() + " " +
           (!c.up()         ? (c.error().empty() ? "not connected" : "failed: " + c.error())
            : !c.admitted() ? "not admitted"
            : !c.ready()    ? "admitted, no JOB_READY"
                            : "ready") +
           ";";
  }
  out += " sent " + std::to_string(sent_) + "/" + std::to_string(send_total_) + ", received " +
         std::to_string(received_) + "/" + std::to_string(recv_total_);
  for (std::size_t s = 0; s < expect_.size() && received_ < recv_total_; ++s)
    if (expect_[s] <= job_.spec().messages) {
      out +=
          " (next: seq " + std::to_string(expect_[s]) + " from source #" + std::to_string(s) + ")";
      break;
    }
  if (closing_) out += closed() ? ", closed" : ", closing";
  return out;
}

}  // namespace zipper::loadgen
