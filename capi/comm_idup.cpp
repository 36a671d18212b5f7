// MMPI_Comm_idup: a non-blocking MMPI_Comm_dup (MPI-3.1 section 6.4.2).
//
// A duplicate needs (1) this cluster's native communicators, which Open
// MPI's own MPI_Comm_idup makes without blocking, and (2) a context id that
// no member of the parent uses, agreed over both clusters. The blocking dup
// agrees it with one MAX allreduce of every member's next free id; here the
// allreduce is a non-blocking schedule, and other communicators may be made
// while it runs (blocking dups, splits, other idups: comm/comm_idup_comm),
// so an agreed id may already be used on some member when the result
// arrives. Idups draw from their own id space (the odd ids, CommTable), so
// blocking constructors, whose single MAX round is right only when nothing
// else takes ids meanwhile, never meet them. Each round both proposes and
// confirms:
//
//   round k: MAX over the members of { proposal_k, rejected(candidate_{k-1}) }
//
// A proposal is reserved locally when made (CommTable::take), so no other
// communicator of this process takes it. A candidate is accepted on a
// member when it is one of this operation's reservations or still free
// there (>= next_cid), and is then reserved too. When a round reports no
// member rejected the previous candidate, that candidate is the context id.
// Without concurrent constructors it takes two rounds (two small allreduces,
// the same cross-cluster cost as the blocking dup's allgather + allreduce).
//
// An inter-communicator is a Comm addressing the remote group plus a hidden
// intra-communicator over both groups (`merged`, client/intercomm.h). Its
// duplicate needs both anew: the agreement runs over `merged` and settles a
// block of two ids (the new merged communicator's, the new
// inter-communicator's), and three native duplicates are made, one after
// the other: the inter-communicator's own (its native communicator is an
// Open MPI intra-communicator over both groups' members in this cluster,
// client/intercomm.h), and of that merged's two.
//
// Open MPI 4.1's idups of one communicator must not be many at once where
// other idups run beside them (see advance()): only the handle's duplicate
// is started at the call (it gives the handle, and the attributes' copy
// callbacks run onto it); the others duplicate a communicator that nothing
// else duplicates.
//
// The operation advances from the runtime's progress list, not only when
// the application tests its request: a rank that waits on something else
// (a receive another rank sends after its own idup completed) still drives
// the agreement, as MPI's progress rule asks.
#include "comm_idup.h"

#include <mmpi.h>
#include <mmpi_impl_generated.h>

#include <algorithm>
#include <array>
#include <memory>
#include <vector>

#include "../collectives/nbc_bcast_binomial.h"
#include "../collectives/nbc_reduce_binomial.h"
#include "../collectives/schedule.h"
#include "../collectives/tags.h"
#include "errhandler.h"
#include "handles.h"
#include "progress.h"

using zipper::client::Comm;
using zipper::client::Runtime;
using namespace zipper::capi;

namespace {

class IdupOp;
// The operations not yet destroyed, for complete_idups_of().
std::vector<const IdupOp*> g_idups;

/// One MMPI_Comm_idup in flight: the request's Progressable. Owns the
/// native duplicates (two, or three for an inter-communicator) until the
/// new communicator takes them.
class IdupOp final : public zipper::client::Progressable {
 public:
  /// `over`: the intra-communicator the agreement runs on (the parent, or
  /// an inter-communicator's merged one); `tag`: its next non-blocking
  /// collective tag (every member starts the idup at the same point of the
  /// collective order).
  IdupOp(Runtime& rt, std::shared_ptr<Comm> parent, std::shared_ptr<Comm> over, int tag)
      : rt_(rt),
        parent_(std::move(parent)),
        over_(std::move(over)),
        tag_(tag),
        ids_(parent_->inter ? 2u : 1u) {
    g_idups.push_back(this);
  }

  // The request is destroyed when collected (or reaped after
  // MMPI_Request_free), never inside this operation's own progress round.
  ~IdupOp() override {
    g_idups.erase(std::find(g_idups.begin(), g_idups.end(), this));
    if (registered_ && Runtime::get() == &rt_) rt_.progress().remove(progress_);
    // A native duplicate still in flight cannot be freed: Open MPI owns it
    // until its request completes (only reached when the job is failing).
    for (std::size_t i = 0; i < native_reqs_.size(); ++i)
      if (native_reqs_[i] != MPI_REQUEST_NULL) (void)native_[i].release();
  }
  IdupOp(const IdupOp&) = delete;
  IdupOp& operator=(const IdupOp&) = delete;

