// One MPI window: the memory this process exposes, what it knows
// of the other members' windows, and both roles of one-sided communication.
//
//   origin (rma_origin.cpp): each operation becomes a request message to the
//     target (rma_wire.h); gets and fetching operations post a receive for
//     the reply first. A target applies one origin's messages in order, so
//     any reply acknowledges everything sent before it: an operation is
//     held until the next request or synchronisation, which it then carries
//     (a put asked for a reply), and a flush after fetching operations
//     sends nothing: one round trip in all.
//   target (rma_target.cpp): serve() receives request messages from every
//     origin, checks each against the window (a window never exposes memory
//     outside itself), applies it, and answers. Locks are granted here, in
//     each origin's message order; an origin's lock travels on its first
//     operation (MPICH CH3's lazy lock), which waits at the target.
//   epochs (rma_sync.cpp): which accesses are legal now (MPI_ERR_RMA_SYNC),
//     fence, PSCW and the lock bookkeeping.
//
// serve() and reap() run as one round of the runtime's progress list, so a
// target serves whenever its process is inside any MMPI call, and the
// progress thread (rma_progress.h) serves while it computes.
// Ranks are ranks of the window's communicator; displacements are in the
// target's disp units (bytes for a dynamic window, whose displacements are
// addresses).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <vector>

#include "communicator.h"
#include "datatype.h"
#include "engine.h"
#include "rma_types.h"
#include "rma_wire.h"

namespace zipper::client::rma {

/// What the origin knows of one target's window (allgathered at creation).
struct TargetInfo {
  std::uint64_t size = 0;  // bytes (unused for dynamic windows)
  int disp_unit = 1;       // bytes
};

// Bounds arithmetic: displacement x disp unit + block offset + length
// cannot overflow in 128 bits (GCC and Clang extension).
__extension__ typedef __int128 Wide;

/// Completion of one request-based operation (MPI_Rput, ...), shared with
/// the MPI_Request that reports it.
struct OpState {
  bool done = false;
  int error = MPI_SUCCESS;  // the first error of its requests
  int parts = 1;            // requests still to complete (a split operation has several)
};

/// Every public call holds the engine's lock (engine.h): the progress thread
/// (rma_progress.h) runs the window's round under it too.
class Window {
 public:
  /// `comm`: the window's private communicator (a duplicate of the user's);
  /// `base`/`size` (bytes)/`disp_unit` (bytes): this process's memory;
  /// `targets`: every member's size and disp unit, by rank; `flavor`: an
  /// MPI_WIN_FLAVOR_* value; `dynamic`: displacements are addresses.
  Window(Engine& engine, CommPtr comm, void* base, std::uint64_t size, int disp_unit,
         std::vector<TargetInfo> targets, int flavor);
  ~Window();
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;

  const CommPtr& comm() const { return comm_; }
  void* base() const { return base_; }
  std::uint64_t size() const { return size_; }
  int disp_unit() const { return disp_unit_; }
  int flavor() const { return flavor_; }
  bool dynamic() const { return flavor_ == MPI_WIN_FLAVOR_DYNAMIC; }

  // ---- dynamic windows: memory attached (MPI_Win_attach / detach)
  /// Returns MPI_ERR_RMA_ATTACH when [base, base+size) overlaps an attached region.
  int attach(void* base, std::uint64_t size);
  /// Returns MPI_ERR_RMA_ATTACH when `base` starts no attached region.
  int detach(const void* base);

