#include "rma_window.h"

#include "runtime.h"

namespace zipper::client::rma {

Window::Window(Engine& engine, CommPtr comm, void* base, std::uint64_t size, int disp_unit,
               std::vector<TargetInfo> targets, int flavor)
    : engine_(engine),
      comm_(std::move(comm)),
      base_(static_cast<std::byte*>(base)),
      size_(size),
      disp_unit_(disp_unit),
      targets_(std::move(targets)),
      flavor_(flavor) {
  const auto n = static_cast<std::size_t>(comm_->size());
  target_error_.assign(n, MPI_SUCCESS);
  touched_.assign(n, false);
  held_.resize(n);
  unacked_.assign(n, false);
  lock_type_.assign(n, 0);
  lock_nocheck_.assign(n, false);
  queued_.resize(n);
  shared_holds_.assign(n, 0);
  origin_error_.assign(n, MPI_SUCCESS);
  completes_.assign(n, 0);
  // Serve whenever this process progresses (inside any MMPI call, or on the
  // progress thread).
  round_ = Runtime::get()->progress().add(
      [this] {
        const bool serving = serve();
        const bool waiting = reap();
        return serving || waiting;
      },
      true, true);
  Runtime::get()->window_opened();
}

Window::~Window() {
  Runtime::get()->window_closed();  // the thread stops first when this was the last
  Runtime::get()->progress().remove(round_);
}

int Window::attach(void* base, std::uint64_t size) {
  const Guard g(engine_.mutex());
  auto* b = static_cast<std::byte*>(base);
  for (const Region& r : regions_)
    if (b < r.base + r.size && r.base < b + size) return MPI_ERR_RMA_ATTACH;
  regions_.push_back(Region{b, size});
  return MPI_SUCCESS;
}

int Window::detach(const void* base) {
  const Guard g(engine_.mutex());
  for (auto it = regions_.begin(); it != regions_.end(); ++it)
    if (it->base == base) {
      regions_.erase(it);
      return MPI_SUCCESS;
    }
  return MPI_ERR_RMA_ATTACH;
}

}  // namespace zipper::client::rma