  /// Starts the native duplicates and the first agreement round; registers
  /// for progress; writes the new handle to *newcomm (usable once the
  /// request completes). Returns an MPI error code.
  int start(MPI_Comm* newcomm) {
    // Open MPI duplicates the handle's native communicator: the attributes'
    // copy callbacks run onto the new one. The collectives' duplicate
    // follows in step() (a duplicate of the new one: for an
    // intra-communicator its copy callbacks run a second time, onto that
    // private communicator, whose delete callbacks run when it is freed).
    if (int rc = idup_native(handle_of(*parent_))) return rc;
    // The handle is the native communicator, known now (as Open MPI's own
    // idup writes it at the call); it becomes usable at completion.
    *newcomm = native_[0].get();
    if (int rc = propose(false)) return rc;
    progress_ = rt_.progress().add([this] { return !step(); });
    registered_ = true;
    return MPI_SUCCESS;
  }

  /// Not finished, and of `c` (its parent, or the communicator the
  /// agreement runs over).
  bool pending_on(const Runtime& rt, const Comm& c) const {
    return !done_ && &rt_ == &rt && (parent_.get() == &c || over_.get() == &c);
  }

  bool poll(zipper::client::Request& outer) override {
    const bool done = step();
    outer.error = error_;
    return done;
  }

 private:
  int idup_native(MPI_Comm from) {
    native_reqs_.push_back(MPI_REQUEST_NULL);
    MPI_Comm n = MPI_COMM_NULL;
    const int rc = MPI_Comm_idup(from, &n, &native_reqs_.back());
    native_.emplace_back(n);
    return rc;
  }

  // The i-th id of the block starting at `first` (idup ids are odd).
  static unsigned id_of(unsigned first, unsigned i) { return first + 2 * i; }

  // Reserves a fresh block of ids_ proposals and starts the round carrying
  // its first and the verdict on the previous candidate.
  int propose(bool rejected) {
    const unsigned p = rt_.comms().next_idup_cid();
    rt_.comms().take_idup(id_of(p, ids_ - 1));
    for (unsigned i = 0; i < ids_; ++i) reserved_.push_back(id_of(p, i));
    in_ = {p, rejected ? 1u : 0u};
    const zipper::coll::Topology t = zipper::coll::Topology::of(rt_.engine(), over_);
    // A finished round is kept: this may run inside Schedule::advance_all,
    // which must not see a schedule vanish under it.
    if (round_) done_rounds_.push_back(std::move(round_));
    round_ = std::make_unique<zipper::coll::Schedule>(t, tag_);
    zipper::coll::nbc_reduce_binomial(*round_, in_.data(), out_.data(), 2, MPI_UNSIGNED, MPI_MAX,
                                      0);
    round_->end_round();
    zipper::coll::nbc_bcast_binomial(*round_, out_.data(), 2, MPI_UNSIGNED, 0);
    return round_->start();
  }

  // Advances; true once finished (successfully or with error_). Testing
  // requests may run the progress list, which calls step() again: the inner
  // call returns at once.
  bool step() {
    if (done_ || in_step_) return done_;
    in_step_ = true;
    const bool done = advance();
    in_step_ = false;
    return done;
  }

  bool advance() {
    if (!cid_agreed_) {
      // The schedule advances in capi's own progress round (it is started);
      // advancing it here too would re-enter it from inside its own tests.
      zipper::client::Request r;
      if (!round_->poll(r)) return false;
      if (r.error != MPI_SUCCESS) return fail(r.error);
      if (have_candidate_ && out_[1] == 0) {
        cid_agreed_ = true;
      } else {
        candidate_ = out_[0];
        have_candidate_ = true;
        // Each id of the block must be this operation's or free here.
        bool ok = true;
        for (unsigned i = 0; i < ids_; ++i) {
          const unsigned id = id_of(candidate_, i);
          ok = ok && (std::find(reserved_.begin(), reserved_.end(), id) != reserved_.end() ||
                      id >= rt_.comms().next_idup_cid());
        }
        if (ok) rt_.comms().take_idup(id_of(candidate_, ids_ - 1));
        if (int rc = propose(!ok)) return fail(rc);
        return false;
      }
    }
    for (MPI_Request& r : native_reqs_) {
      if (r == MPI_REQUEST_NULL) continue;
      int flag = 0;
      if (int rc = MPI_Test(&r, &flag, MPI_STATUS_IGNORE)) return fail(rc);
      if (!flag) return false;
    }
    // The other native communicators are duplicates of the new handle's,
    // each started when the one before it is complete: an
    // inter-communicator's merged one, then the collectives' one. A
    // duplicate of a communicator nothing else duplicates: Open MPI 4.1 can
    // start the agreement rounds of concurrent idups of one communicator in
    // different orders on different ranks when other idups hold back some
    // of them (its lowest-id rule, docs/conformance.md), and the job hangs
    // (MPICH comm/comm_idup_nb at 3+3, where the merged ones of five idups
    // of one inter-communicator ran at once). Duplicating the parent's collectives' communicator
    // would also run Open MPI's idup rounds beside libmmpi's native
    // collective steps there, in different orders on different ranks
    // (comm/comm_idup_comm hung so).
    if (native_.size() < (parent_->inter ? 3u : 2u)) {
      if (int rc = idup_native(native_.back().get())) return fail(rc);
      return false;
    }
    finish();
    return true;
  }