  // ---- origin (rma_origin.cpp). Each returns MPI_SUCCESS or an MPI error
  // code: MPI_ERR_RANK, MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_OP,
  // MPI_ERR_RMA_RANGE (outside the target's window, checked at the origin
  // where its size is known, else reported at the next completion),
  // MPI_ERR_RMA_SYNC (no access epoch to `target`). `st`, when given, is
  // completed with the operation (request-based forms).
  int put(const void* obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint disp, int tcount,
          MPI_Datatype ttype, std::shared_ptr<OpState> st = nullptr);
  int get(void* obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint disp, int tcount,
          MPI_Datatype ttype, std::shared_ptr<OpState> st = nullptr);
  int accumulate(const void* obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                 int tcount, MPI_Datatype ttype, MPI_Op op, std::shared_ptr<OpState> st = nullptr);
  /// `obuf` is unused for MPI_NO_OP.
  int get_accumulate(const void* obuf, int ocount, MPI_Datatype otype, void* rbuf, int rcount,
                     MPI_Datatype rtype, int target, MPI_Aint disp, int tcount, MPI_Datatype ttype,
                     MPI_Op op, std::shared_ptr<OpState> st = nullptr);
  int compare_and_swap(const void* obuf, const void* cbuf, void* rbuf, MPI_Datatype type,
                       int target, MPI_Aint disp);

  /// Remote completion of every operation to `target` (-1: to all).
  int flush(int target);
  /// Local completion (buffers reusable, fetched data arrived) to `target` (-1: all).
  int flush_local(int target);

  // ---- epochs (rma_sync.cpp)
  int lock(int lock_type, int target, int assert_flags);
  int unlock(int target);
  int lock_all(int assert_flags);
  int unlock_all();
  /// Completes the operations of a fence epoch and starts the next one; the
  /// barrier runs over the window's communicator by engine messages, so
  /// this process keeps serving while it waits. `assert_flags`: MPI_MODE_*.
  int fence(int assert_flags);
  /// PSCW. `group`: ranks of the window's communicator.
  int post(const std::vector<int>& group, int assert_flags);
  int start(const std::vector<int>& group, int assert_flags);
  int complete();
  int wait();
  int test(bool* flag);
  /// True while any epoch is open (MPI_Win_free then fails: MPI_ERR_RMA_SYNC).
  bool in_epoch() const;
  /// A barrier over the window's communicator by engine messages (serving meanwhile).
  int barrier();
  /// Waits until nothing is in flight either way (before the window goes).
  int drain();

  // ---- target (rma_target.cpp)
  /// Receives, checks and applies request messages; answers. Returns true
  /// while something is in flight (so waits keep polling).
  bool serve();
  /// Requests refused as malformed or hostile since creation.
  std::uint64_t refused() const { return refused_; }

 private:
  using Guard = std::lock_guard<std::recursive_mutex>;
  /// One operation (or synchronisation request) in flight from this origin.
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
  /// A request message at the target, from the window rank `source`.
  struct Incoming {
    int source = -1;
    RequestPtr recv;
    std::vector<std::byte> msg;
  };

  // origin helpers (rma_origin.cpp)
  int check_access(int target) const;
  int check_range(int target, MPI_Aint disp, const TypeMap& tm) const;
  // A request for packed bytes [h.first, h.first + h.bytes) of `tm` with `n`
  // bytes of `data`; h.kind, op, elem, disp, flags set by the caller.
  int issue(int target, RequestHeader h, const TypeMap* tm, const void* data, std::uint64_t n,
            std::unique_ptr<Pending> p, std::uint64_t reply_bytes);
  // An operation of more than kPieceData bytes as several requests (cut at
  // multiples of `unit` bytes of packed data: whole elements for accumulates).
  int issue_pieces(int target, const RequestHeader& h, const TypeMap& tm, const std::byte* data,
                   std::uint64_t unit, std::shared_ptr<OpState> st, std::shared_ptr<Gather> gather);
  int gather_for(void* buf, int count, MPI_Datatype type, std::uint64_t bytes,
                 std::shared_ptr<Gather>* out);
  /// Gives `p` (its message built) a reply tag and posts the reply's receive.
  void expect_reply(Pending& p, std::uint64_t reply_bytes);
  void send(std::unique_ptr<Pending> p);
  /// Sends the request held for `target` (-1: every target); a lock alone
  /// only when `locks`.
  void send_held(int target, bool locks);
  std::shared_ptr<OpState> request_reply(int target, Kind kind, std::uint8_t flags);
  void send_only(int target, Kind kind, std::uint8_t flags);
  /// Sends `kind` (kFlush, kUnlock, kComplete) to each of `targets` and waits
  /// for every answer and every operation to them; the first error.
  int flush_targets(const std::vector<int>& targets, Kind kind);
  bool idle_to(int target) const;  // nothing in flight to `target` (-1: to any)
  static int done_at_once(const std::shared_ptr<OpState>& st);
  /// Completes what finished (sends, replies); returns true while any is in flight.
  bool reap();
  void finish(Pending& p);
  int wait_for(const std::function<bool()>& done);
  int take_error(int target);

