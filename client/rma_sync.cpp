// Epochs of a window (rma_window.h): fence, PSCW and passive-target locks.
// Which epoch is open decides whether an operation may start
// (Window::check_access: MPI_ERR_RMA_SYNC otherwise).
#include <algorithm>

#include "rma_window.h"

namespace zipper::client::rma {

namespace {
constexpr int kTagBarrier = 3;  // + round (< 32): a dissemination barrier
constexpr int kTagPostSeq = kTagPost;
}  // namespace

bool Window::in_epoch() const {
  const Guard g(engine_.mutex());
  return lock_all_ || locks_held_ > 0 || access_open_ || exposure_open_;
}

int Window::lock(int lock_type, int target, int assert_flags) {
  const Guard g(engine_.mutex());
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
      auto st = request_reply(target, Kind::kLock, flags);
      wait_for([&] { return st->done; });
      if (st->error != MPI_SUCCESS) return st->error;
    } else {
      send_only(target, Kind::kLock, flags);
    }
  }
  lock_type_[t] = lock_type;
  lock_nocheck_[t] = nocheck;
  ++locks_held_;
  return MPI_SUCCESS;
}

int Window::unlock(int target) {
  const Guard g(engine_.mutex());
  if (target == MPI_PROC_NULL) return MPI_SUCCESS;
  if (target < 0 || target >= comm_->size()) return MPI_ERR_RANK;
  const auto t = static_cast<std::size_t>(target);
  if (lock_type_[t] == 0) return MPI_ERR_RMA_SYNC;
  const int rc = flush_targets({target}, lock_nocheck_[t] ? Kind::kFlush : Kind::kUnlock);
  lock_type_[t] = 0;
  lock_nocheck_[t] = false;
  --locks_held_;
  return rc;
}

int Window::lock_all(int assert_flags) {
  const Guard g(engine_.mutex());
  if (lock_all_ || locks_held_ > 0 || access_open_) return MPI_ERR_RMA_SYNC;
  lock_all_nocheck_ = (assert_flags & MPI_MODE_NOCHECK) != 0;
  if (!lock_all_nocheck_) {
    for (int t = 0; t < comm_->size(); ++t)
      if (t != comm_->rank()) send_only(t, Kind::kLock, 0);
    auto st = request_reply(comm_->rank(), Kind::kLock, 0);
    wait_for([&] { return st->done; });
    if (st->error != MPI_SUCCESS) return st->error;
  }
  lock_all_ = true;
  return MPI_SUCCESS;
}

int Window::unlock_all() {
  const Guard g(engine_.mutex());
  if (!lock_all_) return MPI_ERR_RMA_SYNC;
  std::vector<int> all(static_cast<std::size_t>(comm_->size()));
  for (int t = 0; t < comm_->size(); ++t) all[static_cast<std::size_t>(t)] = t;
  if (lock_all_nocheck_)
    std::erase_if(all, [&](int t) { return !touched_[static_cast<std::size_t>(t)]; });
  const int rc = flush_targets(all, lock_all_nocheck_ ? Kind::kFlush : Kind::kUnlock);
  lock_all_ = false;
  lock_all_nocheck_ = false;
  return rc;
}

int Window::barrier() {
  const Guard g(engine_.mutex());
  const int n = comm_->size(), me = comm_->rank();
  for (int k = 0, step = 1; step < n; ++k, step <<= 1) {
    RequestPtr s, r;
    engine_.irecv(comm_, Traffic::kPointToPoint, nullptr, 0, MPI_BYTE, (me - step + n) % n,
                  kTagBarrier + k, &r);
    engine_.isend(comm_, Traffic::kPointToPoint, nullptr, 0, MPI_BYTE, (me + step) % n,
                  kTagBarrier + k, &s, SendMode::kStandard);
    wait_for([&] { return engine_.completed(*s) && engine_.completed(*r); });
    if (s->error != MPI_SUCCESS) return s->error;
    if (r->error != MPI_SUCCESS) return r->error;
  }
  return MPI_SUCCESS;
}

