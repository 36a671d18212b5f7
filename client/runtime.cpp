#include "runtime.h"

#include <poll.h>
#include <sched.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "../proto/munge.h"

namespace zipper::client {

static_assert(kAnySource == MPI_ANY_SOURCE && kAnyTag == MPI_ANY_TAG,
              "match_queue.h wildcards must equal Open MPI's");

using proto::FrameHeader;
using proto::FrameType;
using proto::OutFrame;
using proto::Payload;

std::unique_ptr<Runtime> Runtime::instance_;

// Receives frames from zipperd. Eager payloads and rendezvous chunks land
// straight in the user's buffer when it is known and contiguous.
class Runtime::Sink final : public proto::RecvSink {
 public:
  explicit Sink(Runtime& rt) : rt_(rt) {}
  std::optional<Payload> payload_dest(const FrameHeader& h) override {
    if (!rt_.pending_failure_.empty()) return Payload::allocate(h.payload_len);
    if (h.type == FrameType::kChunk) {
      auto it = rt_.rndv_recvs_.find({static_cast<int>(h.src), h.seq});
      if (it != rt_.rndv_recvs_.end()) {
        Request* r = it->second;
        if (h.chunk_offset + h.payload_len <= r->rndv_expected)
          return Payload::borrow(r->recv_dest() + h.chunk_offset, h.payload_len);
      }
    } else if (h.type == FrameType::kEager || h.type == FrameType::kRts) {
      // The envelope is complete once the header is in: match now, so the
      // payload can land in the user's buffer and no other path (a native
      // message for a wildcard receive) can claim that receive meanwhile.
      Request* r = rt_.match_header(h);
      if (r && h.type == FrameType::kEager && r->layout.contiguous &&
          r->layout.bytes >= h.payload_len)
        return Payload::borrow(r->layout.base, h.payload_len);
    }
    return Payload::allocate(h.payload_len);
  }
  void on_frame(const FrameHeader& h, Payload payload) override {
    rt_.on_frame(h, std::move(payload));
  }