  bool exposure_done() const;
  void end_exposure();

  // target helpers (rma_target.cpp)
  bool apply(Incoming& in);     // false: blocked (a lock not yet grantable)
  bool apply_op(Incoming& in);  // the request itself, without what it carries; false as apply()
  bool grant(std::size_t origin, bool exclusive);  // false: not grantable now
  void release(std::size_t origin);                // its lock (MPI_ERR_RMA_SYNC: none)
  void refuse(Incoming& in, const char* why);
  void reply(int origin, std::int32_t tag, int error, const void* data, std::uint64_t n,
             int prior = MPI_SUCCESS);
  std::byte* resolve(std::int64_t disp, const Block& b) const;
  // Calls fn(address, len, packed position) for each block of request `h`
  // (already checked against the window); false if a block does not resolve.
  template <class Fn>
  bool each_block(const RequestHeader& h, const TypeMap& tm, Fn&& fn) const;
  int accumulate_holed(const RequestHeader& h, const TypeMap& tm, const std::byte* data,
                       MPI_Datatype elem, int esize, MPI_Aint extent, MPI_Op op) const;
  void send_reply(int origin, std::int32_t tag, std::vector<std::byte> m);

  Engine& engine_;
  CommPtr comm_;
  std::byte* base_;
  std::uint64_t size_;
  int disp_unit_;
  std::vector<TargetInfo> targets_;
  int flavor_;
  struct Region {
    std::byte* base;
    std::uint64_t size;
  };
  std::vector<Region> regions_;  // dynamic windows

  // origin state
  std::list<std::unique_ptr<Pending>> pending_;
  std::vector<int> target_error_;  // first error a reply reported, per target
  std::uint32_t next_reply_ = 0;
  std::vector<bool> touched_;  // per target: operations since its last flush
  // Per target: the last operation (or a lock alone), not sent yet, so that
  // the synchronisation that follows travels on it (MPICH CH3's piggy-backed
  // flush, lazy lock and unlock).
  std::vector<std::unique_ptr<Pending>> held_;
  std::vector<bool> unacked_;  // per target: requests sent that no reply covers yet
  // epochs
  bool fence_open_ = false;
  std::vector<int> lock_type_;  // per target: 0, MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE
  std::vector<bool> lock_nocheck_;
  bool lock_all_ = false, lock_all_nocheck_ = false;
  int locks_held_ = 0;
  std::vector<int> access_group_;  // PSCW access epoch (start .. complete)
  bool access_open_ = false;
  std::vector<int> exposure_group_;  // PSCW exposure epoch (post .. wait)
  bool exposure_open_ = false;
  std::uint32_t barrier_epoch_ = 0;

  // target state
  std::deque<std::unique_ptr<Incoming>> arriving_;             // matched, being received, in order
  std::vector<std::deque<std::unique_ptr<Incoming>>> queued_;  // per origin, to apply
  int exclusive_holder_ = -1;
  std::vector<int> shared_holds_;  // per origin
  int shared_total_ = 0;
  std::vector<int> origin_error_;  // first error per origin since its last answer
  std::vector<int> completes_;     // PSCW completes received, per origin
  std::list<std::pair<RequestPtr, std::vector<std::byte>>> replies_;  // answers in flight
  std::uint64_t refused_ = 0;

  ProgressList::Handle round_;
};

}  // namespace zipper::client::rma
