// libmmpi's point-to-point engine: one matching engine over both clusters,
// so that MPI_ANY_SOURCE, MPI_ANY_TAG and non-overtaking hold across them.
// Messages to a rank in this cluster go to Open MPI on the communicator's
// native communicator (the native bridge); messages to the other cluster go
// through zipperd, addressed by world rank and carrying the communicator's
// context (communicator.h), by the delivery layer (peer_transport.h: order,
// acknowledgement and resending, the choice of rail) over the rails
// (rails.h: one channel per bridge node).
//
// Files: engine.cpp (sending, receiving, matching, progress), engine_frames.cpp
// (what the delivery layer hands up), engine_probe.cpp (probe, mprobe, cancel).
//
// Protocols through zipperd:
//   eager (<= eager limit): one EAGER frame, no handshake;
//   rendezvous: RTS -> (receiver matches) CTS -> CHUNK frames, each chunk at
//   most the chunk size, streamed as credit allows. Synchronous sends always
//   use the rendezvous, so they complete only after the receiver matched.
//   Nothing blocks in an I-call; the protocol advances whenever any MMPI
//   call progresses.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "chunking.h"
#include "match_queue.h"
#include "peer_transport.h"
#include "point_to_point.h"
#include "progress_list.h"
#include "rails.h"
#include "traffic_profile.h"

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

class Engine final : public PointToPoint, private DeliveryHandler {
 public:
  /// `rails`: the links to the zipperd of each bridge node (none in standalone mode).
  /// `progress`: the runtime's progress list; the engine's own round joins it,
  /// and progress() runs it whole.
  /// This process is world rank `rank` of `sites.world_size()`; the world
  /// ranks of its own site are reached through Open MPI, the others through
  /// the rails.
  /// `spin_rounds`: progress rounds a wait spins before it sleeps.
  /// `retransmit_bytes`: eager bytes kept for resending (several rails only).
  Engine(Rails& rails, ProgressList& progress, int rank, const SiteMap& sites, int spin_rounds,
         std::uint64_t retransmit_bytes, int forwarder_timeout_ms);
  ~Engine() override;

  int isend(const CommPtr& c, Traffic tr, const void* buf, int count, MPI_Datatype type, int dest,
            int tag, RequestPtr* out, SendMode mode) override;
  int irecv(const CommPtr& c, Traffic tr, void* buf, int count, MPI_Datatype type, int source,
            int tag, RequestPtr* out) override;
  bool test(Request& r) override;
  void wait_until(const std::function<bool()>& pred, bool native_active) override;
  /// Whether `r` completed, without progressing (for callers inside a
  /// progress round, where test() would run the whole list once per request).
  bool completed(Request& r) {
    std::lock_guard<std::recursive_mutex> g(mu_);
    return poll_native(r);
  }

  /// MPI_Iprobe on the point-to-point context of `c`.
  int iprobe(const CommPtr& c, int source, int tag, bool* flag, MPI_Status* st,
             bool progress_first = true);
  /// MPI_Improbe: like iprobe, but a found message leaves matching and is
  /// returned in *out (null when none), for mrecv only.
  /// `progress_first`: false from inside a progress round (an RMA window's),
  /// whose list already ran the engine's own round: a nested run would run
  /// every other window's round again, each probing again.
  int improbe(const CommPtr& c, int source, int tag, std::unique_ptr<MatchedMessage>* out,
              MPI_Status* st, bool progress_first = true);
  /// MPI_Imrecv: receives a message improbe returned.
  int mrecv(std::unique_ptr<MatchedMessage> m, void* buf, int count, MPI_Datatype type,
            RequestPtr* out);
  /// MPI_Cancel: a receive not yet matched is cancelled (complete, status
  /// cancelled). Sends are not cancelled (MPI allows that); returns false then.
  bool cancel(Request& r);
  /// Fills `st` (if not MPI_STATUS_IGNORE) from a completed request.
  static void fill_status(const Request& r, MPI_Status* st);

  /// One round of progress: the engine's (link and native bridge), then
  /// the other rounds of the progress list (progress_list.h).
  void progress() {
    std::lock_guard<std::recursive_mutex> g(mu_);
    progress_.run();
  }

