// The target's half of a window: receives request messages (rma_wire.h)
// from every origin, checks each against the window's memory before
// touching it (a window never exposes memory outside itself), applies it
// and answers. Locks are granted here, in each origin's message order; an
// origin's lock travels on its first operation (MPICH CH3's lazy lock),
// which waits at the target. Requests that are malformed or hostile are
// refused and counted (refused()), never applied, and never reach an error
// handler of this process.
// Bounded: the fetched data (Get, Get_accumulate replies) held for one
// origin never passes `reply_bytes`. A fetching request for more is refused
// (honest origins cut theirs in pieces of half of it: rma_origin.h); one
// that would pass it while earlier replies to its origin are still in
// flight waits, whole, like a lock that cannot be granted yet, and only its
// origin waits. So the work of one request is bounded too (its walk covers
// at most `reply_bytes` of blocks) and other origins are served between the
// pieces of a large one.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <utility>
#include <vector>

#include "communicator.h"
#include "engine.h"
#include "rma_locks.h"
#include "rma_memory.h"
#include "rma_wire.h"

namespace zipper::client::rma {

/// Called with the engine's lock held (engine.h), like every window call.
class Target {
 public:
  /// `comm`: the window's private communicator; `memory`: what requests may
  /// touch (outlives this); `reply_bytes`: the bound above (bytes).
  Target(Engine& engine, CommPtr comm, Memory& memory, std::uint64_t reply_bytes);
  Target(const Target&) = delete;
  Target& operator=(const Target&) = delete;

  /// Receives, checks and applies request messages; answers. Returns true
  /// while something is in flight, and for kStayAwake after the last request
  /// applied, so that a wait serving this window keeps polling instead of
  /// sleeping while an origin is likely to send its next request.
  bool serve();
  /// Requests refused as malformed or hostile since creation.
  std::uint64_t refused() const { return refused_; }
  /// Nothing being received or answered.
  bool idle() const { return arriving_.empty() && replies_.empty(); }
  /// PSCW: MPI_Win_complete notices from window rank `origin` not yet
  /// consumed by the exposure epoch.
  int completes(int origin) const { return completes_[static_cast<std::size_t>(origin)]; }
  void consume_complete(int origin) { --completes_[static_cast<std::size_t>(origin)]; }

 private:
  /// A request message at the target, from the window rank `source`.
  struct Incoming {
    int source = -1;
    RequestPtr recv;
    std::vector<std::byte> msg;
  };

  bool apply(Incoming& in);     // false: blocked (a lock not yet grantable, replies in flight)
  bool apply_op(Incoming& in);  // the request itself, without what it carries; false as apply()
  void release(std::size_t origin);  // its lock (MPI_ERR_RMA_SYNC to it: none)
  // Counts and reports a refused request; `error` goes back to its origin.
  void refuse(Incoming& in, const char* why, int error = MPI_ERR_RMA_RANGE);
  void reply(int origin, std::int32_t tag, int error, const void* data, std::uint64_t n,
             int prior = MPI_SUCCESS);
  // Calls fn(address, len, packed position) for each block of request `h`
  // (already checked against the window); false if a block does not resolve.
  template <class Fn>
  bool each_block(const RequestHeader& h, const TypeMap& tm, Fn&& fn) const;
  int accumulate_holed(const RequestHeader& h, const TypeMap& tm, const std::byte* data,
                       MPI_Datatype elem, int esize, MPI_Aint extent, MPI_Op op) const;
  void send_reply(int origin, std::int32_t tag, std::vector<std::byte> m);
  void reap_replies();  // forgets the answers sent

  Engine& engine_;
  CommPtr comm_;
  Memory& memory_;
  std::deque<std::unique_ptr<Incoming>> arriving_;             // matched, being received, in order
  std::vector<std::deque<std::unique_ptr<Incoming>>> queued_;  // per origin, to apply
  LockTable locks_;
  std::vector<int> origin_error_;  // first error per origin since its last answer
  std::vector<int> completes_;     // PSCW completes received, per origin
  /// An answer in flight to `origin`, its buffer kept until sent.
  struct Reply {
    RequestPtr send;
    std::vector<std::byte> msg;
    int origin;
  };
  std::list<Reply> replies_;
  std::uint64_t reply_bytes_;            // the bound
  std::vector<std::uint64_t> replying_;  // per origin: fetched bytes in replies_
  std::uint64_t refused_ = 0;
  std::chrono::steady_clock::time_point last_applied_{};
};

/// How long a target keeps its waits polling after it applied a request
/// (Target::serve). A wait that has spun its MMPI_SPIN_ROUNDS sleeps in
/// poll() with a 1 ms timeout (Engine::wait_until), and a target waits a
/// long time (in a barrier, say) while an origin's loop of one operation and
/// a flush sends it one request per round trip: woken from poll() on an
/// idle core each time, it answered one round trip late in about half the
/// runs (8 B get + flush at 2 x the round trip, shaped 1+1). An origin's
/// next request comes a round trip after the reply; 1 ms covers a round trip
/// across sites and costs what a receive's spin costs.
inline constexpr std::chrono::microseconds kStayAwake{1000};

}  // namespace zipper::client::rma
