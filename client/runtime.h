// libmmpi's engine: one per process. Routes each operation either to native
// Open MPI (peer in the same cluster) or through the zipperd link (peer in
// the other cluster), and runs one matching engine over both so that
// MPI_ANY_SOURCE, MPI_ANY_TAG and non-overtaking hold across clusters.
//
// Protocols through zipperd:
//   eager (<= eager limit): one EAGER frame, no handshake;
//   rendezvous: RTS -> (receiver matches) CTS -> CHUNK frames, each chunk at
//   most the chunk size, streamed as credit allows. Nothing blocks in an
//   I-call; the protocol advances whenever any MMPI call progresses.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "../proto/link.h"
#include "chunking.h"
#include "config.h"
#include "match_queue.h"
#include "request.h"

namespace zipper::client {

/// A message that arrived before a matching receive was posted.
struct UnexpectedMsg {
  enum class Kind : std::uint8_t { kEager, kRts, kNative } kind = Kind::kEager;
  proto::Payload payload;     // kEager: the message bytes
  std::uint64_t msg_len = 0;  // bytes
  std::uint64_t seq = 0;
  MPI_Message native = MPI_MESSAGE_NULL;  // kNative: held by MPI_Improbe
};

inline constexpr std::uint32_t kWorldContext = 0;       // MMPI_COMM_WORLD
inline constexpr std::uint32_t kCollectiveContext = 1;  // collectives' internal messages

class Runtime {
 public:
  /// The initialised runtime, or nullptr.
  static Runtime* get() { return instance_.get(); }
  /// MMPI_Init_thread. On failure to reach zipperd, prints why and aborts the
  /// job (MPI_Abort), as MPI's default error handler would.
  static int init(int* argc, char*** argv, int required, int* provided);
  /// MMPI_Finalize: flushes the link, says BYE, finalizes MPI.
  static int finalize();

  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm native_comm() const { return native_comm_; }
  /// The local cluster's communicator reserved for collectives (a duplicate,
  /// so collective traffic never matches user point-to-point traffic).
  MPI_Comm collective_comm() const { return coll_comm_; }
  /// Virtual rank of local rank 0, and the number of ranks in this cluster.
  int offset() const { return offset_; }
  int local_size() const { return local_size_; }
  /// x: ranks in the low group (the high group holds x..size-1).
  int low_size() const { return high_group() ? offset_ : local_size_; }
  bool high_group() const { return offset_ > 0; }

  /// Start operations. `*out` receives a new request (never null on success).
  /// `context` separates traffic: kWorldContext for the user's point-to-point,
  /// kCollectiveContext for collectives' internal messages (which never use
  /// wildcards; their intra-cluster part goes over collective_comm()).
  int isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, Request** out,
            std::uint32_t context = kWorldContext);
  int irecv(void* buf, int count, MPI_Datatype type, int source, int tag, Request** out,
            std::uint32_t context = kWorldContext);

  /// Progresses and reports whether `r` completed.
  bool test(Request* r);
  /// Progresses until `pred()` is true (backing off to poll() when idle).
  /// `native_active`: the caller also waits on native Open MPI requests, which
  /// have no file descriptor, so idle waits must not sleep on the link.
  void wait_until(const std::function<bool()>& pred, bool native_active = false);
  /// Fills `st` (if not MPI_STATUS_IGNORE) from a completed request.
  static void fill_status(const Request* r, MPI_Status* st);

  int iprobe(int source, int tag, bool* flag, MPI_Status* st);

  /// Makes one round of progress on the link and the native probe queue.
  void progress();

  // issue 12: what capi/progress.cpp advances (non-blocking collectives,
  // persistent and freed requests). `hook` runs at the end of every
  // progress() (never re-entered) and returns true while it has work in
  // flight, which keeps wait_until polling instead of sleeping on the link.
  using ProgressHook = bool (*)();
  static void set_progress_hook(ProgressHook hook) { progress_hook_ = hook; }

 private:
  class Sink;
  friend class Sink;

  Runtime() = default;
  int connect_forwarder(const ClientConfig& cfg);
  bool is_local(int vrank) const { return vrank >= offset_ && vrank < offset_ + local_size_; }
  bool valid_rank(int r) const { return r >= 0 && r < size_; }

  void send_frame(proto::OutFrame f);
  void flush_credit_wait();
  bool waiting_for_credit() const { return !credit_wait_.empty() || !control_wait_.empty(); }
  void pull_native();
  void post_recv(Request* r, const Selector& sel);
  void deliver(Request* r, const Envelope& env, UnexpectedMsg&& m);
  void deliver_bytes(Request* r, const Envelope& env, const std::byte* data, std::uint64_t n);
  void begin_rendezvous_recv(Request* r, const Envelope& env, std::uint64_t seq,
                             std::uint64_t msg_len);
  void stream_chunks(Request* s, std::uint64_t accepted);
  void complete(Request* r, int error);
  Request* match_header(const proto::FrameHeader& h);
  void answer_challenge(const proto::FrameHeader& h, const proto::Payload& payload);
  void fail_soon(std::string why);
  void on_frame(const proto::FrameHeader& h, proto::Payload payload);
  void on_error_frame(const proto::FrameHeader& h, const proto::Payload& payload);
  void fail_peer(int vrank, const std::string& why);
  void link_failed(const std::string& why);
  void report(const std::string& msg) const;

  static std::unique_ptr<Runtime> instance_;
  static inline ProgressHook progress_hook_ = nullptr;  // issue 12
  bool in_hook_ = false, hook_active_ = false;          // issue 12

  ClientConfig cfg_;
  MPI_Comm native_comm_ = MPI_COMM_NULL;
  MPI_Comm coll_comm_ = MPI_COMM_NULL;
  bool we_initialized_mpi_ = false;
  int rank_ = 0, size_ = 1;
  int offset_ = 0, local_size_ = 1;

  // The zipperd link (null in standalone mode or after a failure).
  std::unique_ptr<proto::Link> link_;
  std::string link_error_;
  std::uint64_t credits_ = 0;                 // frames we may still send into zipperd
  std::deque<proto::OutFrame> credit_wait_;   // frames waiting for credit, in order
  std::deque<proto::OutFrame> control_wait_;  // CTS waiting for credit (sent first)
  std::uint64_t eager_limit_ = 0, chunk_size_ = 0;
  int spin_rounds_ = 0;  // progress rounds before sleeping in poll()
  bool hello_acked_ = false, job_ready_ = false;

  MatchQueue<Request*, UnexpectedMsg> queue_;
  int native_eligible_posted_ = 0;  // posted receives a native message could match
  std::vector<std::uint64_t> next_send_seq_, next_recv_seq_;
  std::map<std::pair<int, std::uint64_t>, Request*> rndv_sends_;  // (dest, seq): awaiting CTS
  std::map<std::pair<int, std::uint64_t>, Request*> rndv_recvs_;  // (src, seq): receiving chunks
  std::set<Request*> active_sends_;  // inter-cluster sends not yet complete
  Request* header_match_ = nullptr;  // receive matched by the EAGER/RTS header being read
  std::string pending_failure_;      // link failure seen inside a receive callback
  std::set<int> dead_peers_;
};

}  // namespace zipper::client
