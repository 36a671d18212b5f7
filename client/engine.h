// libmmpi's point-to-point engine: one matching engine over both clusters,
// so that MPI_ANY_SOURCE, MPI_ANY_TAG and non-overtaking hold across them.
// Messages to a rank in this cluster go to Open MPI on the communicator's
// native communicator (the native bridge); messages to the other cluster go
// through zipperd (channel.h), addressed by world rank and carrying the
// communicator's context (communicator.h).
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
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "channel.h"
#include "chunking.h"
#include "match_queue.h"
#include "point_to_point.h"

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

class Engine final : public PointToPoint, private FrameHandler {
 public:
  /// `channel`: the link to zipperd (not connected in standalone mode).
  /// This process is world rank `rank` of `world_size`; world ranks in
  /// [local_lo, local_hi) are in its cluster.
  /// `spin_rounds`: progress rounds a wait spins before it sleeps.
  Engine(Channel& channel, int rank, int world_size, int local_lo, int local_hi, int spin_rounds);
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
  /// Connects the channel with this engine handling its frames (see
  /// Channel::connect); false with channel's error() set on failure.
  bool connect() { return channel_.connect(*this); }
  /// Closes the channel (see Channel::close).
  void close() { channel_.close(*this); }

 private:
  std::optional<proto::Payload> payload_dest(const proto::FrameHeader& h) override;
  void on_data_frame(const proto::FrameHeader& h, proto::Payload payload) override;
  bool on_peer_gone(int vrank, const std::string& why) override;
  void on_link_failed() override;
  /// The link to zipperd failed (it was up once): nothing crosses clusters.
  bool link_lost() const { return link_lost_; }

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
  Request* match_header(const proto::FrameHeader& h);
  void report(const std::string& msg) const;

  Channel& channel_;
  int rank_ = 0, world_size_ = 1, local_lo_ = 0, local_hi_ = 1;
  int spin_rounds_ = 1000;

  MatchQueue<Request*, UnexpectedMsg> queue_;
  // Posted receives a native message could match, per communicator.
  std::map<const Comm*, int> native_eligible_;
  int native_eligible_total_ = 0;
  std::vector<std::uint64_t> next_send_seq_, next_recv_seq_;      // per world rank
  std::map<std::pair<int, std::uint64_t>, Request*> rndv_sends_;  // (dest, seq): awaiting CTS
  std::map<std::pair<int, std::uint64_t>, Request*> rndv_recvs_;  // (src, seq): receiving chunks
  std::set<Request*> active_sends_;   // inter-cluster sends not yet complete
  std::vector<RequestPtr> released_;  // freed by the user, still running
  Request* header_match_ = nullptr;   // receive matched by the EAGER/RTS header being read
  std::set<int> dead_peers_;
  bool link_lost_ = false;
  static inline ProgressHook progress_hook_ = nullptr;
  bool in_hook_ = false, hook_active_ = false;
};

}  // namespace zipper::client
