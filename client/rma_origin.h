// The origin's half of a window: each operation becomes a request message
// to the target (rma_wire.h); gets and fetching operations post a receive
// for the reply first. A target applies one origin's messages in order, so
// any reply acknowledges everything sent before it: an operation is held
// until the next request or synchronisation, which it then carries (a put
// asked for a reply), and a flush after fetching operations sends nothing:
// one round trip in all.
// Which epoch allows an operation is not decided here (rma_epochs.h): the
// window asks its epochs first.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <vector>

#include "communicator.h"
#include "datatype.h"
#include "engine.h"
#include "rma_typemap.h"
#include "rma_wire.h"

namespace zipper::client::rma {

/// What the origin knows of one target's window (allgathered at creation).
struct TargetInfo {
  std::uint64_t size = 0;  // bytes (unused for dynamic windows)
  int disp_unit = 1;       // bytes
  /// Fetched data (bytes) it holds for one origin at a time: fetching
  /// operations go to it in pieces of half of this (rma_target.h).
  std::uint64_t reply_bytes = kPieceData;
};

/// Completion of one request-based operation (MPI_Rput, ...), shared with
/// the MPI_Request that reports it.
struct OpState {
  bool done = false;
  int error = MPI_SUCCESS;  // the first error of its requests
  int parts = 1;            // requests still to complete (a split operation has several)
};

/// Called with the engine's lock held (engine.h), like every window call.
/// Ranks are ranks of the window's communicator.
class Origin {
 public:
  /// `targets`: every member's size and disp unit, by rank; `dynamic`:
  /// displacements are addresses (only the target checks them).
  Origin(Engine& engine, CommPtr comm, std::vector<TargetInfo> targets, bool dynamic);
  Origin(const Origin&) = delete;
  Origin& operator=(const Origin&) = delete;

  // Operations, after the epoch allowed them. Each returns MPI_SUCCESS or an
  // MPI error code: MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_OP, MPI_ERR_RMA_RANGE
  // (outside the target's window, checked here where its size is known, else
  // reported at the next completion). `st`, when given, is completed with
  // the operation (request-based forms).
  int put(const void* obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint disp, int tcount,
          MPI_Datatype ttype, std::shared_ptr<OpState> st);
  int get(void* obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint disp, int tcount,
          MPI_Datatype ttype, std::shared_ptr<OpState> st);
  /// `rtype` MPI_DATATYPE_NULL: an accumulate (nothing fetched). `opi`:
  /// op_index() of the op; `obuf` is unused for MPI_NO_OP.
  int get_accumulate(const void* obuf, int ocount, MPI_Datatype otype, void* rbuf, int rcount,
                     MPI_Datatype rtype, int target, MPI_Aint disp, int tcount, MPI_Datatype ttype,
                     int opi, std::shared_ptr<OpState> st);
  int compare_and_swap(const void* obuf, const void* cbuf, void* rbuf, MPI_Datatype type,
                       int target, MPI_Aint disp);

  // Synchronisation requests (for the epochs).
  /// A request of `kind` that the target answers once everything this
  /// origin sent before it is applied; the state completes with the answer.
  std::shared_ptr<OpState> request_reply(int target, Kind kind, std::uint8_t flags);
  /// A request of `kind` without an answer (a lock that travels lazily).
  void send_only(int target, Kind kind, std::uint8_t flags);
  /// A zero-byte message with `tag` to `target`, tracked until sent (PSCW post).
  void notify(int target, int tag);
  /// Sends `kind` (kFlush, kUnlock, kComplete) to each of `targets` and waits
  /// for every answer and every operation to them; the first error.
  int flush_targets(const std::vector<int>& targets, Kind kind);
  /// Local completion (buffers reusable, fetched data arrived) to `target` (-1: all).
  int flush_local(int target);
  /// Operations to `target` since its last flush.
  bool touched(int target) const { return touched_[static_cast<std::size_t>(target)]; }