  // The native duplicates and the ids are ready: the communicator as
  // MMPI_Comm_dup makes it (capi/comm.cpp, capi/intercomm.cpp).
  void finish() {
    MPI_Comm n = native_[0].get();
    MPI_Comm_set_errhandler(n, MPI_ERRORS_RETURN);
    std::shared_ptr<zipper::client::InterInfo> info;
    std::shared_ptr<Comm> c;
    if (parent_->inter) {
      MPI_Comm_set_errhandler(native_[1].get(), MPI_ERRORS_RETURN);
      info = std::make_shared<zipper::client::InterInfo>(*parent_->inter);
      info->merged = std::make_shared<Comm>(over_->map(), over_->rank(), candidate_,
                                            std::move(native_[1]), std::move(native_[2]));
      rt_.comms().add(handle_of(*info->merged), info->merged);
      c = std::make_shared<Comm>(parent_->map(), parent_->rank(), id_of(candidate_, 1),
                                 std::move(native_[0]), zipper::client::NativeComm());
      c->inter = std::move(info);
      c->native_base = parent_->native_base;  // a duplicate: same members, same order
    } else {
      c = std::make_shared<Comm>(parent_->map(), parent_->rank(), candidate_, std::move(native_[0]),
                                 std::move(native_[1]));
    }
    c->cart = parent_->cart;  // MPI: the topology is copied, the name is not
    c->graph = parent_->graph;
    c->dist_graph = parent_->dist_graph;
    for (int k : parent_->attr_keyvals) {
      void* v = nullptr;
      int flag = 0;
      if (MPI_Comm_get_attr(n, k, &v, &flag) == MPI_SUCCESS && flag) c->attr_keyvals.push_back(k);
    }
    inherit_errhandler(*parent_, *c);
    rt_.comms().add(handle_of(*c), c);
    done_ = true;
  }

  bool fail(int rc) {
    error_ = rc;
    done_ = true;
    return true;
  }

  Runtime& rt_;
  std::shared_ptr<Comm> parent_, over_;
  int tag_;
  unsigned ids_;  // context ids agreed in one block
  // The new handle's native duplicate first, then the collectives' (intra),
  // or merged's two (inter), each a duplicate of the one before.
  std::vector<MPI_Request> native_reqs_;
  std::vector<zipper::client::NativeComm> native_;
  std::unique_ptr<zipper::coll::Schedule> round_;
  std::vector<std::unique_ptr<zipper::coll::Schedule>> done_rounds_;
  std::array<unsigned, 2> in_{}, out_{};
  std::vector<unsigned> reserved_;  // the ids of this operation's proposals, reserved here
  unsigned candidate_ = 0;
  bool have_candidate_ = false, cid_agreed_ = false, done_ = false, in_step_ = false;
  bool registered_ = false;
  zipper::client::ProgressList::Handle progress_;
  int error_ = MPI_SUCCESS;
};

}  // namespace

namespace zipper::capi {

void complete_idups_of(Runtime& rt, const Comm& parent) {
  auto pending = [&] {
    return std::any_of(g_idups.begin(), g_idups.end(),
                       [&](const IdupOp* op) { return op->pending_on(rt, parent); });
  };
  if (!pending()) return;
  // Each runs in the progress list (and fails there like any request, its
  // error kept for its own request); their native idups have no file
  // descriptor to sleep on, so the wait polls.
  rt.engine().wait_until([&] { return !pending(); }, true);
}

}  // namespace zipper::capi

extern "C" {

int mmpi_impl_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  if (newcomm == nullptr) return MPI_ERR_ARG;
  if (request == nullptr) return MPI_ERR_REQUEST;
  join_progress();
  // The agreement runs on an intra-communicator: for an inter-communicator
  // its merged one, whose members start collectives in one order too.
  std::shared_ptr<Comm> over = c->inter ? c->inter->merged : c;
  const int tag =
      zipper::coll::kTagNbcBase + static_cast<int>(over->nbc_started++ % zipper::coll::kNbcTagSpan);
  auto op = std::make_unique<IdupOp>(*rt, c, std::move(over), tag);
  if (int rc = op->start(newcomm)) return rc;
  auto r = std::make_unique<zipper::client::Request>();
  r->comm = c;
  r->kind = zipper::client::RequestKind::kProgressable;
  r->progressable = std::move(op);
  *request = to_handle(std::move(r));
  return MPI_SUCCESS;
}

}  // extern "C"
