// The active messages of one-sided communication. Every RMA
// operation travels as a message on the window's private communicator (a
// duplicate of the user's, so nothing the application sends can match it),
// through libmmpi's engine like any other message: to a rank of this cluster
// over Open MPI, across through zipperd with the delivery layer's ordering,
// acknowledgement and duplicate drop (peer_transport.h). The target applies
// it (rma_target.cpp), so accumulates from both clusters to one target are
// applied one at a time, by one process, in each origin's order.
//
// Request (origin -> target, tag kTagRequest):
//   RequestHeader | nnodes x TypeNode (the target datatype, rma_typemap.h)
//   | data_len bytes
// The request covers packed bytes [first, first + bytes) of the target
// datatype (an operation of more than kPieceData bytes is several requests).
// Reply (target -> origin, tag RequestHeader::reply_tag, when asked for):
//   ReplyHeader | data_len bytes
// The target applies one origin's requests in order, so a reply also says
// that everything the origin sent before that request is applied.
// Post notice (PSCW, target -> origin, tag kTagPost): one int, the epoch's
// sequence number.
// All integers in host order: both clusters run the same architecture
// (datatype.h makes the same assumption).
#pragma once

#include <cstdint>

namespace zipper::client::rma {

inline constexpr std::uint32_t kMagic = 0x5A524D41;  // "ZRMA"
inline constexpr int kTagRequest = 1;
inline constexpr int kTagPost = 2;
/// Reply tags are kTagReplyBase + (id mod kReplyTags): unique among the
/// replies one origin waits for from one target.
inline constexpr int kTagReplyBase = 16;
inline constexpr int kReplyTags = 1 << 20;
/// A request covers at most this many bytes of data; larger ones are refused
/// (MPI_ERR_COUNT at the origin, counted at the target). Its datatype
/// description is bounded by kMaxTypeNodes (rma_typemap.h).
inline constexpr std::uint64_t kMaxData = std::uint64_t{1} << 31;
/// The origin splits an operation carrying more data than this into several
/// requests of at most this much each, sent in order (rma_origin.cpp), so the
/// MPI API's counts (INT_MAX elements of a large type) are never refused.
inline constexpr std::uint64_t kPieceData = std::uint64_t{1} << 30;
/// Requests up to this size (bytes, whole message) are held at the origin so
/// that the synchronisation after them rides on them; larger ones go at once.
inline constexpr std::uint64_t kHoldMax = 64 * 1024;

enum class Kind : std::uint8_t {
  kPut = 1,   // data -> target blocks
  kGet,       // reply: target blocks' bytes
  kAcc,       // target = target op data, element-wise
  kGetAcc,    // reply: old target bytes; then as kAcc (MPI_NO_OP: read only)
  kCas,       // data = compare | value (one element); reply: old element
  kLock,      // flags & kExclusive; reply (if asked) once granted
  kUnlock,    // reply: first error since the last reply
  kFlush,     // reply: first error since the last reply (everything before applied)
  kComplete,  // PSCW: end of this origin's access epoch; reply as kFlush
};

/// RequestHeader::flags. kLock: kExclusive. A data operation (kPut .. kCas)
/// may carry the synchronisation around it, so that lock + op + flush or
/// unlock costs one message and one reply (MPICH CH3's piggy-backing):
///   kLockFirst: acquire the lock (kExclusive: exclusive) before applying;
///   kUnlockAfter / kCompleteAfter: then act as kUnlock / kComplete.
inline constexpr std::uint8_t kExclusive = 1;
inline constexpr std::uint8_t kLockFirst = 2;
inline constexpr std::uint8_t kUnlockAfter = 4;
inline constexpr std::uint8_t kCompleteAfter = 8;

constexpr bool is_data(Kind k) { return k >= Kind::kPut && k <= Kind::kCas; }

struct RequestHeader {
  std::uint32_t magic = kMagic;
  Kind kind = Kind::kPut;
  std::uint8_t op = 0;     // op_index() (kAcc, kGetAcc)
  std::int16_t elem = 0;   // elem_index() of the element type (kAcc, kGetAcc, kCas)
  std::uint8_t flags = 0;  // kLock: kExclusive
  std::uint8_t pad[3] = {};
  std::int32_t reply_tag = 0;  // 0: no reply
  std::uint32_t nnodes = 0;    // TypeNode records of the target datatype
  std::int64_t disp = 0;       // target displacement, in the target's disp units
  std::uint64_t data_len = 0;
  std::uint64_t first = 0;  // packed offset in the target datatype where this request starts
  std::uint64_t bytes = 0;  // packed bytes of the target datatype it covers
};

struct ReplyHeader {
  std::uint32_t magic = kMagic;
  std::int32_t error = 0;  // MPI error code (MPI_SUCCESS, MPI_ERR_RMA_RANGE, ...)
  std::uint64_t data_len = 0;
  // The first error of this origin's requests before this one that were not
  // answered (a reply acknowledges everything the origin sent before it, so
  // a flush after a get or fetch-and-op needs no message of its own).
  std::int32_t prior = 0;
  std::uint32_t pad = 0;
};

}  // namespace zipper::client::rma
