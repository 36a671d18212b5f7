// One client connection as zipperd sees it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "../proto/auth.h"
#include "../proto/link.h"
#include "control_budget.h"
#include "frame_credits.h"
#include "park_reason.h"
#include "ping_share.h"
#include "traffic_counters.h"

namespace zipper::forwarder {

class Job;

struct Connection {
  Connection(std::uint64_t id_, int side_, std::unique_ptr<proto::Link> link_,
             std::uint64_t credits)
      : id(id_), side(side_), link(std::move(link_)), credit(credits) {}

  const std::uint64_t id;
  const int side;  // index of the listener it arrived on
  const std::unique_ptr<proto::Link> link;
  FrameCredits credit;  // frames
  const std::chrono::steady_clock::time_point accepted = std::chrono::steady_clock::now();

  // Set once, by JobRegistry::join under the job's lock, before the
  // connection is published in the job's rank table.
  std::shared_ptr<Job> job;
  std::uint32_t vrank = 0;
  bool said_bye = false;

  // Admission state (receive thread only): the HELLO, then the CHALLENGE
  // zipperd sent; the AUTH frame must answer exactly this challenge.
  bool hello_seen = false;
  proto::ConnectHello hello;
  proto::auth::ChallengePayload challenge;
  // A frame whose payload is still arriving, since when (receive thread only).
  bool mid_frame = false;
  std::chrono::steady_clock::time_point frame_started;

  // Set (release) once job and vrank are final; threads that find the
  // connection other than through its job's slot table read those only
  // after seeing this (acquire).
  std::atomic<bool> admitted{false};
  std::atomic<bool> closed{false};
  std::atomic<bool> doomed{false};  // about to be closed (timeout sweep): tell it nothing
  std::atomic<bool> credit_frame_queued{false};
  // A PING answer is queued to this client: a client has one PING out at a
  // time (client/rails.h), so a PING meanwhile is dropped, never queued
  // without bound for a client that does not read.
  std::atomic<bool> pong_queued{false};
  // Frames without payload handled per receive round (receive thread only);
  // over_budget: waiting in its side's backlog for the next round.
  ControlBudget budget{32};
  bool over_budget = false;
  // Its share of PING answers (ping_share.h); over it, the connection is not
  // read until ping_resume, waiting in its side's timed backlog when
  // ping_waiting (receive thread only).
  PingShare ping_share{0, 1};
  std::chrono::steady_clock::time_point ping_resume{};
  bool ping_waiting = false;
  // Why its receive is paused (FlowControl::park; receive thread only).
  ParkReason park = ParkReason::kNone;
  // In its side's parked list (Side::parked), in its frame deadline heap
  // (Side::frame_due); receive thread only.
  bool in_parked = false;
  bool frame_due_queued = false;
  // A PING whose answer waits for its tenant's next token (--tenant-ping-rate):
  // answered, with this sequence number, when the connection is read again
  // at ping_resume (receive thread only).
  bool pong_deferred = false;
  std::uint64_t deferred_ping_seq = 0;
  // Bytes of the frame it waits for when parked by its job's fair share
  // (0: parked by the global budget); receive thread only.
  std::uint64_t share_wait = 0;
  // Job::releases when it parked at its job's share or behind a full
  // destination: it retries once that moved (receive thread only).
  std::uint64_t park_epoch = 0;
  // Frames inside zipperd on their way to this client, counted from their
  // header on: at most its credit's worth (--conn-credits) before the senders
  // pause, so a client that does not read cannot fill the pools.
  std::atomic<std::uint32_t> inbound{0};
  // The destination of the last frame received (router.h; receive thread
  // only; weak: two connections must not keep each other alive).
  std::weak_ptr<Connection> last_dest;
  std::uint32_t last_dest_rank = ~0u;
  bool credit_exhausted = false;  // last frame left no room for a largest frame (receive thread)

  // Counters for zipperctl and /metrics (relaxed; see traffic_counters.h).
  TrafficCounters received;  // relayed frames from this client
  TrafficCounters sent;      // relayed frames to this client
  std::atomic<std::uint64_t> credit_stalls{0}, memory_stalls{0}, errors{0};

  std::string name() const {
    return job ? "rank " + std::to_string(vrank) + " (" + link->peer() + ")" : link->peer();
  }
};

}  // namespace zipper::forwarder
