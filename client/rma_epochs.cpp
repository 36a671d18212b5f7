// Epochs of a window (rma_epochs.h): fence, PSCW and passive-target locks.
#include "rma_epochs.h"

#include <algorithm>

namespace zipper::client::rma {

namespace {
constexpr int kTagBarrier = 3;  // + round (< 32): a dissemination barrier
constexpr int kTagPostSeq = kTagPost;
}  // namespace

Epochs::Epochs(Engine& engine, CommPtr comm, Origin& origin, Target& target)
    : engine_(engine),
      comm_(std::move(comm)),
      origin_(origin),
      target_(target),
      lock_type_(static_cast<std::size_t>(comm_->size()), 0),
      lock_nocheck_(static_cast<std::size_t>(comm_->size()), false) {}

int Epochs::check_access(int target) const {
  if (target < 0 || target >= comm_->size()) return MPI_ERR_RANK;
  const auto t = static_cast<std::size_t>(target);
  if (fence_open_ || lock_all_ || lock_type_[t] != 0) return MPI_SUCCESS;
  if (access_open_ &&
      std::find(access_group_.begin(), access_group_.end(), target) != access_group_.end())
    return MPI_SUCCESS;
  return MPI_ERR_RMA_SYNC;
}

bool Epochs::in_epoch() const {
  return lock_all_ || locks_held_ > 0 || access_open_ || exposure_open_;
}

int Epochs::lock(int lock_type, int target, int assert_flags) {
  if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE) return MPI_ERR_LOCKTYPE;
  if (target == MPI_PROC_NULL) return MPI_SUCCESS;
  if (target < 0 || target >= comm_->size()) return MPI_ERR_RANK;
  const auto t = static_cast<std::size_t>(target);
  if (lock_all_ || lock_type_[t] != 0 || access_open_) return MPI_ERR_RMA_SYNC;
  const bool nocheck = (assert_flags & MPI_MODE_NOCHECK) != 0;
  const std::uint8_t flags = lock_type == MPI_LOCK_EXCLUSIVE ? kExclusive : 0;
  if (!nocheck) {
    if (target == comm_->rank()) {
      // Local load/store after MPI_Win_lock on oneself must find the lock
      // held: wait for the grant (others' operations wait at the target).
      auto st = origin_.request_reply(target, Kind::kLock, flags);
      origin_.wait_for([&] { return st->done; });
      if (st->error != MPI_SUCCESS) return st->error;
    } else {
      origin_.send_only(target, Kind::kLock, flags);
    }
  }
  lock_type_[t] = lock_type;
  lock_nocheck_[t] = nocheck;
  ++locks_held_;
  return MPI_SUCCESS;
}

int Epochs::unlock(int target) {
  if (target == MPI_PROC_NULL) return MPI_SUCCESS;
  if (target < 0 || target >= comm_->size()) return MPI_ERR_RANK;
  const auto t = static_cast<std::size_t>(target);
  if (lock_type_[t] == 0) return MPI_ERR_RMA_SYNC;
  const int rc = origin_.flush_targets({target}, lock_nocheck_[t] ? Kind::kFlush : Kind::kUnlock);
  lock_type_[t] = 0;
  lock_nocheck_[t] = false;
  --locks_held_;
  return rc;
}

int Epochs::lock_all(int assert_flags) {
  if (lock_all_ || locks_held_ > 0 || access_open_) return MPI_ERR_RMA_SYNC;
  lock_all_nocheck_ = (assert_flags & MPI_MODE_NOCHECK) != 0;
  if (!lock_all_nocheck_) {
    for (int t = 0; t < comm_->size(); ++t)
      if (t != comm_->rank()) origin_.send_only(t, Kind::kLock, 0);
    auto st = origin_.request_reply(comm_->rank(), Kind::kLock, 0);
    origin_.wait_for([&] { return st->done; });
    if (st->error != MPI_SUCCESS) return st->error;
  }
  lock_all_ = true;
  return MPI_SUCCESS;
}

int Epochs::unlock_all() {
  if (!lock_all_) return MPI_ERR_RMA_SYNC;
  std::vector<int> all(static_cast<std::size_t>(comm_->size()));
  for (int t = 0; t < comm_->size(); ++t) all[static_cast<std::size_t>(t)] = t;
  if (lock_all_nocheck_) std::erase_if(all, [&](int t) { return !origin_.touched(t); });
  const int rc = origin_.flush_targets(all, lock_all_nocheck_ ? Kind::kFlush : Kind::kUnlock);
  lock_all_ = false;
  lock_all_nocheck_ = false;
  return rc;
}

