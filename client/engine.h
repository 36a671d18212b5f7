// libmmpi's point-to-point engine: one matching engine over both clusters,
// so that MPI_ANY_SOURCE, MPI_ANY_TAG and non-overtaking hold across them.
// Messages to a rank in this cluster go to Open MPI on the communicator's
// native communicator (the native bridge); messages to the other cluster go
// through zipperd (rails.h: one channel per bridge node), addressed by world
// rank and carrying the communicator's context (communicator.h).
//
// Files: engine.cpp (sending, receiving, matching, progress), engine_frames.cpp
// (frames from zipperd, the rendezvous), engine_probe.cpp (probe, mprobe,
// cancel), reliability.cpp (acknowledgements and resending over several rails).
//
// Protocols through zipperd:
//   eager (<= eager limit): one EAGER frame, no handshake;
//   rendezvous: RTS -> (receiver matches) CTS -> CHUNK frames, each chunk at
//   most the chunk size, streamed as credit allows. Synchronous sends always
//   use the rendezvous, so they complete only after the receiver matched.
//   Nothing blocks in an I-call; the protocol advances whenever any MMPI
//   call progresses.
//
// With k > 1 rails (reliability.h): a pair's EAGER and RTS frames take one
// rail (the sender's index in its cluster mod k), chunks take any rail with
// credit, and everything is acknowledged end to end so that a failed rail
// loses nothing.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "chunking.h"
#include "match_queue.h"
#include "point_to_point.h"
#include "rails.h"
#include "reliability.h"

namespace zipper::client {

/// A message that arrived before a matching receive was posted.
struct UnexpectedMsg {
  enum class Kind : std::uint8_t { kEager, kRts, kNative } kind = Kind::kEager;
  proto::Payload payload;     // kEager: the message bytes
  std::uint64_t msg_len = 0;  // bytes
  std::uint64_t seq = 0;
  MPI_Message native = MPI_MESSAGE_NULL;  // kNative: held by MPI_Improbe
};

/// A message taken out of matching by MMPI_Mprobe / Improbe, for Mrecv.
struct MatchedMessage {
  CommPtr comm;
  Envelope env;
  UnexpectedMsg msg;
};

class Engine final : public PointToPoint, private RailHandler {
 public:
  /// `rails`: the links to the zipperd of each bridge node (none in standalone mode).
  /// This process is world rank `rank` of `world_size`; world ranks in
  /// [local_lo, local_hi) are in its cluster.
  /// `spin_rounds`: progress rounds a wait spins before it sleeps.
  /// `retransmit_bytes`: eager bytes kept for resending (several rails only).
  Engine(Rails& rails, int rank, int world_size, int local_lo, int local_hi, int spin_rounds,
         std::uint64_t retransmit_bytes, int forwarder_timeout_ms);
  ~Engine() override;

  int isend(const CommPtr& c, Traffic tr, const void* buf, int count, MPI_Datatype type, int dest,
            int tag, RequestPtr* out, SendMode mode) override;
  int irecv(const CommPtr& c, Traffic tr, void* buf, int count, MPI_Datatype type, int source,
            int tag, RequestPtr* out) override;
  bool test(Request& r) override;
  void wait_until(const std::function<bool()>& pred, bool native_active) override;

  /// MPI_Iprobe on the point-to-point context of `c`.
  int iprobe(const CommPtr& c, int source, int tag, bool* flag, MPI_Status* st);
  /// MPI_Improbe: like iprobe, but a found message leaves matching and is
  /// returned in *out (null when none), for mrecv only.
  int improbe(const CommPtr& c, int source, int tag, std::unique_ptr<MatchedMessage>* out,
              MPI_Status* st);
  /// MPI_Imrecv: receives a message improbe returned.
  int mrecv(std::unique_ptr<MatchedMessage> m, void* buf, int count, MPI_Datatype type,
            RequestPtr* out);
  /// MPI_Cancel: a receive not yet matched is cancelled (complete, status
  /// cancelled). Sends are not cancelled (MPI allows that); returns false then.
  bool cancel(Request& r);
  /// MPI_Request_free: the engine keeps `r` until it completes, then frees it.
  void release(RequestPtr r);
  /// Fills `st` (if not MPI_STATUS_IGNORE) from a completed request.
  static void fill_status(const Request& r, MPI_Status* st);

  /// One round of progress on the link and the native bridge.
  void progress();

  /// What lives above the engine and must advance with it (non-blocking
  /// collectives' schedules, persistent and freed requests: capi/progress.cpp).
  /// `hook` runs at the end of every progress() (never re-entered) and
  /// returns true while it has work in flight, which keeps wait_until polling
  /// instead of sleeping on the link.
  using ProgressHook = bool (*)();
  static void set_progress_hook(ProgressHook hook) { progress_hook_ = hook; }
  /// Connects the rails with this engine handling their frames (see
  /// Rails::connect); false with the rails' error() set on failure.
  bool connect() { return rails_.connect(*this); }
  /// Waits (up to 30 s) until every message sent over several rails is
  /// acknowledged, then closes the rails (see Rails::close).
  void close();
  /// The link to zipperd failed (it was up once): nothing crosses clusters.
  bool link_lost() const { return link_lost_; }