 private:
  Runtime& rt_;
};

void Runtime::report(const std::string& msg) const {
  std::fprintf(stderr, "mmpi[rank %d]: %s\n", rank_, msg.c_str());
  std::fflush(stderr);
}

int Runtime::init(int* argc, char*** argv, int required, int* provided) {
  if (instance_) return MPI_ERR_OTHER;  // MPI forbids a second init
  std::unique_ptr<Runtime> rt(new Runtime);
  int inited = 0;
  MPI_Initialized(&inited);
  // libmmpi progresses from the calling thread only: SERIALIZED at most.
  const int want = std::min(required, static_cast<int>(MPI_THREAD_SERIALIZED));
  int got = want;
  if (!inited) {
    int rc = MPI_Init_thread(argc, argv, want, &got);
    if (rc != MPI_SUCCESS) return rc;
    rt->we_initialized_mpi_ = true;
  } else {
    MPI_Query_thread(&got);
  }
  if (provided) *provided = std::min(got, want);
  MPI_Comm_dup(MPI_COMM_WORLD, &rt->native_comm_);
  // Errors come back as return codes, as the MMPI API documents.
  MPI_Comm_set_errhandler(rt->native_comm_, MPI_ERRORS_RETURN);
  MPI_Comm_dup(rt->native_comm_, &rt->coll_comm_);
  MPI_Comm_rank(rt->native_comm_, &rt->rank_);
  MPI_Comm_size(rt->native_comm_, &rt->local_size_);
  rt->size_ = rt->local_size_;

  std::string why;
  auto cfg = config_from_env(&why);
  if (!cfg) {
    rt->report("bad environment: " + why);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return MPI_ERR_OTHER;
  }
  rt->cfg_ = *cfg;
  rt->eager_limit_ = cfg->eager_limit;
  rt->chunk_size_ = cfg->chunk_size;
  rt->spin_rounds_ = cfg->spin_rounds;
  if (cfg->forwarder) {
    const int group_size = static_cast<int>(cfg->high_group ? cfg->np_high : cfg->np_low);
    if (group_size != rt->local_size_) {
      rt->report("this cluster runs " + std::to_string(rt->local_size_) + " ranks but MMPI_NP_" +
                 (cfg->high_group ? "HIGH" : "LOW") + " says " + std::to_string(group_size));
      MPI_Abort(MPI_COMM_WORLD, 1);
      return MPI_ERR_OTHER;
    }
    rt->offset_ = cfg->high_group ? static_cast<int>(cfg->np_low) : 0;
    rt->size_ = static_cast<int>(cfg->np_low + cfg->np_high);
    rt->rank_ += rt->offset_;
  }
  // Sized before connecting: a peer that saw JOB_READY first may send at
  // once, and its frame can arrive in the same receive as our JOB_READY.
  rt->next_send_seq_.assign(static_cast<std::size_t>(rt->size_), 0);
  rt->next_recv_seq_.assign(static_cast<std::size_t>(rt->size_), 0);
  if (cfg->forwarder && rt->connect_forwarder(*cfg) != MPI_SUCCESS) {
    rt->report(rt->link_error_ + " (aborting)");
    MPI_Abort(MPI_COMM_WORLD, 1);
    return MPI_ERR_OTHER;
  }
  instance_ = std::move(rt);
  return MPI_SUCCESS;
}

int Runtime::connect_forwarder(const ClientConfig& cfg) {
  std::string why;
  auto ep = proto::parse_endpoint(*cfg.forwarder, &why);
  if (!ep) {
    link_error_ = "MMPI_FORWARDER: " + why;
    return MPI_ERR_OTHER;
  }
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(cfg.connect_timeout_s);
  const proto::ConnectHello who{cfg.job_id, static_cast<std::uint32_t>(rank_), cfg.np_low,
                                cfg.np_high};
  try {
    link_ = proto::connect(*ep, cfg.connect_timeout_s * 1000, &who);
  } catch (const std::exception& e) {
    link_error_ = e.what();
    return MPI_ERR_OTHER;
  }
  if (!link_->hello_delivered()) {
    OutFrame hello;
    hello.hdr.type = FrameType::kHello;
    hello.hdr.job_id = cfg.job_id;
    hello.hdr.src = who.vrank;
    hello.payload = Payload::allocate(proto::kHelloFixedSize);
    proto::encode_hello({who.vrank, who.np_low, who.np_high, 0},
                        hello.payload.bytes.first<proto::kHelloFixedSize>());
    link_->post(std::move(hello));
  }
  // One round trip per job, not per message: wait until every rank of both
  // clusters has connected, so no frame can be addressed to a rank not yet there.
  while (link_ && !job_ready_) {
    progress();
    if (std::chrono::steady_clock::now() > deadline) {
      link_error_ = "timed out after " + std::to_string(cfg.connect_timeout_s) +
                    " s waiting for all ranks of job " + std::to_string(cfg.job_id) +
                    " to connect to zipperd at " + ep->to_string() +
                    (hello_acked_ ? "" : " (no answer to hello)");
      return MPI_ERR_OTHER;
    }
    if (link_) {
      pollfd p{link_->poll_fd(), POLLIN, 0};
      poll(&p, 1, 10);
    }
  }
  if (!link_) return MPI_ERR_OTHER;  // link_error_ says why
  return MPI_SUCCESS;
}

// zipperd's CHALLENGE after our HELLO: prove the job secret for this
// connection's nonce (proto/auth.h); the secret itself goes sealed to
// zipperd's key, which only zipperd can open.
void Runtime::answer_challenge(const FrameHeader& h, const Payload& payload) {
  namespace auth = proto::auth;
  auth::ChallengePayload ch;
  if (hello_acked_ || !cfg_.job_secret || !auth::decode_challenge(payload.bytes, &ch))
    return fail_soon("unexpected or malformed CHALLENGE from zipperd");
  const proto::ConnectHello who{cfg_.job_id, static_cast<std::uint32_t>(rank_), cfg_.np_low,
                                cfg_.np_high};
  auth::AuthPayload a;
  a.fingerprint = auth::fingerprint(*cfg_.job_secret);
  a.tag = auth::make_tag(auth::auth_key(*cfg_.job_secret), ch, a.fingerprint, who);
  a.sealed_secret = auth::seal(*cfg_.job_secret, ch.server_key);
  if (h.flags & auth::kWantMunge) {
    std::string why;
    auto cred = auth::munge_credential(ch.nonce, cfg_.munge_socket, &why);
    if (!cred) return fail_soon(why);
    a.munge_cred = std::move(*cred);
  }
  const auto bytes = auth::encode_auth(a);
  OutFrame f;
  f.hdr.type = FrameType::kAuth;
  f.hdr.job_id = cfg_.job_id;
  f.hdr.src = who.vrank;
  f.payload = Payload::allocate(bytes.size());
  std::memcpy(f.payload.bytes.data(), bytes.data(), bytes.size());
  link_->post(std::move(f));  // before the credit grant, like HELLO
  if (link_->progress_send() == proto::LinkStatus::kError)
    fail_soon("cannot send AUTH to zipperd: " + link_->error());
}

int Runtime::finalize() {
  if (!instance_) return MPI_ERR_OTHER;
  Runtime& rt = *instance_;
  if (rt.link_) {
    // Let queued frames (and the BYE) reach zipperd before closing.
    OutFrame bye;
    bye.hdr.type = FrameType::kBye;
    bye.hdr.job_id = rt.cfg_.job_id;
    bye.hdr.src = static_cast<std::uint32_t>(rt.rank_);
    rt.send_frame(std::move(bye));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (rt.link_ && (rt.waiting_for_credit() || rt.link_->send_pending()) &&
           std::chrono::steady_clock::now() < deadline) {
      rt.progress();
      pollfd p{rt.link_ ? rt.link_->poll_fd() : -1, POLLIN | POLLOUT, 0};
      poll(&p, 1, 1);
    }
    if (rt.link_ && (rt.link_->send_pending() || rt.waiting_for_credit()))
      rt.report("finalize: frames still queued to zipperd after 30 s; closing anyway");
    // Half-close, then read until zipperd closes its side: closing with
    // unread input (late credit frames) would send a reset, and a reset
    // discards our own last frames still queued in the kernel.
    if (rt.link_) {
      rt.link_->shutdown_send();
      const auto drain_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      Sink sink(rt);
      while (std::chrono::steady_clock::now() < drain_deadline) {
        const auto st = rt.link_->progress_recv(sink, 0);
        if (st == proto::LinkStatus::kClosed || st == proto::LinkStatus::kError) break;
        pollfd p{rt.link_->poll_fd(), POLLIN, 0};
        poll(&p, 1, 10);
      }
    }
    rt.link_.reset();
  }
  // Held native messages were never received: MPI requires them matched.
  MPI_Comm_free(&rt.coll_comm_);
  MPI_Comm_free(&rt.native_comm_);
  const bool fin = rt.we_initialized_mpi_;
  instance_.reset();
  return fin ? MPI_Finalize() : MPI_SUCCESS;
}

// ---------------------------------------------------------------------------
// Sending

void Runtime::send_frame(OutFrame f) {
  if (!link_) return;
  // A CTS is matched by sequence number, not by order, and the peer's data
  // waits on it: it overtakes data frames waiting for credit (and, urgent,
  // those queued in the link), or a full-duplex exchange would run one
  // direction at a time. Everything else keeps its order (non-overtaking).
  const bool control = f.hdr.type == FrameType::kCts;
  f.urgent = control;
  auto& wait = control ? control_wait_ : credit_wait_;
  const std::uint64_t cost = proto::credit_cost(static_cast<std::uint32_t>(f.payload.bytes.size()));
  if (wait.empty() && (control || control_wait_.empty()) && credits_ >= cost) {
    credits_ -= cost;
    link_->post(std::move(f));
  } else {
    wait.push_back(std::move(f));
  }
}

void Runtime::flush_credit_wait() {
  for (auto* wait : {&control_wait_, &credit_wait_}) {
    while (link_ && !wait->empty()) {
      auto& f = wait->front();
      const std::uint64_t cost =
          proto::credit_cost(static_cast<std::uint32_t>(f.payload.bytes.size()));
      if (credits_ < cost) return;
      credits_ -= cost;
      link_->post(std::move(f));
      wait->pop_front();
    }
  }
}

int Runtime::isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, Request** out,
                   std::uint32_t context) {
  auto* r = new Request;
  *out = r;
  if (dest == MPI_PROC_NULL) {
    r->complete = true;
    return MPI_SUCCESS;
  }
  if (!valid_rank(dest)) return complete(r, MPI_ERR_RANK), MPI_ERR_RANK;
  if (tag < 0) return complete(r, MPI_ERR_TAG), MPI_ERR_TAG;
  if (is_local(dest)) {
    r->kind = RequestKind::kNative;
    r->native_offset = offset_;
    const int rc = MPI_Isend(buf, count, type, dest - offset_, tag,
                             context == kWorldContext ? native_comm_ : coll_comm_, &r->native);
    if (rc != MPI_SUCCESS) complete(r, rc);
    return rc;
  }
  int rc = describe(buf, count, type, &r->layout);
  if (rc != MPI_SUCCESS) return complete(r, rc), rc;
  if (!link_ || dead_peers_.count(dest)) {
    report("send to rank " + std::to_string(dest) + " failed: " +
           (link_ ? "that rank has disconnected" : "no link to zipperd: " + link_error_));
    return complete(r, MPI_ERR_OTHER), MPI_ERR_OTHER;
  }
  r->kind = RequestKind::kSend;
  r->peer = dest;
  r->send_bytes = r->layout.bytes;
  if (r->layout.contiguous) {
    r->send_data = r->layout.base;
  } else {
    rc = pack(buf, count, type, native_comm_, &r->send_pack);
    if (rc != MPI_SUCCESS) return complete(r, rc), rc;
    r->send_data = r->send_pack.data();
    r->send_bytes = r->send_pack.size();
  }
  r->seq = next_send_seq_[static_cast<std::size_t>(dest)]++;
  OutFrame f;
  f.hdr.job_id = cfg_.job_id;
  f.hdr.src = static_cast<std::uint32_t>(rank_);
  f.hdr.dst = static_cast<std::uint32_t>(dest);
  f.hdr.tag = tag;
  f.hdr.context_id = context;
  f.hdr.seq = r->seq;
  f.hdr.msg_len = r->send_bytes;
  active_sends_.insert(r);
  if (r->send_bytes <= eager_limit_) {
    f.hdr.type = FrameType::kEager;
    f.payload = Payload::borrow(r->send_data, r->send_bytes);
    f.on_sent = [this, r] { complete(r, MPI_SUCCESS); };
  } else {
    f.hdr.type = FrameType::kRts;
    rndv_sends_[{dest, r->seq}] = r;
  }
  send_frame(std::move(f));
  if (link_ && link_->progress_send() == proto::LinkStatus::kError) link_failed(link_->error());
  return MPI_SUCCESS;
}