int Epochs::barrier() {
  const int n = comm_->size(), me = comm_->rank();
  for (int k = 0, step = 1; step < n; ++k, step <<= 1) {
    RequestPtr s, r;
    engine_.irecv(comm_, Traffic::kPointToPoint, nullptr, 0, MPI_BYTE, (me - step + n) % n,
                  kTagBarrier + k, &r);
    engine_.isend(comm_, Traffic::kPointToPoint, nullptr, 0, MPI_BYTE, (me + step) % n,
                  kTagBarrier + k, &s, SendMode::kStandard);
    origin_.wait_for([&] { return engine_.completed(*s) && engine_.completed(*r); });
    if (s->error != MPI_SUCCESS) return s->error;
    if (r->error != MPI_SUCCESS) return r->error;
  }
  return MPI_SUCCESS;
}

int Epochs::fence(int assert_flags) {
  if (lock_all_ || locks_held_ > 0 || access_open_ || exposure_open_) return MPI_ERR_RMA_SYNC;
  int rc = MPI_SUCCESS;
  if ((assert_flags & MPI_MODE_NOPRECEDE) == 0) {
    std::vector<int> ts;
    for (int t = 0; t < comm_->size(); ++t)
      if (origin_.touched(t)) ts.push_back(t);
    rc = origin_.flush_targets(ts, Kind::kFlush);
  }
  // Everyone's operations to this process are applied once everyone passed
  // its flush: the barrier says so.
  if (const int b = barrier(); rc == MPI_SUCCESS) rc = b;
  fence_open_ = (assert_flags & MPI_MODE_NOSUCCEED) == 0;
  return rc;
}

int Epochs::post(const std::vector<int>& group, int assert_flags) {
  if (exposure_open_) return MPI_ERR_RMA_SYNC;
  for (int o : group)
    if (o < 0 || o >= comm_->size()) return MPI_ERR_RANK;
  exposure_group_ = group;
  exposure_open_ = true;
  if ((assert_flags & MPI_MODE_NOCHECK) == 0) {
    for (int o : group) origin_.notify(o, kTagPostSeq);
  }
  return MPI_SUCCESS;
}

int Epochs::start(const std::vector<int>& group, int assert_flags) {
  if (access_open_ || lock_all_ || locks_held_ > 0) return MPI_ERR_RMA_SYNC;
  for (int t : group)
    if (t < 0 || t >= comm_->size()) return MPI_ERR_RANK;
  if ((assert_flags & MPI_MODE_NOCHECK) == 0) {
    std::vector<RequestPtr> rs(group.size());
    for (std::size_t i = 0; i < group.size(); ++i)
      engine_.irecv(comm_, Traffic::kPointToPoint, nullptr, 0, MPI_BYTE, group[i], kTagPostSeq,
                    &rs[i]);
    origin_.wait_for([&] {
      return std::all_of(rs.begin(), rs.end(),
                         [&](RequestPtr& r) { return engine_.completed(*r); });
    });
    for (auto& r : rs)
      if (r->error != MPI_SUCCESS) return r->error;
  }
  access_group_ = group;
  access_open_ = true;
  return MPI_SUCCESS;
}

int Epochs::complete() {
  if (!access_open_) return MPI_ERR_RMA_SYNC;
  const int rc = origin_.flush_targets(access_group_, Kind::kComplete);
  access_open_ = false;
  access_group_.clear();
  return rc;
}

bool Epochs::exposure_done() const {
  for (int o : exposure_group_)
    if (target_.completes(o) == 0) return false;
  return true;
}

void Epochs::end_exposure() {
  for (int o : exposure_group_) target_.consume_complete(o);
  exposure_group_.clear();
  exposure_open_ = false;
}

int Epochs::wait() {
  if (!exposure_open_) return MPI_ERR_RMA_SYNC;
  origin_.wait_for([&] { return exposure_done(); });
  end_exposure();
  return MPI_SUCCESS;
}

int Epochs::test(bool* flag) {
  if (!exposure_open_) return MPI_ERR_RMA_SYNC;
  engine_.progress();
  origin_.reap();
  *flag = exposure_done();
  if (*flag) end_exposure();
  return MPI_SUCCESS;
}

int Epochs::flush(int target) {
  std::vector<int> ts;
  if (target >= 0) {
    if (target >= comm_->size()) return MPI_ERR_RANK;
    if (!lock_all_ && lock_type_[static_cast<std::size_t>(target)] == 0) return MPI_ERR_RMA_SYNC;
    ts.push_back(target);
  } else {
    if (!lock_all_ && locks_held_ == 0) return MPI_ERR_RMA_SYNC;
    for (int t = 0; t < comm_->size(); ++t)
      if (origin_.touched(t)) ts.push_back(t);
  }
  return origin_.flush_targets(ts, Kind::kFlush);
}

int Epochs::flush_local(int target) {
  if (target >= comm_->size()) return MPI_ERR_RANK;
  if (!lock_all_ && locks_held_ == 0) return MPI_ERR_RMA_SYNC;
  return origin_.flush_local(target);
}

}  // namespace zipper::client::rma
