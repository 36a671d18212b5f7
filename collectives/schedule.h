// A non-blocking collective as a schedule: rounds of point-to-point
// operations on the collective context (through zipperd to the other
// cluster, natively inside this one) and local steps (copies, reductions).
// A round starts when the previous one has completed; within a round, steps
// run in the order they were added, so a local step placed before a send
// prepares that send's buffer. Every schedule in flight advances whenever
// libmmpi makes progress (any MMPI call that waits or tests), through
// the engine's progress hook. Schedules use point-to-point only, never native
// collectives: those would have to start in the same order on every rank,
// which later rounds, started whenever progress happens, cannot promise.
// Design: libNBC (Hoefler, Lumsdaine, Rehm, SC07 §3).
#pragma once

#include <mpi.h>

#include <functional>
#include <memory>
#include <vector>

#include "../client/op_ref.h"
#include "../client/request.h"
#include "topology.h"
#include "typed_buffer.h"

namespace zipper::coll {

class Schedule final : public client::Progressable {
 public:
  /// Messages of this schedule carry `tag` (tags.h: one per outstanding
  /// non-blocking collective on the communicator).
  Schedule(const Topology& t, int tag);
  /// Requests still in flight after a failure stay with the runtime (which
  /// may still write into them) instead of being freed under it.
  ~Schedule() override;
  Schedule(const Schedule&) = delete;
  Schedule& operator=(const Schedule&) = delete;

  const Topology& topology() const { return t_; }

  /// Building. Buffers must stay valid until the schedule is done.
  void send(const void* buf, int count, MPI_Datatype type, int peer);
  void recv(void* buf, int count, MPI_Datatype type, int peer);
  /// A local step; returns an MPI error code.
  void local(std::function<int()> step);
  /// Operations added after this wait for everything added before.
  void end_round();
  /// Scratch space for `count` elements of `type`, owned by the schedule.
  void* scratch(MPI_Aint count, MPI_Datatype type);
  /// A datatype that stays valid while the schedule runs, even if the
  /// caller frees its own handle (a duplicate of a derived type).
  MPI_Datatype keep(MPI_Datatype type);
  /// A reduction operation that stays valid while the schedule runs, even
  /// if the caller frees it (its free waits for the schedule: client/op_ref.h).
  MPI_Op keep_op(MPI_Op op);  // its own name: MPI_Op and MPI_Datatype are both int in MPICH

  /// Starts the first round and registers for progress. Returns an MPI
  /// error code (the schedule is then done with that error).
  int start();
  /// Advances the current round, starting further rounds as they become
  /// ready. Returns true once done.
  bool advance();
  /// Progressable: sets outer.error once done.
  bool poll(client::Request& outer) override;

  /// Advances every started schedule (the engine's progress hook). Returns true
  /// while any is unfinished.
  static bool advance_all();

  /// One operation as built. Read by tests/unit/test_schedule.cpp, which
  /// runs the schedules of all ranks of a simulated layout against each
  /// other without the engine.
  struct Step {
    enum class Kind { kSend, kRecv, kLocal } kind;
    void* buf = nullptr;
    int count = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    int peer = 0;
    std::function<int()> fn;
  };
  const std::vector<std::vector<Step>>& steps() const { return rounds_; }

 private:
  int start_round();

  Topology t_;
  int tag_;
  std::vector<std::vector<Step>> rounds_{1};
  std::size_t round_ = 0;
  std::vector<client::RequestPtr> active_;
  std::vector<std::unique_ptr<TypedBuffer>> scratch_;
  std::vector<MPI_Datatype> kept_;
  std::vector<client::OpRef> kept_ops_;
  int error_ = MPI_SUCCESS;
  bool started_ = false, done_ = false;
};

}  // namespace zipper::coll
