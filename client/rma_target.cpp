// The target's half of a window (rma_target.h). Requests are applied one at
// a time by this process, so accumulates from any origins (both clusters)
// are atomic per element and, from one origin, in its order (MPI's default
// accumulate ordering).
#include "rma_target.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>

#include "rma_progress.h"
#include "rma_types.h"

namespace zipper::client::rma {

namespace {
// Incoming requests larger than this are refused unread (a hostile size).
constexpr std::uint64_t kMaxMessage =
    sizeof(RequestHeader) + kMaxData + std::uint64_t{kMaxTypeNodes} * sizeof(TypeNode);
// Accumulates reduce at most this much at a time (an aligned copy of the
// origin's data: Open MPI's op kernels read typed elements).
constexpr std::uint64_t kReduceChunk = std::uint64_t{64} << 20;
}  // namespace

Target::Target(Engine& engine, CommPtr comm, Memory& memory, std::uint64_t reply_bytes)
    : engine_(engine),
      comm_(std::move(comm)),
      memory_(memory),
      queued_(static_cast<std::size_t>(comm_->size())),
      locks_(static_cast<std::size_t>(comm_->size())),
      origin_error_(static_cast<std::size_t>(comm_->size()), MPI_SUCCESS),
      completes_(static_cast<std::size_t>(comm_->size()), 0),
      reply_bytes_(reply_bytes),
      replying_(static_cast<std::size_t>(comm_->size()), 0) {}

void Target::reply(int origin, std::int32_t tag, int error, const void* data, std::uint64_t n,
                   int prior) {
  if (tag == 0) return;
  std::vector<std::byte> m(sizeof(ReplyHeader) + n);
  if (n > 0) std::memcpy(m.data() + sizeof(ReplyHeader), data, n);
  ReplyHeader rh;
  rh.error = error;
  rh.prior = prior;
  rh.data_len = n;
  std::memcpy(m.data(), &rh, sizeof rh);
  send_reply(origin, tag, std::move(m));
}

void Target::send_reply(int origin, std::int32_t tag, std::vector<std::byte> m) {
  RequestPtr r;
  engine_.isend(comm_, Traffic::kPointToPoint, m.data(), static_cast<int>(m.size()), MPI_BYTE,
                origin, tag, &r, SendMode::kStandard);
  replying_[static_cast<std::size_t>(origin)] += m.size() - sizeof(ReplyHeader);
  replies_.push_back(Reply{std::move(r), std::move(m), origin});  // the buffer does not move
}

void Target::reap_replies() {
  for (auto it = replies_.begin(); it != replies_.end();) {
    if (!engine_.completed(*it->send)) {
      ++it;
      continue;
    }
    replying_[static_cast<std::size_t>(it->origin)] -= it->msg.size() - sizeof(ReplyHeader);
    it = replies_.erase(it);
  }
}

template <class Fn>
bool Target::each_block(const RequestHeader& h, const TypeMap& tm, Fn&& fn) const {
  std::uint64_t pos = 0;
  return tm.walk(h.first, h.bytes, [&](TypeWide off, std::uint64_t len) {
    if (off < INT64_MIN || off > INT64_MAX) return false;
    std::byte* at = memory_.resolve(h.disp, Block{static_cast<std::int64_t>(off), len});
    if (at == nullptr) return false;
    fn(at, len, pos);
    pos += len;
    return true;
  });
}

void Target::refuse(Incoming& in, const char* why, int error) {
  ++refused_;
  if (refused_ <= 5) {
    std::fprintf(stderr,
                 "mmpi[window rank %d]: RMA request from rank %d refused: %s (%llu so far)\n",
                 comm_->rank(), in.source, why, static_cast<unsigned long long>(refused_));
    std::fflush(stderr);
  }
  int& oe = origin_error_[static_cast<std::size_t>(in.source)];
  if (oe == MPI_SUCCESS) oe = error;
  // Answer when the header names a plausible reply tag, so that an honest
  // origin waiting for it fails instead of hanging.
  if (in.msg.size() >= sizeof(RequestHeader)) {
    RequestHeader h;
    std::memcpy(&h, in.msg.data(), sizeof h);
    if (h.reply_tag >= kTagReplyBase && h.reply_tag < kTagReplyBase + kReplyTags)
      reply(in.source, h.reply_tag, error, nullptr, 0);
  }
}

// target op= origin for an element type with a hole: both sides unpacked
// into element layout, reduced there, packed back into the blocks.
int Target::accumulate_holed(const RequestHeader& h, const TypeMap& tm, const std::byte* data,
                             MPI_Datatype elem, int esize, MPI_Aint extent, MPI_Op op) const {
  const std::uint64_t total = h.bytes;
  if (total > INT_MAX) return MPI_ERR_COUNT;  // the origin sends at most kPieceData
  const int n = static_cast<int>(total / static_cast<std::uint64_t>(esize));
  const std::size_t words =
      (static_cast<std::size_t>(n) * static_cast<std::size_t>(extent) + sizeof(std::max_align_t)) /
      sizeof(std::max_align_t);
  std::vector<std::max_align_t> a(words), b(words);
  std::vector<std::byte> packed(total);
  each_block(h, tm, [&](std::byte* at, std::uint64_t len, std::uint64_t pos) {
    std::memcpy(packed.data() + pos, at, len);
  });
  const int bytes = static_cast<int>(total);
  int p = 0;
  if (MPI_Unpack(packed.data(), bytes, &p, a.data(), n, elem, MPI_COMM_SELF) != MPI_SUCCESS)
    return MPI_ERR_TYPE;
  p = 0;
  if (MPI_Unpack(data, bytes, &p, b.data(), n, elem, MPI_COMM_SELF) != MPI_SUCCESS)
    return MPI_ERR_TYPE;
  if (MPI_Reduce_local(b.data(), a.data(), n, elem, op) != MPI_SUCCESS) return MPI_ERR_OP;
  p = 0;
  if (MPI_Pack(a.data(), n, elem, packed.data(), bytes, &p, MPI_COMM_SELF) != MPI_SUCCESS)
    return MPI_ERR_TYPE;
  each_block(h, tm, [&](std::byte* at, std::uint64_t len, std::uint64_t pos) {
    std::memcpy(at, packed.data() + pos, len);
  });
  return MPI_SUCCESS;
}

void Target::release(std::size_t o) {
  if (!locks_.release(o) && origin_error_[o] == MPI_SUCCESS) origin_error_[o] = MPI_ERR_RMA_SYNC;
}

bool Target::apply(Incoming& in) {
  // A data operation may carry the lock before it and the unlock or PSCW
  // complete after it (rma_wire.h): the lock is taken before anything is
  // applied (or the request waits, whole), the rest after the operation,
  // refused or not, so that a lock is never left behind.
  RequestHeader h;
  const bool framed = in.msg.size() >= sizeof h;
  if (framed) std::memcpy(&h, in.msg.data(), sizeof h);
  const bool carries = framed && h.magic == kMagic && is_data(h.kind);
  const auto o = static_cast<std::size_t>(in.source);
  // Fetched data for this origin stays within the bound: wait (before the
  // lock it may carry is taken) while earlier replies are in flight.
  const bool fetches = carries && (h.kind == Kind::kGet || h.kind == Kind::kGetAcc);
  if (fetches && h.reply_tag != 0 && replying_[o] > 0 && replying_[o] + h.bytes > reply_bytes_)
    return false;
  if (carries && (h.flags & kLockFirst) && !locks_.grant(o, (h.flags & kExclusive) != 0))
    return false;
  // A lock alone (on oneself, lock_all's own, or sent before a non-data
  // request) that cannot be granted yet waits whole too: dropping it would
  // leave its origin waiting for the grant forever.
  if (!apply_op(in)) return false;
  if (carries && (h.flags & kUnlockAfter)) release(o);
  if (carries && (h.flags & kCompleteAfter)) ++completes_[o];
  return true;
}

bool Target::apply_op(Incoming& in) {
  const std::vector<std::byte>& msg = in.msg;
  const auto o = static_cast<std::size_t>(in.source);
  RequestHeader h;
  if (msg.size() < sizeof h) return refuse(in, "shorter than a header"), true;
  std::memcpy(&h, msg.data(), sizeof h);
  if (h.magic != kMagic) return refuse(in, "bad magic"), true;
  if (h.reply_tag != 0 &&
      (h.reply_tag < kTagReplyBase || h.reply_tag >= kTagReplyBase + kReplyTags))
    return refuse(in, "bad reply tag"), true;
  if (h.nnodes > kMaxTypeNodes || h.data_len > kMaxData || h.bytes > kMaxData)
    return refuse(in, "too large"), true;
  // Before any walk: a fetching request's reply and work stay within the bound.
  if ((h.kind == Kind::kGet || h.kind == Kind::kGetAcc) && h.bytes > reply_bytes_)
    return refuse(in, "reply larger than the target's bound", MPI_ERR_COUNT), true;
  const std::uint64_t desc = std::uint64_t{h.nnodes} * sizeof(TypeNode);
  const std::uint64_t need = sizeof h + desc + h.data_len;
  if (need != msg.size()) return refuse(in, "length does not add up"), true;
  const std::byte* data = msg.data() + sizeof h + desc;

  auto answer = [&](const void* d, std::uint64_t n) {
    reply(in.source, h.reply_tag, std::exchange(origin_error_[o], MPI_SUCCESS), d, n);
  };
  switch (h.kind) {
    case Kind::kLock:
      if (!locks_.grant(o, (h.flags & kExclusive) != 0)) return false;
      reply(in.source, h.reply_tag, MPI_SUCCESS, nullptr, 0);
      return true;
    case Kind::kUnlock:
      release(o);
      answer(nullptr, 0);
      return true;
    case Kind::kComplete:
      ++completes_[o];
      answer(nullptr, 0);
      return true;
    case Kind::kFlush:
      answer(nullptr, 0);
      return true;
    case Kind::kPut:
    case Kind::kGet:
    case Kind::kAcc:
    case Kind::kGetAcc:
    case Kind::kCas:
      break;
    default:
      return refuse(in, "unknown kind"), true;
  }

  // Data operations: the target datatype's description, walked over this
  // request's range; every block inside the window, or nothing is touched.
  TypeMap tm;
  if (const char* why = tm.parse(msg.data() + sizeof h, h.nnodes)) return refuse(in, why), true;
  const std::uint64_t total = h.bytes;
  if (h.first > tm.bytes() || total > tm.bytes() - h.first)
    return refuse(in, "range outside the datatype"), true;
  int esize = 1;
  MPI_Aint eextent = 1;
  bool holes = false;
  MPI_Datatype elem = MPI_BYTE;
  MPI_Op op = MPI_OP_NULL;
  if (h.kind == Kind::kAcc || h.kind == Kind::kGetAcc || h.kind == Kind::kCas) {
    elem = elem_type(h.elem);
    if (elem == MPI_DATATYPE_NULL || MPI_Type_size(elem, &esize) != MPI_SUCCESS || esize <= 0)
      return refuse(in, "bad element type"), true;
    MPI_Aint elb = 0;
    MPI_Type_get_extent(elem, &elb, &eextent);
    // Pair types with a hole (MPI_SHORT_INT: 6 bytes of data in 8) come as
    // several blocks per element; the others as whole elements per block.
    holes = eextent != esize;
    if (total % static_cast<std::uint64_t>(esize) != 0 ||
        h.first % static_cast<std::uint64_t>(esize) != 0)
      return refuse(in, "not a whole number of elements"), true;
  }
  bool splits = false;
  std::uint64_t nblocks = 0;
  const bool inside = each_block(h, tm, [&](std::byte*, std::uint64_t len, std::uint64_t) {
    if (!holes && len % static_cast<std::uint64_t>(esize) != 0) splits = true;
    ++nblocks;
  });
  if (!inside) return refuse(in, "outside the window"), true;
  if (splits) return refuse(in, "block splits an element"), true;
  if (h.kind == Kind::kAcc || h.kind == Kind::kGetAcc) {
    op = op_of(h.op);
    if (op == MPI_OP_NULL) return refuse(in, "bad op"), true;
    // Before any reduction: Open MPI's MPI_Reduce_local would raise a pair
    // it rejects on MPI_COMM_WORLD's error handler (fatal), so a remote
    // request could end this process. Refused and counted; no handler here.
    if (!op_defined(h.elem, h.op))
      return refuse(in, "op not defined on the element type", MPI_ERR_OP), true;
  }
  const bool no_op = h.op == no_op_index() && op != MPI_OP_NULL;
  // An honest origin never sends it (MPI_Accumulate refuses MPI_NO_OP).
  if (h.kind == Kind::kAcc && no_op)
    return refuse(in, "MPI_NO_OP in an accumulate", MPI_ERR_OP), true;
  switch (h.kind) {
    case Kind::kPut:
      if (h.data_len != total) return refuse(in, "data length"), true;
      break;
    case Kind::kGet:
      if (h.data_len != 0) return refuse(in, "data length"), true;
      break;
    case Kind::kAcc:
    case Kind::kGetAcc:
      if (h.data_len != (no_op ? 0 : total)) return refuse(in, "data length"), true;
      break;
    case Kind::kCas:
      // One element in one block: compared and written in place.
      if (total != static_cast<std::uint64_t>(esize) || h.data_len != 2 * total || nblocks != 1)
        return refuse(in, "compare-and-swap size"), true;
      break;
    default:
      break;
  }

  // Fetch first (get, get-accumulate, compare-and-swap answer the old bytes),
  // straight into the reply message.
  const bool fetch = h.kind == Kind::kGet || h.kind == Kind::kGetAcc || h.kind == Kind::kCas;
  std::vector<std::byte> rmsg;
  std::byte* old = nullptr;
  if (fetch && h.reply_tag != 0) {
    rmsg.resize(sizeof(ReplyHeader) + total);
    old = rmsg.data() + sizeof(ReplyHeader);
    each_block(h, tm, [&](std::byte* at, std::uint64_t len, std::uint64_t pos) {
      std::memcpy(old + pos, at, len);
    });
  }
  int err = MPI_SUCCESS;
  if (h.kind == Kind::kCas) {
    std::byte* at = nullptr;  // one element: one block
    each_block(h, tm, [&](std::byte* a, std::uint64_t, std::uint64_t) { at = a; });
    if (std::memcmp(at, data, total) == 0) std::memcpy(at, data + total, total);
  } else if (h.kind == Kind::kPut || op == MPI_REPLACE) {
    each_block(h, tm, [&](std::byte* at, std::uint64_t len, std::uint64_t pos) {
      std::memmove(at, data + pos, len);
    });
  } else if ((h.kind == Kind::kAcc || h.kind == Kind::kGetAcc) && !no_op && holes) {
    err = accumulate_holed(h, tm, data, elem, esize, eextent, op);
  } else if ((h.kind == Kind::kAcc || h.kind == Kind::kGetAcc) && !no_op) {
    std::vector<std::max_align_t> aligned;  // Open MPI's op kernels read typed elements
    const std::uint64_t es = static_cast<std::uint64_t>(esize);
    const std::uint64_t chunk = kReduceChunk - kReduceChunk % es;
    each_block(h, tm, [&](std::byte* at, std::uint64_t len, std::uint64_t pos) {
      for (std::uint64_t done = 0; done < len && err == MPI_SUCCESS; done += chunk) {
        const std::uint64_t n = std::min(chunk, len - done);
        aligned.resize((n + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t));
        std::memcpy(aligned.data(), data + pos + done, n);
        // MPI_Reduce_local: inoutbuf = inbuf op inoutbuf, here target op= origin.
        err = MPI_Reduce_local(aligned.data(), at + done, static_cast<int>(n / es), elem, op);
      }
    });
    if (err != MPI_SUCCESS) err = MPI_ERR_OP;
  }
  if (h.reply_tag == 0) {
    if (err != MPI_SUCCESS && origin_error_[o] == MPI_SUCCESS) origin_error_[o] = err;
    return true;
  }
  // The reply answers for the requests before this one too (prior).
  const int prior = std::exchange(origin_error_[o], MPI_SUCCESS);
  if (fetch && err == MPI_SUCCESS) {
    ReplyHeader rh;
    rh.error = err;
    rh.prior = prior;
    rh.data_len = total;
    std::memcpy(rmsg.data(), &rh, sizeof rh);
    send_reply(in.source, h.reply_tag, std::move(rmsg));
  } else {
    reply(in.source, h.reply_tag, err, nullptr, 0, prior);
  }
  return true;
}

bool Target::serve() {
  // Take every request message that arrived, in arrival order.
  for (;;) {
    std::unique_ptr<MatchedMessage> m;
    MPI_Status st;
    if (engine_.improbe(comm_, MPI_ANY_SOURCE, kTagRequest, &m, &st, false) != MPI_SUCCESS || !m)
      break;
    MPI_Count n = 0;
    MPI_Get_elements_x(&st, MPI_BYTE, &n);
    auto in = std::make_unique<Incoming>();
    in->source = st.MPI_SOURCE;
    if (n < 0 || static_cast<std::uint64_t>(n) > kMaxMessage) n = 0;  // read nothing: refused
    in->msg.resize(static_cast<std::size_t>(n));
    engine_.mrecv(std::move(m), in->msg.data(), static_cast<int>(n), MPI_BYTE, &in->recv);
    arriving_.push_back(std::move(in));
  }
  while (!arriving_.empty() && engine_.completed(*arriving_.front()->recv)) {
    auto in = std::move(arriving_.front());
    arriving_.pop_front();
    if (in->source < 0 || in->source >= comm_->size()) continue;
    if (in->recv->error != MPI_SUCCESS) {
      in->msg.clear();  // truncated: too large to read
      refuse(*in, "too large");
      continue;
    }
    queued_[static_cast<std::size_t>(in->source)].push_back(std::move(in));
  }
  // Apply each origin's requests in order; a lock that cannot be granted yet,
  // or a fetch past the bound, holds back only its own origin. An unlock may
  // free others: go round again.
  reap_replies();
  bool moved = true, waiting = false, applied = false;
  while (moved) {
    moved = false;
    waiting = false;
    for (auto& q : queued_) {
      while (!q.empty()) {
        if (!apply(*q.front())) {
          waiting = true;
          break;
        }
        q.pop_front();
        moved = applied = true;
        served.fetch_add(1, std::memory_order_relaxed);
      }
    }
  }
  reap_replies();
  const auto now = std::chrono::steady_clock::now();
  if (applied) last_applied_ = now;
  return !arriving_.empty() || !replies_.empty() || waiting || now - last_applied_ < kStayAwake;
}

}  // namespace zipper::client::rma