void Runtime::stream_chunks(Request* s, std::uint64_t accepted) {
  const std::uint64_t n = std::min(accepted, s->send_bytes);
  if (n == 0) return complete(s, MPI_SUCCESS);
  const std::uint64_t chunk = rendezvous_chunk(n, chunk_size_);
  s->chunks_left = static_cast<std::uint32_t>((n + chunk - 1) / chunk);
  // Every chunk is posted at once: credit, not a round trip, paces them, so
  // zipperd relays chunk i while chunk i+1 is on its way in.
  // The chunks share one owner token and the message as their extent: a verbs
  // link registers the message once (MR cache) instead of once per chunk. The
  // token dies with the last chunk, which invalidates that registration; the
  // user buffer itself stays borrowed until the request completes.
  const std::shared_ptr<void> token = std::make_shared<char>();
  const std::span<std::byte> message(s->send_data, n);
  for (std::uint64_t off = 0; off < n; off += chunk) {
    const std::uint64_t len = std::min(chunk, n - off);
    OutFrame f;
    f.hdr.type = FrameType::kChunk;
    f.hdr.job_id = cfg_.job_id;
    f.hdr.src = static_cast<std::uint32_t>(rank_);
    f.hdr.dst = static_cast<std::uint32_t>(s->peer);
    f.hdr.seq = s->seq;
    f.hdr.msg_len = n;
    f.hdr.chunk_offset = off;
    f.payload = Payload{message.subspan(off, len), token, message};
    f.on_sent = [this, s] {
      if (--s->chunks_left == 0) complete(s, MPI_SUCCESS);
    };
    send_frame(std::move(f));
  }
}