 private:
  // RailHandler (engine_frames.cpp)
  std::optional<proto::Payload> payload_dest(int rail, const proto::FrameHeader& h) override;
  void on_data_frame(int rail, const proto::FrameHeader& h, proto::Payload payload) override;
  bool on_peer_gone(int rail, int vrank, const std::string& why) override;
  void on_rail_failed(int rail) override;
  void on_rail_draining(int rail) override;
  void on_rail_rejoined(int rail) override;
  void on_link_failed() override;

  bool valid_world(int w) const { return w >= 0 && w < world_size_; }
  bool is_local_world(int w) const { return w >= local_lo_ && w < local_hi_; }
  RequestPtr start(const CommPtr& c);
  void pull_native(const Comm& c);
  void post_recv(Request* r, const Selector& sel, bool native_eligible);
  void unposted(Request* r);
  void deliver(Request* r, const Envelope& env, UnexpectedMsg&& m);
  void deliver_bytes(Request* r, const Envelope& env, const std::byte* data, std::uint64_t n);
  void begin_rendezvous_recv(Request* r, const Envelope& env, std::uint64_t seq,
                             std::uint64_t msg_len);
  void stream_chunks(Request* s, std::uint64_t accepted);
  void complete(Request* r, int error);
  /// Completes `r` if its native request finished; true when `r` is complete.
  bool poll_native(Request& r);
  /// Classifies an EAGER/RTS header (sequence order) and matches it when in order.
  Request* match_header(int rail, const proto::FrameHeader& h);
  /// An EAGER or RTS frame in sequence order: to `r` (matched) or the unexpected queue.
  void accept_in_order(const proto::FrameHeader& h, proto::Payload payload, Request* r);
  void on_chunk(const proto::FrameHeader& h);
  void fail_all(const std::string& why);
  void report(const std::string& msg) const;

  // To world rank `peer`: EAGER, RTS, CTS and acknowledgements take the
  // pair's rail (reliability.cpp), so one pair's frames stay in order.
  void send_pair(int peer, proto::OutFrame f);

  // reliability.cpp: several rails only.
  int local_index() const { return rank_ - local_lo_; }
  void keep_eager_copy(const proto::OutFrame& f);
  void on_ack(int peer, std::uint64_t upto);
  void on_fin(int peer, std::uint64_t seq);
  void on_cts(int peer, const proto::FrameHeader& h);
  void on_duplicate(const proto::FrameHeader& h);
  void hold(const proto::FrameHeader& h, proto::Payload payload);
  void release_held(int src);
  void header_arrived(int src);
  void send_ack(int peer);
  void send_fin(int peer, std::uint64_t seq);
  void send_rts(Request* s);
  void pump_chunks();
  void resend_to(int peer, int failed_rail);
  void reliability_tick();
  bool reliable_idle() const;
  void drop_peer_state(int peer);

  Rails& rails_;
  int rank_ = 0, world_size_ = 1, local_lo_ = 0, local_hi_ = 1;
  int spin_rounds_ = 1000;
  const bool reliable_;  // more than one rail
  const std::uint64_t retransmit_limit_;
  const std::chrono::milliseconds resend_after_;

  MatchQueue<Request*, UnexpectedMsg> queue_;
  // Posted receives a native message could match, per communicator.
  std::map<const Comm*, int> native_eligible_;
  int native_eligible_total_ = 0;
  std::vector<std::uint64_t> next_send_seq_, next_recv_seq_;      // per world rank
  std::map<std::pair<int, std::uint64_t>, Request*> rndv_sends_;  // (dest, seq): awaiting CTS (FIN)
  std::map<std::pair<int, std::uint64_t>, Request*> rndv_recvs_;  // (src, seq): receiving chunks
  std::set<Request*> active_sends_;   // inter-cluster sends not yet complete
  std::vector<RequestPtr> released_;  // freed by the user, still running
  // Per rail: the receive matched by the EAGER/RTS header being read on it,
  // and how that header stood in its pair's sequence.
  std::vector<Request*> header_match_;
  std::vector<HeaderOrder> header_order_;
  std::set<int> dead_peers_;
  bool link_lost_ = false;
  static inline ProgressHook progress_hook_ = nullptr;
  bool in_hook_ = false, hook_active_ = false;

  // Several rails (reliability.h).
  std::vector<PeerTx> tx_;  // per world rank
  std::vector<PeerRx> rx_;
  std::uint64_t retained_bytes_ = 0;  // in the EAGER copies kept (MMPI_RETRANSMIT_BYTES)
  std::size_t retained_copies_ = 0;   // EAGER copies kept, empty messages included
  std::vector<Request*> streaming_;   // rendezvous sends with chunks to post
  std::set<std::pair<int, std::uint64_t>> unexpected_rts_;
  std::vector<int> ack_due_;  // peers owed an ACK
  std::chrono::steady_clock::time_point next_tick_{};
  std::vector<pollfd> pollfds_;
};

}  // namespace zipper::client