int Window::drain() {
  const Guard g(engine_.mutex());
  return wait_for([&] { return pending_.empty() && replies_.empty() && arriving_.empty(); });
}

int Window::fence(int assert_flags) {
  const Guard g(engine_.mutex());
  if (lock_all_ || locks_held_ > 0 || access_open_ || exposure_open_) return MPI_ERR_RMA_SYNC;
  int rc = MPI_SUCCESS;
  if ((assert_flags & MPI_MODE_NOPRECEDE) == 0) {
    std::vector<int> ts;
    for (int t = 0; t < comm_->size(); ++t)
      if (touched_[static_cast<std::size_t>(t)]) ts.push_back(t);
    rc = flush_targets(ts, Kind::kFlush);
  }
  // Everyone's operations to this process are applied once everyone passed
  // its flush: the barrier says so.
  if (const int b = barrier(); rc == MPI_SUCCESS) rc = b;
  fence_open_ = (assert_flags & MPI_MODE_NOSUCCEED) == 0;
  return rc;
}

int Window::post(const std::vector<int>& group, int assert_flags) {
  const Guard g(engine_.mutex());
  if (exposure_open_) return MPI_ERR_RMA_SYNC;
  for (int o : group)
    if (o < 0 || o >= comm_->size()) return MPI_ERR_RANK;
  exposure_group_ = group;
  exposure_open_ = true;
  if ((assert_flags & MPI_MODE_NOCHECK) == 0) {
    for (int o : group) {
      auto p = std::make_unique<Pending>();
      p->target = o;
      engine_.isend(comm_, Traffic::kPointToPoint, nullptr, 0, MPI_BYTE, o, kTagPostSeq, &p->send,
                    SendMode::kStandard);
      pending_.push_back(std::move(p));
    }
  }
  return MPI_SUCCESS;
}

int Window::start(const std::vector<int>& group, int assert_flags) {
  const Guard g(engine_.mutex());
  if (access_open_ || lock_all_ || locks_held_ > 0) return MPI_ERR_RMA_SYNC;
  for (int t : group)
    if (t < 0 || t >= comm_->size()) return MPI_ERR_RANK;
  if ((assert_flags & MPI_MODE_NOCHECK) == 0) {
    std::vector<RequestPtr> rs(group.size());
    for (std::size_t i = 0; i < group.size(); ++i)
      engine_.irecv(comm_, Traffic::kPointToPoint, nullptr, 0, MPI_BYTE, group[i], kTagPostSeq,
                    &rs[i]);
    wait_for([&] {
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

int Window::complete() {
  const Guard g(engine_.mutex());
  if (!access_open_) return MPI_ERR_RMA_SYNC;
  const int rc = flush_targets(access_group_, Kind::kComplete);
  access_open_ = false;
  access_group_.clear();
  return rc;
}

bool Window::exposure_done() const {
  for (int o : exposure_group_)
    if (completes_[static_cast<std::size_t>(o)] == 0) return false;
  return true;
}

void Window::end_exposure() {
  for (int o : exposure_group_) --completes_[static_cast<std::size_t>(o)];
  exposure_group_.clear();
  exposure_open_ = false;
}

int Window::wait() {
  const Guard g(engine_.mutex());
  if (!exposure_open_) return MPI_ERR_RMA_SYNC;
  wait_for([&] { return exposure_done(); });
  end_exposure();
  return MPI_SUCCESS;
}

int Window::test(bool* flag) {
  const Guard g(engine_.mutex());
  if (!exposure_open_) return MPI_ERR_RMA_SYNC;
  engine_.progress();
  reap();
  *flag = exposure_done();
  if (*flag) end_exposure();
  return MPI_SUCCESS;
}

}  // namespace zipper::client::rma