// ---------------------------------------------------------------------------
// Receiving and matching

int Runtime::irecv(void* buf, int count, MPI_Datatype type, int source, int tag, Request** out,
                   std::uint32_t context) {
  auto* r = new Request;
  *out = r;
  r->buf = buf;
  r->count = count;
  r->type = type;
  if (source == MPI_PROC_NULL) {
    r->status_source = MPI_PROC_NULL;
    r->complete = true;
    return MPI_SUCCESS;
  }
  if (source != MPI_ANY_SOURCE && !valid_rank(source))
    return complete(r, MPI_ERR_RANK), MPI_ERR_RANK;
  if (tag < 0 && tag != MPI_ANY_TAG) return complete(r, MPI_ERR_TAG), MPI_ERR_TAG;
  int rc = describe(buf, count, type, &r->layout);
  if (rc != MPI_SUCCESS) return complete(r, rc), rc;
  r->kind = RequestKind::kRecv;
  r->peer = source;
  r->native_offset = offset_;
  if (context != kWorldContext && (source == MPI_ANY_SOURCE || tag == MPI_ANY_TAG))
    return complete(r, MPI_ERR_INTERN), MPI_ERR_INTERN;  // collectives never use wildcards
  if (context != kWorldContext && is_local(source)) {
    r->kind = RequestKind::kNative;
    rc = MPI_Irecv(buf, count, type, source - offset_, tag, coll_comm_, &r->native);
    if (rc != MPI_SUCCESS) complete(r, rc);
    return rc;
  }
  const Selector sel{source, tag, context};
  const bool native_possible =
      context == kWorldContext && (source == MPI_ANY_SOURCE || is_local(source));

  auto m = queue_.match_unexpected(sel);
  if (!m && native_possible) {
    // Fast path: no earlier wildcard receive can claim this message, so Open
    // MPI's own matching gives the right order.
    if (source != MPI_ANY_SOURCE && native_eligible_posted_ == 0) {
      r->kind = RequestKind::kNative;
      rc = MPI_Irecv(buf, count, type, source - offset_, tag, native_comm_, &r->native);
      if (rc != MPI_SUCCESS) complete(r, rc);
      return rc;
    }
    pull_native();
    m = queue_.match_unexpected(sel);
  }
  if (m) {
    deliver(r, m->env, std::move(m->msg));
    return MPI_SUCCESS;
  }
  if (!native_possible && (!link_ || dead_peers_.count(source))) {
    report("receive from rank " + std::to_string(source) + " cannot complete: " +
           (link_ ? "that rank has disconnected" : "no link to zipperd: " + link_error_));
    return complete(r, MPI_ERR_OTHER), MPI_ERR_OTHER;
  }
  post_recv(r, sel);
  return MPI_SUCCESS;
}

