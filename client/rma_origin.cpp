// The origin's half of a window (rma_origin.h): operations as request
// messages, their replies, and completion (flush).
#include "rma_origin.h"

#include <algorithm>
#include <cstring>

#include "rma_types.h"

namespace zipper::client::rma {

namespace {

std::uint64_t type_bytes(int count, MPI_Datatype type) {
  const MPI_Count size = type_size(type);
  if (count < 0 || size < 0) return 0;
  return static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(size);
}

// The bytes of origin data in (buf, count, type): the buffer itself when
// contiguous, else packed into `keep`.
int origin_bytes(const void* buf, int count, MPI_Datatype type, std::vector<std::byte>* keep,
                 const std::byte** out) {
  Layout l;
  if (int rc = describe(buf, count, type, &l)) return rc;
  *out = l.base;
  if (l.bytes == 0 || l.contiguous) return MPI_SUCCESS;
  keep->resize(l.bytes);
  *out = keep->data();
  return pack_into(buf, count, type, keep->data(), static_cast<MPI_Count>(l.bytes), MPI_COMM_SELF);
}

// Bytes of origin data appended to `out` (compare-and-swap's two elements).
int append(std::vector<std::byte>* out, const void* buf, int count, MPI_Datatype type) {
  std::vector<std::byte> keep;
  const std::byte* d = nullptr;
  if (int rc = origin_bytes(buf, count, type, &keep, &d)) return rc;
  const std::uint64_t n = type_bytes(count, type);
  if (n > 0) out->insert(out->end(), d, d + n);
  return MPI_SUCCESS;
}

}  // namespace

Origin::Origin(Engine& engine, CommPtr comm, std::vector<TargetInfo> targets, bool dynamic)
    : engine_(engine), comm_(std::move(comm)), targets_(std::move(targets)), dynamic_(dynamic) {
  const auto n = static_cast<std::size_t>(comm_->size());
  target_error_.assign(n, MPI_SUCCESS);
  touched_.assign(n, false);
  held_.resize(n);
  unacked_.assign(n, false);
}

int Origin::check_range(int target, MPI_Aint disp, const TypeMap& tm) const {
  if (dynamic_) return MPI_SUCCESS;  // addresses: only the target knows what is attached
  // The blocks' hull (the type's true bounds): the target checks each block.
  const TargetInfo& ti = targets_[static_cast<std::size_t>(target)];
  const TypeWide at = static_cast<TypeWide>(disp) * ti.disp_unit;
  if (at + tm.lo() < 0 || at + tm.hi() > static_cast<TypeWide>(ti.size)) return MPI_ERR_RMA_RANGE;
  return MPI_SUCCESS;
}

int Origin::issue(int target, RequestHeader h, const TypeMap* tm, const void* data, std::uint64_t n,
                  std::unique_ptr<Pending> p, std::uint64_t reply_bytes) {
  const std::size_t nodes = tm != nullptr ? tm->nodes().size() : 0;
  if (nodes > kMaxTypeNodes || n > kMaxData || reply_bytes > kMaxData || h.bytes > kMaxData)
    return MPI_ERR_COUNT;
  const auto t = static_cast<std::size_t>(target);
  p->target = target;
  h.nnodes = static_cast<std::uint32_t>(nodes);
  h.data_len = n;
  // Lazy lock: a lock not sent yet travels on the epoch's first operation.
  std::unique_ptr<Pending>& held = held_[t];
  if (held && held->kind == Kind::kLock && is_data(h.kind)) {
    h.flags |= static_cast<std::uint8_t>(kLockFirst | (held->flags & kExclusive));
    held.reset();
  }
  send_held(target, true);  // what came before goes first (one origin's order)
  p->kind = h.kind;
  p->flags = h.flags;
  std::vector<std::byte>& m = p->msg;
  m.reserve(sizeof h + nodes * sizeof(TypeNode) + n);
  m.resize(sizeof h + nodes * sizeof(TypeNode));
  std::memcpy(m.data(), &h, sizeof h);
  if (nodes > 0) std::memcpy(m.data() + sizeof h, tm->nodes().data(), nodes * sizeof(TypeNode));
  if (n > 0)
    m.insert(m.end(), static_cast<const std::byte*>(data), static_cast<const std::byte*>(data) + n);
  touched_[t] = true;
  const bool answered = p->st || reply_bytes > 0 || p->rbuf != nullptr;
  if (answered) expect_reply(*p, reply_bytes);
  // A large operation goes at once: holding it would leave the link idle
  // while the application prepares the next one, to save one small message.
  const bool small = m.size() <= kHoldMax;
  if ((is_data(h.kind) && small) || (h.kind == Kind::kLock && !answered)) {
    // Held until the next request to this target, a synchronisation (which
    // it then carries: flush, unlock, complete) or the next progress round.
    held = std::move(p);
    return MPI_SUCCESS;
  }
  send(std::move(p));
  return MPI_SUCCESS;
}

void Origin::expect_reply(Pending& p, std::uint64_t reply_bytes) {
  RequestHeader h;
  std::memcpy(&h, p.msg.data(), sizeof h);
  h.reply_tag = kTagReplyBase + static_cast<int>(next_reply_++ % kReplyTags);
  std::memcpy(p.msg.data(), &h, sizeof h);
  p.reply.resize(sizeof(ReplyHeader) + reply_bytes);
  p.answered = false;
  // Posted before the request leaves, so the reply always finds it.
  engine_.irecv(comm_, Traffic::kPointToPoint, p.reply.data(), static_cast<int>(p.reply.size()),
                MPI_BYTE, p.target, h.reply_tag, &p.recv);
}

void Origin::send(std::unique_ptr<Pending> p) {
  RequestHeader h;  // flags a synchronisation may have added while it was held
  std::memcpy(&h, p->msg.data(), sizeof h);
  h.flags = p->flags;
  std::memcpy(p->msg.data(), &h, sizeof h);
  // Until a reply comes for a later request, this one's completion is unknown.
  unacked_[static_cast<std::size_t>(p->target)] = !p->recv;
  engine_.isend(comm_, Traffic::kPointToPoint, p->msg.data(), static_cast<int>(p->msg.size()),
                MPI_BYTE, p->target, kTagRequest, &p->send, SendMode::kStandard);
  pending_.push_back(std::move(p));
}

void Origin::send_held(int target, bool locks) {
  const int lo = target < 0 ? 0 : target, hi = target < 0 ? comm_->size() : target + 1;
  for (int t = lo; t < hi; ++t) {
    std::unique_ptr<Pending>& held = held_[static_cast<std::size_t>(t)];
    if (held && (locks || held->kind != Kind::kLock)) send(std::move(held));
  }
}

int Origin::put(const void* obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                int tcount, MPI_Datatype ttype, std::shared_ptr<OpState> st) {
  TypeMap tm;
  if (int rc = tm.describe(ttype, tcount)) return rc;
  const std::uint64_t tbytes = tm.bytes();
  if (type_bytes(ocount, otype) != tbytes) return MPI_ERR_TYPE;  // signatures differ
  if (tbytes == 0) return done_at_once(st);
  if (int rc = check_range(target, disp, tm)) return rc;
  std::vector<std::byte> keep;
  const std::byte* data = nullptr;
  if (int rc = origin_bytes(obuf, ocount, otype, &keep, &data)) return rc;
  RequestHeader h;
  h.kind = Kind::kPut;
  h.disp = disp;
  h.bytes = tbytes;
  if (tbytes > kPieceData)
    return issue_pieces(target, h, tm, data, 1, kPieceData, std::move(st), nullptr);
  auto p = std::make_unique<Pending>();
  p->st = std::move(st);
  return issue(target, h, &tm, data, tbytes, std::move(p), 0);
}

int Origin::get(void* obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint disp, int tcount,
                MPI_Datatype ttype, std::shared_ptr<OpState> st) {
  TypeMap tm;
  if (int rc = tm.describe(ttype, tcount)) return rc;
  const std::uint64_t tbytes = tm.bytes();
  if (type_bytes(ocount, otype) != tbytes) return MPI_ERR_TYPE;
  if (tbytes == 0) return done_at_once(st);
  if (int rc = check_range(target, disp, tm)) return rc;
  RequestHeader h;
  h.kind = Kind::kGet;
  h.disp = disp;
  h.bytes = tbytes;
  if (const std::uint64_t piece = piece_for(target, true); tbytes > piece) {
    std::shared_ptr<Gather> gather;
    if (int rc = gather_for(obuf, ocount, otype, tbytes, &gather)) return rc;
    return issue_pieces(target, h, tm, nullptr, 1, piece, std::move(st), std::move(gather));
  }
  auto p = std::make_unique<Pending>();
  p->st = std::move(st);
  p->rbuf = obuf;
  p->rcount = ocount;
  p->rtype = otype;
  return issue(target, h, &tm, nullptr, 0, std::move(p), tbytes);
}

int Origin::get_accumulate(const void* obuf, int ocount, MPI_Datatype otype, void* rbuf, int rcount,
                           MPI_Datatype rtype, int target, MPI_Aint disp, int tcount,
                           MPI_Datatype ttype, int opi, std::shared_ptr<OpState> st) {
  const bool fetch = rtype != MPI_DATATYPE_NULL;
  const bool no_op = opi == no_op_index();
  if (no_op && !fetch) return MPI_ERR_OP;  // MPI_Accumulate's: Window::accumulate refuses it
  MPI_Datatype elem = MPI_DATATYPE_NULL;
  if (int rc = basic_element(ttype, &elem)) return rc;
  const int ei = elem_index(elem);
  if (ei < 0) return MPI_ERR_TYPE;
  if (!no_op && opi != replace_index()) {
    // Native MPI's checks (Open MPI's MPI_Accumulate): one predefined type
    // under both sides, and the op defined on it. The target checks the pair
    // again (a forged request), but only the origin can report it here.
    MPI_Datatype oelem = MPI_DATATYPE_NULL;
    if (basic_element(otype, &oelem) != MPI_SUCCESS || oelem != elem) return MPI_ERR_ARG;
    if (!op_defined(ei, opi)) return MPI_ERR_OP;
  }
  TypeMap tm;
  if (int rc = tm.describe(ttype, tcount)) return rc;
  const std::uint64_t tbytes = tm.bytes();
  if (!no_op && type_bytes(ocount, otype) != tbytes) return MPI_ERR_TYPE;
  if (fetch && type_bytes(rcount, rtype) != tbytes) return MPI_ERR_TYPE;
  if (tbytes == 0) return done_at_once(st);
  if (int rc = check_range(target, disp, tm)) return rc;
  std::vector<std::byte> keep;
  const std::byte* data = nullptr;
  if (!no_op)
    if (int rc = origin_bytes(obuf, ocount, otype, &keep, &data)) return rc;
  RequestHeader h;
  h.kind = fetch ? Kind::kGetAcc : Kind::kAcc;
  h.op = static_cast<std::uint8_t>(opi);
  h.elem = static_cast<std::int16_t>(ei);
  h.disp = disp;
  h.bytes = tbytes;
  if (const std::uint64_t piece = piece_for(target, fetch); tbytes > piece) {
    std::shared_ptr<Gather> gather;
    if (fetch)
      if (int rc = gather_for(rbuf, rcount, rtype, tbytes, &gather)) return rc;
    const auto unit = static_cast<std::uint64_t>(type_size(elem));
    return issue_pieces(target, h, tm, data, unit, piece, std::move(st), std::move(gather));
  }
  auto p = std::make_unique<Pending>();
  p->st = std::move(st);
  if (fetch) {
    p->rbuf = rbuf;
    p->rcount = rcount;
    p->rtype = rtype;
  }
  return issue(target, h, &tm, data, no_op ? 0 : tbytes, std::move(p), fetch ? tbytes : 0);
}

int Origin::compare_and_swap(const void* obuf, const void* cbuf, void* rbuf, MPI_Datatype type,
                             int target, MPI_Aint disp) {
  const int ei = elem_index(type);
  if (ei < 0) return MPI_ERR_TYPE;
  TypeMap tm;
  if (int rc = tm.describe(type, 1)) return rc;
  // MPI-3.1 11.3.4: integer, logical and byte types only, one block each
  // (a pair type with a hole is not one).
  if (tm.nodes().size() != 1 || tm.nodes()[0].kind != NodeKind::kLeaf) return MPI_ERR_TYPE;
  const std::uint64_t tbytes = tm.bytes();
  if (int rc = check_range(target, disp, tm)) return rc;
  std::vector<std::byte> data;
  append(&data, cbuf, 1, type);
  append(&data, obuf, 1, type);
  RequestHeader h;
  h.kind = Kind::kCas;
  h.elem = static_cast<std::int16_t>(ei);
  h.disp = disp;
  h.bytes = tbytes;
  auto p = std::make_unique<Pending>();
  p->rbuf = rbuf;
  p->rcount = 1;
  p->rtype = type;
  return issue(target, h, &tm, data.data(), data.size(), std::move(p), tbytes);
}

int Origin::gather_for(void* buf, int count, MPI_Datatype type, std::uint64_t bytes,
                       std::shared_ptr<Gather>* out) {
  Layout l;
  if (int rc = describe(buf, count, type, &l)) return rc;
  auto g = std::make_shared<Gather>();
  g->bytes = bytes;
  if (l.contiguous) {
    g->dest = l.base;
  } else {
    g->staging.resize(bytes);
    g->dest = g->staging.data();
    g->rbuf = buf;
    g->rcount = count;
    g->rtype = type;
  }
  *out = std::move(g);
  return MPI_SUCCESS;
}

std::uint64_t Origin::piece_for(int target, bool fetch) const {
  if (!fetch) return kPieceData;
  const std::uint64_t half = targets_[static_cast<std::size_t>(target)].reply_bytes / 2;
  return std::clamp<std::uint64_t>(half, 1, kPieceData);
}

int Origin::issue_pieces(int target, const RequestHeader& h, const TypeMap& tm,
                         const std::byte* data, std::uint64_t unit, std::uint64_t piece,
                         std::shared_ptr<OpState> st, std::shared_ptr<Gather> gather) {
  // Pieces are ranges of the packed data: each request carries the whole
  // (small) type description and the range, which the target walks.
  const std::uint64_t total = h.bytes, most = std::max(piece - piece % unit, unit);
  const std::uint64_t pieces = (total + most - 1) / most;
  if (st) st->parts = static_cast<int>(pieces);
  if (gather) gather->left = pieces;
  // In order, each after the one before (issue() sends what it held first):
  // one origin's operations to one target stay in order, and a lock not sent
  // yet rides on the first piece.
  for (std::uint64_t at = 0; at < total; at += most) {
    RequestHeader ph = h;
    ph.first = at;
    ph.bytes = std::min(most, total - at);
    auto p = std::make_unique<Pending>();
    p->st = st;
    p->gather = gather;
    p->gather_at = at;
    const std::uint64_t n = data != nullptr ? ph.bytes : 0;
    if (int rc = issue(target, ph, &tm, data != nullptr ? data + at : nullptr, n, std::move(p),
                       gather ? ph.bytes : 0))
      return rc;  // not reached: every piece is within the limits
  }
  return MPI_SUCCESS;
}

int Origin::done_at_once(const std::shared_ptr<OpState>& st) {
  if (st) st->done = true;
  return MPI_SUCCESS;
}

// A synchronisation request that the target answers once everything this
// origin sent before it is applied.
std::shared_ptr<OpState> Origin::request_reply(int target, Kind kind, std::uint8_t flags) {
  RequestHeader h;
  h.kind = kind;
  h.flags = flags;
  auto p = std::make_unique<Pending>();
  auto st = std::make_shared<OpState>();
  p->st = st;
  if (int rc = issue(target, h, nullptr, nullptr, 0, std::move(p), 0)) {
    st->done = true;
    st->error = rc;
  }
  return st;
}

void Origin::notify(int target, int tag) {
  auto p = std::make_unique<Pending>();
  p->target = target;
  engine_.isend(comm_, Traffic::kPointToPoint, nullptr, 0, MPI_BYTE, target, tag, &p->send,
                SendMode::kStandard);
  pending_.push_back(std::move(p));
}

void Origin::send_only(int target, Kind kind, std::uint8_t flags) {
  RequestHeader h;
  h.kind = kind;
  h.flags = flags;
  issue(target, h, nullptr, nullptr, 0, std::make_unique<Pending>(), 0);
}

void Origin::finish(Pending& p) {
  if (!p.answered) return;
  int err = p.send && p.send->error != MPI_SUCCESS ? p.send->error : MPI_SUCCESS;
  if (p.recv) {
    if (err == MPI_SUCCESS) err = p.recv->error;
    ReplyHeader rh;
    const std::uint64_t got = p.recv->status_bytes;
    if (err == MPI_SUCCESS && got >= sizeof rh) {
      std::memcpy(&rh, p.reply.data(), sizeof rh);
      if (rh.magic == kMagic && rh.prior != MPI_SUCCESS) {
        int& te = target_error_[static_cast<std::size_t>(p.target)];
        if (te == MPI_SUCCESS) te = rh.prior;  // an earlier request's, first
      }
      if (rh.magic != kMagic || rh.data_len > got - sizeof rh)
        err = MPI_ERR_OTHER;
      else if (rh.error != MPI_SUCCESS)
        err = rh.error;
      else if (p.gather && rh.data_len > 0)
        err = rh.data_len <= p.gather->bytes - p.gather_at
                  ? (std::memcpy(p.gather->dest + p.gather_at, p.reply.data() + sizeof rh,
                                 rh.data_len),
                     MPI_SUCCESS)
                  : MPI_ERR_OTHER;
      else if (p.rbuf != nullptr && rh.data_len > 0)
        err = unpack(p.reply.data() + sizeof rh, rh.data_len, p.rbuf, p.rcount, p.rtype,
                     MPI_COMM_SELF);
    } else if (err == MPI_SUCCESS) {
      err = MPI_ERR_OTHER;
    }
  }
  if (p.gather && --p.gather->left == 0 && p.gather->rbuf != nullptr && err == MPI_SUCCESS)
    err = unpack(p.gather->staging.data(), p.gather->bytes, p.gather->rbuf, p.gather->rcount,
                 p.gather->rtype, MPI_COMM_SELF);
  if (err != MPI_SUCCESS) {
    int& te = target_error_[static_cast<std::size_t>(p.target)];
    if (te == MPI_SUCCESS) te = err;
  }
  if (p.st) {
    if (p.st->error == MPI_SUCCESS) p.st->error = err;
    if (--p.st->parts <= 0) p.st->done = true;
  }
}

bool Origin::reap() {
  // Operations held for a synchronisation to carry go now: the application
  // is waiting for something else, or has been away from MMPI a while. A
  // lock alone waits for its first operation (lazy lock).
  send_held(-1, false);
  for (auto it = pending_.begin(); it != pending_.end();) {
    Pending& p = **it;
    if (!p.sent && engine_.completed(*p.send)) p.sent = true;
    if (!p.answered && engine_.completed(*p.recv)) p.answered = true;
    if (p.sent && p.answered) {
      finish(p);
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
  return !pending_.empty() || std::any_of(held_.begin(), held_.end(), [](const auto& h) {
    return h && h->kind != Kind::kLock;
  });
}

int Origin::wait_for(const std::function<bool()>& done) {
  // Nothing left to wait for (a flush with nothing outstanding: ARMCI-MPI's
  // barrier flushes every window, mostly idle ones; a local flush after
  // eager sends): no progress round, which runs every window's round and
  // cost NWChem 0.55 ms per idle MPI_Win_flush_all across the clusters.
  reap();
  if (done()) return MPI_SUCCESS;
  // wait_until only sleeps and spins: the predicate progresses (as test() does).
  engine_.wait_until(
      [&] {
        engine_.progress();
        reap();
        return done();
      },
      true);
  return MPI_SUCCESS;
}

int Origin::take_error(int target) {
  return std::exchange(target_error_[static_cast<std::size_t>(target)], MPI_SUCCESS);
}

bool Origin::idle_to(int target) const {
  for (const auto& p : pending_)
    if (target < 0 || p->target == target) return false;
  return true;
}

int Origin::flush_targets(const std::vector<int>& targets, Kind kind) {
  std::vector<std::shared_ptr<OpState>> sts;
  for (int t : targets) {
    std::unique_ptr<Pending>& held = held_[static_cast<std::size_t>(t)];
    if (held && held->kind == Kind::kLock) {
      // A lock never sent: nothing to undo, nothing to complete.
      if (kind == Kind::kUnlock) held.reset();
      if (kind != Kind::kComplete) continue;
    }
    if (held) {
      // The last operation carries the synchronisation; its reply (asked
      // for now if it expected none) answers for everything before it.
      if (kind == Kind::kUnlock) held->flags |= kUnlockAfter;
      if (kind == Kind::kComplete) held->flags |= kCompleteAfter;
      if (!held->recv) {
        auto st = std::make_shared<OpState>();
        held->st = st;
        expect_reply(*held, 0);
        sts.push_back(std::move(st));
      }
      send(std::move(held));  // a fetching operation's reply: idle_to() waits for it
      continue;
    }
    // A flush after requests that all expect replies (gets, fetching
    // operations) waits for those replies alone.
    if (kind == Kind::kFlush && !unacked_[static_cast<std::size_t>(t)]) continue;
    sts.push_back(request_reply(t, kind, 0));
  }
  wait_for([&] {
    for (const auto& s : sts)
      if (!s->done) return false;
    for (int t : targets)
      if (!idle_to(t)) return false;
    return true;
  });
  int rc = MPI_SUCCESS;
  for (const auto& s : sts)
    if (rc == MPI_SUCCESS) rc = s->error;
  for (int t : targets) {
    const int e = take_error(t);
    if (rc == MPI_SUCCESS) rc = e;
    touched_[static_cast<std::size_t>(t)] = false;
  }
  return rc;
}

int Origin::flush_local(int target) {
  send_held(target, false);
  wait_for([&] { return idle_to(target); });
  if (target >= 0) return take_error(target);
  int rc = MPI_SUCCESS;
  for (int t = 0; t < comm_->size(); ++t)
    if (const int e = take_error(t); rc == MPI_SUCCESS) rc = e;
  return rc;
}

}  // namespace zipper::client::rma