  /// Completes what finished (sends, replies); returns true while any is in flight.
  bool reap();
  /// Progresses (the engine, then reap) until `done` holds.
  int wait_for(const std::function<bool()>& done);
  /// Nothing in flight from this origin.
  bool idle() const { return pending_.empty(); }

  static int done_at_once(const std::shared_ptr<OpState>& st);

 private:
  /// Where the replies of a split fetching operation land: straight in the
  /// origin buffer when it is contiguous, else in `staging`, unpacked once
  /// the last piece is in.
  struct Gather {
    std::byte* dest = nullptr;
    std::uint64_t bytes = 0;
    std::vector<std::byte> staging;
    void* rbuf = nullptr;
    int rcount = 0;
    TypeRef rtype;
    std::size_t left = 0;  // pieces still to arrive
  };
  /// One operation (or synchronisation request) in flight from this origin.
  struct Pending {
    int target = -1;
    RequestPtr send;
    std::vector<std::byte> msg;  // the request message, kept until sent
    RequestPtr recv;             // the reply, when one is expected
    std::vector<std::byte> reply;
    void* rbuf = nullptr;  // where the reply's data goes
    int rcount = 0;
    TypeRef rtype;
    std::shared_ptr<OpState> st;
    std::shared_ptr<Gather> gather;  // a split fetching operation: reply data goes here
    std::uint64_t gather_at = 0;     // at this offset of the packed origin data
    bool sent = false, answered = true;
    Kind kind = Kind::kPut;  // of the request (held requests are patched)
    std::uint8_t flags = 0;
  };

  int check_range(int target, MPI_Aint disp, const TypeMap& tm) const;
  // A request for packed bytes [h.first, h.first + h.bytes) of `tm` with `n`
  // bytes of `data`; h.kind, op, elem, disp, flags set by the caller.
  int issue(int target, RequestHeader h, const TypeMap* tm, const void* data, std::uint64_t n,
            std::unique_ptr<Pending> p, std::uint64_t reply_bytes);
  // An operation of more than kPieceData bytes as several requests (cut at
  // multiples of `unit` bytes of packed data: whole elements for accumulates).
  int issue_pieces(int target, const RequestHeader& h, const TypeMap& tm, const std::byte* data,
                   std::uint64_t unit, std::uint64_t piece, std::shared_ptr<OpState> st,
                   std::shared_ptr<Gather> gather);
  // The most packed bytes one request to `target` covers: kPieceData, and
  // for a fetching operation half of what the target holds per origin.
  std::uint64_t piece_for(int target, bool fetch) const;
  int gather_for(void* buf, int count, MPI_Datatype type, std::uint64_t bytes,
                 std::shared_ptr<Gather>* out);
  /// Gives `p` (its message built) a reply tag and posts the reply's receive.
  void expect_reply(Pending& p, std::uint64_t reply_bytes);
  void send(std::unique_ptr<Pending> p);
  /// Sends the request held for `target` (-1: every target); a lock alone
  /// only when `locks`.
  void send_held(int target, bool locks);
  bool idle_to(int target) const;  // nothing in flight to `target` (-1: to any)
  void finish(Pending& p);
  int take_error(int target);

  Engine& engine_;
  CommPtr comm_;
  std::vector<TargetInfo> targets_;
  bool dynamic_;
  std::list<std::unique_ptr<Pending>> pending_;
  std::vector<int> target_error_;  // first error a reply reported, per target
  std::uint32_t next_reply_ = 0;
  std::vector<bool> touched_;  // per target: operations since its last flush
  // Per target: the last operation (or a lock alone), not sent yet, so that
  // the synchronisation that follows travels on it (MPICH CH3's piggy-backed
  // flush, lazy lock and unlock).
  std::vector<std::unique_ptr<Pending>> held_;
  std::vector<bool> unacked_;  // per target: requests sent that no reply covers yet
};

}  // namespace zipper::client::rma