void Runtime::post_recv(Request* r, const Selector& sel) {
  queue_.post(sel, r);
  if (sel.src == MPI_ANY_SOURCE || is_local(sel.src)) ++native_eligible_posted_;
}

void Runtime::pull_native() {
  for (;;) {
    int flag = 0;
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    if (MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, native_comm_, &flag, &msg, &st) != MPI_SUCCESS ||
        !flag)
      return;
    int bytes = 0;
    MPI_Get_count(&st, MPI_BYTE, &bytes);
    const Envelope env{st.MPI_SOURCE + offset_, st.MPI_TAG, kWorldContext};
    UnexpectedMsg m;
    m.kind = UnexpectedMsg::Kind::kNative;
    m.native = msg;
    m.msg_len = static_cast<std::uint64_t>(bytes);
    if (auto r = queue_.match_posted(env)) {
      --native_eligible_posted_;
      deliver(*r, env, std::move(m));
    } else {
      queue_.add_unexpected(env, std::move(m));
    }
  }
}

void Runtime::deliver(Request* r, const Envelope& env, UnexpectedMsg&& m) {
  switch (m.kind) {
    case UnexpectedMsg::Kind::kNative: {
      const int rc = MPI_Imrecv(r->buf, r->count, r->type, &m.native, &r->native);
      if (rc != MPI_SUCCESS) complete(r, rc);
      return;
    }
    case UnexpectedMsg::Kind::kEager:
      return deliver_bytes(r, env, m.payload.bytes.data(), m.payload.bytes.size());
    case UnexpectedMsg::Kind::kRts:
      return begin_rendezvous_recv(r, env, m.seq, m.msg_len);
  }
}

void Runtime::deliver_bytes(Request* r, const Envelope& env, const std::byte* data,
                            std::uint64_t n) {
  const std::uint64_t got = std::min(n, r->layout.bytes);
  if (r->layout.contiguous) {
    if (got > 0 && data != r->layout.base) std::memcpy(r->layout.base, data, got);
  } else {
    unpack(data, got, r->buf, r->count, r->type, native_comm_);
  }
  r->status_source = env.src;
  r->status_tag = env.tag;
  r->status_bytes = got;
  complete(r, n > r->layout.bytes ? MPI_ERR_TRUNCATE : MPI_SUCCESS);
}

