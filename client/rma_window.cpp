#include "rma_window.h"

#include "rma_types.h"

namespace zipper::client::rma {

Window::Window(Engine& engine, ProgressList& progress, CommPtr comm, void* base, std::uint64_t size,
               int disp_unit, std::vector<TargetInfo> targets, int flavor,
               std::uint64_t reply_bytes)
    : engine_(engine),
      progress_(progress),
      comm_(std::move(comm)),
      memory_(base, size, disp_unit, flavor),
      origin_(engine, comm_, std::move(targets), flavor == MPI_WIN_FLAVOR_DYNAMIC),
      target_(engine, comm_, memory_, reply_bytes),
      epochs_(engine, comm_, origin_, target_) {
  // Serve whenever this process progresses (inside any MMPI call, or on the
  // progress thread).
  round_ = progress_.add(
      [this] {
        const bool serving = target_.serve();
        const bool waiting = origin_.reap();
        return serving || waiting;
      },
      true, true);
}

Window::~Window() { progress_.remove(round_); }

int Window::attach(void* base, std::uint64_t size) {
  const Guard g(engine_.mutex());
  return memory_.attach(base, size);
}

int Window::detach(const void* base) {
  const Guard g(engine_.mutex());
  return memory_.detach(base);
}

int Window::put(const void* obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                int tcount, MPI_Datatype ttype, std::shared_ptr<OpState> st) {
  const Guard g(engine_.mutex());
  if (target == MPI_PROC_NULL) return Origin::done_at_once(st);
  if (int rc = epochs_.check_access(target)) return rc;
  return origin_.put(obuf, ocount, otype, target, disp, tcount, ttype, std::move(st));
}

int Window::get(void* obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint disp, int tcount,
                MPI_Datatype ttype, std::shared_ptr<OpState> st) {
  const Guard g(engine_.mutex());
  if (target == MPI_PROC_NULL) return Origin::done_at_once(st);
  if (int rc = epochs_.check_access(target)) return rc;
  return origin_.get(obuf, ocount, otype, target, disp, tcount, ttype, std::move(st));
}

int Window::accumulate(const void* obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
                       int tcount, MPI_Datatype ttype, MPI_Op op, std::shared_ptr<OpState> st) {
  // MPI-3.1 11.3.4: MPI_NO_OP is for Get_accumulate and Fetch_and_op only;
  // Open MPI 4.1 returns MPI_ERR_OP for it here (Raccumulate too).
  if (op == MPI_NO_OP) return MPI_ERR_OP;
  return get_accumulate(obuf, ocount, otype, nullptr, 0, MPI_DATATYPE_NULL, target, disp, tcount,
                        ttype, op, std::move(st));
}

int Window::get_accumulate(const void* obuf, int ocount, MPI_Datatype otype, void* rbuf, int rcount,
                           MPI_Datatype rtype, int target, MPI_Aint disp, int tcount,
                           MPI_Datatype ttype, MPI_Op op, std::shared_ptr<OpState> st) {
  const Guard g(engine_.mutex());
  if (target == MPI_PROC_NULL) return Origin::done_at_once(st);
  const int opi = op_index(op);
  if (opi < 0) return MPI_ERR_OP;
  if (int rc = epochs_.check_access(target)) return rc;
  return origin_.get_accumulate(obuf, ocount, otype, rbuf, rcount, rtype, target, disp, tcount,
                                ttype, opi, std::move(st));
}

int Window::compare_and_swap(const void* obuf, const void* cbuf, void* rbuf, MPI_Datatype type,
                             int target, MPI_Aint disp) {
  const Guard g(engine_.mutex());
  if (target == MPI_PROC_NULL) return MPI_SUCCESS;
  if (int rc = epochs_.check_access(target)) return rc;
  return origin_.compare_and_swap(obuf, cbuf, rbuf, type, target, disp);
}

int Window::flush(int target) {
  const Guard g(engine_.mutex());
  return epochs_.flush(target);
}

int Window::flush_local(int target) {
  const Guard g(engine_.mutex());
  return epochs_.flush_local(target);
}

int Window::lock(int lock_type, int target, int assert_flags) {
  const Guard g(engine_.mutex());
  return epochs_.lock(lock_type, target, assert_flags);
}

int Window::unlock(int target) {
  const Guard g(engine_.mutex());
  return epochs_.unlock(target);
}

int Window::lock_all(int assert_flags) {
  const Guard g(engine_.mutex());
  return epochs_.lock_all(assert_flags);
}

int Window::unlock_all() {
  const Guard g(engine_.mutex());
  return epochs_.unlock_all();
}

int Window::fence(int assert_flags) {
  const Guard g(engine_.mutex());
  return epochs_.fence(assert_flags);
}

int Window::post(const std::vector<int>& group, int assert_flags) {
  const Guard g(engine_.mutex());
  return epochs_.post(group, assert_flags);
}

int Window::start(const std::vector<int>& group, int assert_flags) {
  const Guard g(engine_.mutex());
  return epochs_.start(group, assert_flags);
}

int Window::complete() {
  const Guard g(engine_.mutex());
  return epochs_.complete();
}

int Window::wait() {
  const Guard g(engine_.mutex());
  return epochs_.wait();
}

int Window::test(bool* flag) {
  const Guard g(engine_.mutex());
  return epochs_.test(flag);
}

bool Window::in_epoch() const {
  const Guard g(engine_.mutex());
  return epochs_.in_epoch();
}

int Window::barrier() {
  const Guard g(engine_.mutex());
  return epochs_.barrier();
}

int Window::drain() {
  const Guard g(engine_.mutex());
  return origin_.wait_for([&] { return origin_.idle() && target_.idle(); });
}

}  // namespace zipper::client::rma