  /// The engine's lock. Every public call holds it, so the RMA progress
  /// thread (rma_progress.h), which holds it while it progresses, never runs
  /// inside the application's MMPI call; recursive, because rounds call back
  /// into the engine.
  std::recursive_mutex& mutex() { return mu_; }
  /// The descriptors a progress thread may sleep on (the rails'), copied.
  void poll_fds(std::vector<pollfd>* out) {
    std::lock_guard<std::recursive_mutex> g(mu_);
    rails_.poll_fds(out);
  }
  /// poll_fds without waiting: false (and `out` untouched) while another
  /// thread holds the engine (the application inside an MMPI call).
  bool try_poll_fds(std::vector<pollfd>* out) {
    std::unique_lock<std::recursive_mutex> g(mu_, std::try_to_lock);
    if (!g.owns_lock()) return false;
    rails_.poll_fds(out);
    return true;
  }

  /// Connects the rails with the delivery layer handling their frames (see
  /// Rails::connect); false with the rails' error() set on failure.
  bool connect() {
    std::lock_guard<std::recursive_mutex> g(mu_);
    return rails_.connect(transport_);
  }
  /// Waits (up to 30 s) until every message sent is acknowledged (several
  /// rails: peer_transport.h), then closes the rails (see Rails::close).
  void close();
  /// The link to zipperd failed (it was up once): nothing crosses clusters.
  bool link_lost() const { return link_lost_; }
  /// Counts every message sent into `p` from now on (nullptr: stop), the
  /// communication profile (traffic_profile.h).
  void set_profile(TrafficProfile* p) {
    std::lock_guard<std::recursive_mutex> g(mu_);
    profile_ = p;
  }

 private:
  // DeliveryHandler (engine_frames.cpp)
  std::optional<proto::Payload> header_in_order(int rail, const proto::FrameHeader& h) override;
  void message_in_order(int rail, const proto::FrameHeader& h, proto::Payload payload) override;
  std::optional<proto::Payload> chunk_dest(const proto::FrameHeader& h) override;
  bool chunk_in(const proto::FrameHeader& h) override;
  RtsState rts_state(int src, std::uint64_t seq, std::uint64_t* accepted) override;
  void send_complete(Request* owner) override { complete(owner, MPI_SUCCESS); }
  void peer_gone(int vrank, const std::string& why) override;
  void link_failed() override;

  bool is_local_world(int w) const { return sites_.is_local(w); }
  RequestPtr start(const CommPtr& c);
  void pull_native(const Comm& c);
  void post_recv(Request* r, const Selector& sel, bool native_eligible);
  void unposted(Request* r);
  void deliver(Request* r, const Envelope& env, UnexpectedMsg&& m);
  void deliver_bytes(Request* r, const Envelope& env, const std::byte* data, std::uint64_t n);
  void begin_rendezvous_recv(Request* r, const Envelope& env, std::uint64_t seq,
                             std::uint64_t msg_len);
  void complete(Request* r, int error);
  /// Completes `r` if its native request finished; true when `r` is complete.
  bool poll_native(Request& r);
  void fail_all(const std::string& why);
  /// The engine's own round: the rails, the delivery layer's timers, native messages.
  void own_round();
  void report(const std::string& msg) const;

  std::recursive_mutex mu_;  // declared first: the progress list points at it
  Rails& rails_;
  const SiteMap sites_;
  int rank_ = 0;
  int spin_rounds_ = 1000;
  PeerTransport transport_;

  MatchQueue<Request*, UnexpectedMsg> queue_;
  // Posted receives a native message could match, per communicator.
  std::map<const Comm*, int> native_eligible_;
  int native_eligible_total_ = 0;
  std::map<std::pair<int, std::uint64_t>, Request*> rndv_recvs_;  // (src, seq): receiving chunks
  std::set<std::pair<int, std::uint64_t>> unexpected_rts_;        // (src, seq): RTS not matched
  std::set<Request*> active_sends_;  // inter-cluster sends not yet complete
  // Per rail: the receive matched by the EAGER/RTS header being read on it.
  std::vector<Request*> header_match_;
  std::set<int> dead_peers_;
  bool link_lost_ = false;
  ProgressList& progress_;
  ProgressList::Handle round_;  // the engine's own round in progress_
  std::vector<pollfd> pollfds_;
  TrafficProfile* profile_ = nullptr;  // set while profiling: every send adds to it
};

}  // namespace zipper::client