void Runtime::begin_rendezvous_recv(Request* r, const Envelope& env, std::uint64_t seq,
                                    std::uint64_t msg_len) {
  r->status_source = env.src;
  r->status_tag = env.tag;
  r->msg_len = msg_len;
  r->seq = seq;
  r->rndv_expected = std::min(msg_len, r->layout.bytes);
  r->rndv_received = 0;
  if (!r->layout.contiguous) r->staging.resize(r->rndv_expected);
  // CTS says how many bytes we accept: a truncating receive never pulls more.
  OutFrame cts;
  cts.hdr.type = FrameType::kCts;
  cts.hdr.job_id = cfg_.job_id;
  cts.hdr.src = static_cast<std::uint32_t>(rank_);
  cts.hdr.dst = static_cast<std::uint32_t>(env.src);
  cts.hdr.tag = env.tag;
  cts.hdr.seq = seq;
  cts.hdr.msg_len = r->rndv_expected;
  send_frame(std::move(cts));
  if (r->rndv_expected == 0) {
    r->status_bytes = 0;
    return complete(r, msg_len > 0 ? MPI_ERR_TRUNCATE : MPI_SUCCESS);
  }
  rndv_recvs_[{env.src, seq}] = r;
}

void Runtime::complete(Request* r, int error) {
  r->error = error;
  r->complete = true;
  if (r->kind == RequestKind::kSend) active_sends_.erase(r);
}

// ---------------------------------------------------------------------------
// Frames from zipperd

Request* Runtime::match_header(const FrameHeader& h) {
  header_match_ = nullptr;
  const int src = static_cast<int>(h.src);
  if (!valid_rank(src) || is_local(src)) {
    fail_soon("frame from invalid rank " + std::to_string(h.src));
    return nullptr;
  }
  auto& expect = next_recv_seq_[static_cast<std::size_t>(src)];
  if (h.seq != expect) {
    fail_soon("message order violated from rank " + std::to_string(h.src) + ": sequence " +
              std::to_string(h.seq) + ", expected " + std::to_string(expect));
    return nullptr;
  }
  ++expect;
  if (auto r = queue_.match_posted(Envelope{src, h.tag, h.context_id})) {
    if ((*r)->peer == MPI_ANY_SOURCE) --native_eligible_posted_;
    header_match_ = *r;
  }
  return header_match_;
}

void Runtime::fail_soon(std::string why) {
  if (pending_failure_.empty()) pending_failure_ = std::move(why);
}

void Runtime::on_frame(const FrameHeader& h, Payload payload) {
  if (!pending_failure_.empty()) return;
  credits_ += h.credits;
  const Envelope env{static_cast<int>(h.src), h.tag, h.context_id};
  switch (h.type) {
    case FrameType::kHelloAck: {
      proto::HelloAckPayload ack;
      if (!proto::decode_hello_ack(payload.bytes, &ack))
        return fail_soon("malformed HELLO_ACK from zipperd");
      credits_ = ack.credits;
      const std::uint64_t max_chunk = ack.max_payload;
      eager_limit_ = std::min(eager_limit_, max_chunk);
      chunk_size_ = std::min(chunk_size_, max_chunk);
      hello_acked_ = true;
      break;
    }
    case FrameType::kChallenge:
      return answer_challenge(h, payload);
    case FrameType::kJobReady:
      job_ready_ = true;
      break;
    case FrameType::kEager:
    case FrameType::kRts: {
      Request* r = header_match_;
      header_match_ = nullptr;
      if (r == nullptr) {
        // A receive posted while this frame's payload was still arriving
        // (the header matched nothing then) must take it now: later frames
        // of this pair would otherwise claim that receive first and overtake.
        if (auto p = queue_.match_posted(env)) {
          if ((*p)->peer == MPI_ANY_SOURCE) --native_eligible_posted_;
          r = *p;
        }
      }
      if (r) {
        if (h.type == FrameType::kEager)
          deliver_bytes(r, env, payload.bytes.data(), payload.bytes.size());
        else
          begin_rendezvous_recv(r, env, h.seq, h.msg_len);
      } else {
        UnexpectedMsg m;
        m.kind =
            h.type == FrameType::kEager ? UnexpectedMsg::Kind::kEager : UnexpectedMsg::Kind::kRts;
        m.payload = std::move(payload);
        m.msg_len = h.msg_len;
        m.seq = h.seq;
        queue_.add_unexpected(env, std::move(m));
      }
      break;
    }
    case FrameType::kCts: {
      auto it = rndv_sends_.find({env.src, h.seq});
      if (it == rndv_sends_.end())
        return fail_soon("CTS for unknown message " + std::to_string(h.seq) + " from rank " +
                         std::to_string(h.src));
      Request* s = it->second;
      rndv_sends_.erase(it);
      stream_chunks(s, h.msg_len);
      break;
    }
    case FrameType::kChunk: {
      auto it = rndv_recvs_.find({env.src, h.seq});
      if (it == rndv_recvs_.end() || h.chunk_offset + h.payload_len > it->second->rndv_expected)
        return fail_soon("unexpected rendezvous chunk from rank " + std::to_string(h.src));
      Request* r = it->second;
      r->rndv_received += h.payload_len;
      if (r->rndv_received >= r->rndv_expected) {
        rndv_recvs_.erase(it);
        if (!r->layout.contiguous)
          unpack(r->staging.data(), r->rndv_expected, r->buf, r->count, r->type, native_comm_);
        r->status_bytes = r->rndv_expected;
        complete(r, r->msg_len > r->layout.bytes ? MPI_ERR_TRUNCATE : MPI_SUCCESS);
      }
      break;
    }
    case FrameType::kCredit:
      break;
    case FrameType::kError:
      return on_error_frame(h, payload);
    default:
      return fail_soon("unexpected " + std::string(proto::to_string(h.type)) +
                       " frame from zipperd");
  }
}

void Runtime::on_error_frame(const FrameHeader& h, const Payload& payload) {
  const std::string text(reinterpret_cast<const char*>(payload.bytes.data()), payload.bytes.size());
  const auto code = static_cast<proto::ErrorCode>(h.flags);
  if (code == proto::ErrorCode::kPeerGone && valid_rank(static_cast<int>(h.src)) &&
      !is_local(static_cast<int>(h.src)))
    return fail_peer(static_cast<int>(h.src), text);
  fail_soon("zipperd reported " + std::string(proto::to_string(code)) + ": " + text);
}

void Runtime::fail_peer(int vrank, const std::string& why) {
  if (!dead_peers_.insert(vrank).second) return;
  report("rank " + std::to_string(vrank) + " is gone (" + why +
         "); operations with it fail with MPI_ERR_OTHER");
  for (auto it = rndv_sends_.begin(); it != rndv_sends_.end();) {
    if (it->first.first == vrank) {
      complete(it->second, MPI_ERR_OTHER);
      it = rndv_sends_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto it = rndv_recvs_.begin(); it != rndv_recvs_.end();) {
    if (it->first.first == vrank) {
      complete(it->second, MPI_ERR_OTHER);
      it = rndv_recvs_.erase(it);
    } else {
      ++it;
    }
  }
  auto& posted = queue_.posted();
  for (auto it = posted.begin(); it != posted.end();) {
    if (it->sel.src == vrank) {
      complete(it->recv, MPI_ERR_OTHER);
      it = posted.erase(it);
    } else {
      ++it;
    }
  }
}

void Runtime::link_failed(const std::string& why) {
  if (!link_) return;
  link_error_ = why;
  report("link to zipperd failed: " + why);
  link_->shutdown();
  link_.reset();  // queued frames are dropped; their requests are failed below
  credit_wait_.clear();
  control_wait_.clear();
  for (Request* s : std::set<Request*>(active_sends_)) complete(s, MPI_ERR_OTHER);
  rndv_sends_.clear();
  for (auto& [key, r] : rndv_recvs_) complete(r, MPI_ERR_OTHER);
  rndv_recvs_.clear();
  auto& posted = queue_.posted();
  for (auto it = posted.begin(); it != posted.end();) {
    if (it->sel.src != MPI_ANY_SOURCE && !is_local(it->sel.src)) {
      complete(it->recv, MPI_ERR_OTHER);
      it = posted.erase(it);
    } else {
      ++it;
    }
  }
}

// ---------------------------------------------------------------------------
// Progress and completion

void Runtime::progress() {
  if (link_) {
    Sink sink(*this);
    const auto st = link_->progress_recv(sink, 0);
    // Failures seen inside the receive callbacks are acted on only now,
    // outside the link's own call.
    if (!pending_failure_.empty())
      link_failed(std::exchange(pending_failure_, {}));
    else if (st == proto::LinkStatus::kClosed)
      link_failed("zipperd closed the connection");
    else if (st == proto::LinkStatus::kError)
      link_failed(link_->error());
  }
  if (link_) {
    flush_credit_wait();
    if (link_->progress_send() == proto::LinkStatus::kError) link_failed(link_->error());
  }
  if (native_eligible_posted_ > 0) pull_native();
  if (progress_hook_ != nullptr && !in_hook_) {  // issue 12: schedules, persistent, freed
    in_hook_ = true;
    hook_active_ = progress_hook_();
    in_hook_ = false;
  }
}

bool Runtime::test(Request* r) {
  if (!r->complete) progress();
  if (r->kind == RequestKind::kProgressable && !r->complete)  // issue 12
    r->complete = r->progressable->poll(*r);
  if (!r->complete && r->native != MPI_REQUEST_NULL) {
    int flag = 0;
    MPI_Status st;
    const int rc = MPI_Test(&r->native, &flag, &st);
    if (flag || rc != MPI_SUCCESS) {
      if (r->kind == RequestKind::kNative || r->kind == RequestKind::kRecv) {
        if (st.MPI_SOURCE != MPI_PROC_NULL && st.MPI_SOURCE != MPI_ANY_SOURCE)
          r->status_source = st.MPI_SOURCE + r->native_offset;
        r->status_tag = st.MPI_TAG;
        int bytes = 0;
        MPI_Get_count(&st, MPI_BYTE, &bytes);
        r->status_bytes = static_cast<std::uint64_t>(bytes < 0 ? 0 : bytes);
      }
      r->error = rc;
      r->complete = true;
    }
  }
  return r->complete;
}

void Runtime::wait_until(const std::function<bool()>& pred, bool native_active) {
  for (int spins = 0; !pred(); ++spins) {
    if (spins < spin_rounds_) {
      // Spinning holds a core that zipperd (on the same node in tests, or the
      // peer's progress) may need: yield it between rounds.
      sched_yield();
      continue;
    }
    // Idle: sleep on the link (zipperd traffic wakes us at once) but come back
    // quickly for native progress, which has no file descriptor to wait on.
    const bool native = native_active || native_eligible_posted_ > 0 || hook_active_;
    if (link_) {
      pollfd p{link_->poll_fd(), static_cast<short>(POLLIN | (link_->send_pending() ? POLLOUT : 0)),
               0};
      poll(&p, 1, native ? 0 : 1);
      if (native) sched_yield();
    } else {
      sched_yield();
    }
  }
}

void Runtime::fill_status(const Request* r, MPI_Status* st) {
  if (st == MPI_STATUS_IGNORE) return;
  st->MPI_SOURCE = r->status_source;
  st->MPI_TAG = r->status_tag;
  st->MPI_ERROR = r->error;
  MPI_Status_set_elements_x(st, MPI_BYTE, static_cast<MPI_Count>(r->status_bytes));
  MPI_Status_set_cancelled(st, 0);
}

int Runtime::iprobe(int source, int tag, bool* flag, MPI_Status* st) {
  *flag = false;
  if (source == MPI_PROC_NULL) {
    *flag = true;
    Request r;
    r.status_source = MPI_PROC_NULL;
    fill_status(&r, st);
    return MPI_SUCCESS;
  }
  if (source != MPI_ANY_SOURCE && !valid_rank(source)) return MPI_ERR_RANK;
  progress();
  // Pull native messages into the one queue so that a following receive with
  // the probed source and tag gets exactly the probed message.
  if (source == MPI_ANY_SOURCE || is_local(source)) pull_native();
  const Selector sel{source, tag, kWorldContext};
  if (const auto* e = queue_.peek_unexpected(sel)) {
    *flag = true;
    Request r;
    r.status_source = e->env.src;
    r.status_tag = e->env.tag;
    r.status_bytes = e->msg.msg_len;
    if (e->msg.kind == UnexpectedMsg::Kind::kEager) r.status_bytes = e->msg.payload.bytes.size();
    fill_status(&r, st);
  }
  return MPI_SUCCESS;
}

}  // namespace zipper::client
