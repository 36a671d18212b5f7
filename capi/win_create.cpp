// Creating and freeing MMPI windows: MPI_Win_create, _allocate,
// _allocate_shared, _create_dynamic (with attach/detach), _free,
// _get_group and _shared_query. Creation is collective over the user's
// communicator: a private duplicate for the window's traffic, then one
// allgather of every member's size, disp unit and argument check.
#include <mmpi.h>
#include <mmpi_impl_generated.h>

#include <cstdio>
#include <cstring>

#include "comm_create.h"
#include "handles.h"
#include "win_table.h"

using zipper::client::Comm;
using zipper::client::Runtime;
using zipper::client::rma::TargetInfo;
using zipper::client::rma::Window;
using namespace zipper::capi;

namespace {

struct Announce {  // one member's part of the creation allgather
  std::uint64_t size;
  std::int32_t disp_unit;
  std::int32_t ok;            // MPI error code of this member's argument check
  std::uint64_t reply_bytes;  // fetched data it holds per origin (MMPI_RMA_REPLY_BYTES)
};

// Memory model reported by MPI_WIN_MODEL (docs/rma.md): one copy of the
// window either way; with the progress thread, remote updates reach it
// without any call of the target's (unified), else only inside its MMPI
// calls (separate).
int memory_model() {
  Runtime* rt = Runtime::get();
  return rt != nullptr && rt->rma_progress_on() ? MPI_WIN_UNIFIED : MPI_WIN_SEPARATE;
}

/// The collective part of every creation. `base`/`size` may be changed
/// later by the caller for allocate (memory comes after the check).
int create(MPI_Comm comm, void* base, MPI_Aint size, int disp_unit, MPI_Info info, int flavor,
           int local_error, std::unique_ptr<WinEntry>* out_entry, MPI_Win* win, bool allocate) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  if (c->inter) return MPI_ERR_COMM;  // MPI-3.1 11.2: intra-communicators only
  if (win == nullptr) return MPI_ERR_ARG;
  std::shared_ptr<Comm> wc;
  if (int rc = split(*rt, c, 0, c->rank(), &wc)) return rc;
  wc->name = "mmpi window";
  auto e = std::make_unique<WinEntry>();
  e->comm = wc;
  if (local_error == MPI_SUCCESS && allocate && size > 0) {
    // MPI_Win_allocate: memory aligned for any type (ARMCI-MPI stores doubles).
    e->owned.reset(new (std::nothrow) std::byte[static_cast<std::size_t>(size)]);
    if (!e->owned) local_error = MPI_ERR_NO_MEM;
    base = e->owned.get();
  }
  const int n = wc->size();
  std::vector<Announce> all(static_cast<std::size_t>(n));
  const std::uint64_t reply_bytes = rt->settings().rma.reply_bytes;
  Announce mine{static_cast<std::uint64_t>(size < 0 ? 0 : size), disp_unit, local_error,
                reply_bytes};
  const MPI_Comm wh = handle_of(*wc);
  int rc = mmpi_impl_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, wh);
  for (const Announce& a : all)
    if (rc == MPI_SUCCESS && a.ok != MPI_SUCCESS)
      rc = local_error != MPI_SUCCESS ? local_error : a.ok;
  if (rc != MPI_SUCCESS) {
    rt->comms().remove(wh);
    return rc;
  }
  std::vector<TargetInfo> targets(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const Announce& a = all[static_cast<std::size_t>(i)];
    targets[static_cast<std::size_t>(i)] = TargetInfo{a.size, a.disp_unit, a.reply_bytes};
  }
  // The handle: an empty Open MPI window over MPI_COMM_SELF (win_table.h).
  // Open MPI 4.1's osc/sm serves a zero-byte allocate; osc/pt2pt (when
  // forced) any flavour.
  MPI_Win h = MPI_WIN_NULL;
  void* none = nullptr;
  if (MPI_Win_allocate(0, 1, MPI_INFO_NULL, MPI_COMM_SELF, &none, &h) != MPI_SUCCESS &&
      MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_SELF, &h) != MPI_SUCCESS) {
    rt->comms().remove(wh);
    return MPI_ERR_WIN;
  }
  if (info != MPI_INFO_NULL) MPI_Win_set_info(h, info);
  e->win = std::make_unique<Window>(rt->engine(), rt->progress(), wc, base,
                                    static_cast<std::uint64_t>(size), disp_unit, std::move(targets),
                                    flavor, reply_bytes);
  rt->window_opened();  // the progress thread runs while a window exists
  e->attr_size = size;
  e->attr_disp_unit = disp_unit;
  e->attr_flavor = flavor;
  e->attr_model = memory_model();  // after the Window: it starts the thread
  *win = h;
  *out_entry = std::move(e);
  return MPI_SUCCESS;
}

int check_args(MPI_Aint size, int disp_unit) {
  if (size < 0) return MPI_ERR_SIZE;
  if (disp_unit <= 0) return MPI_ERR_DISP;
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int mmpi_impl_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                         MPI_Win* win) {
  std::unique_ptr<WinEntry> e;
  if (int rc = create(comm, base, size, disp_unit, info, MPI_WIN_FLAVOR_CREATE,
                      check_args(size, disp_unit), &e, win, false))
    return rc;
  add_win(*win, std::move(e));
  return MPI_SUCCESS;
}

int mmpi_impl_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                           void* baseptr, MPI_Win* win) {
  std::unique_ptr<WinEntry> e;
  if (baseptr == nullptr) return MPI_ERR_ARG;
  if (int rc = create(comm, nullptr, size, disp_unit, info, MPI_WIN_FLAVOR_ALLOCATE,
                      check_args(size, disp_unit), &e, win, true))
    return rc;
  void* base = e->win->base();
  std::memcpy(baseptr, &base, sizeof base);
  add_win(*win, std::move(e));
  return MPI_SUCCESS;
}

int mmpi_impl_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  std::unique_ptr<WinEntry> e;
  if (int rc =
          create(comm, nullptr, 0, 1, info, MPI_WIN_FLAVOR_DYNAMIC, MPI_SUCCESS, &e, win, false))
    return rc;
  add_win(*win, std::move(e));
  return MPI_SUCCESS;
}

// Shared memory needs every member on one node, which also means in one
// cluster: Open MPI's own shared window then provides the memory, and the
// one-sided protocol runs over it like over any window.
int mmpi_impl_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                                  void* baseptr, MPI_Win* win) {
  Runtime* rt;
  std::shared_ptr<Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  if (baseptr == nullptr || win == nullptr) return MPI_ERR_ARG;
  if (c->inter) return MPI_ERR_COMM;
  int err = check_args(size, disp_unit);
  int same_node = 0;
  if (c->intra_cluster()) {
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Comm_split_type(c->native(), MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int n = 0;
    if (node != MPI_COMM_NULL) {
      MPI_Comm_size(node, &n);
      MPI_Comm_free(&node);
    }
    same_node = n == c->size();
  }
  if (!same_node) {
    // Every member computes the same answer: all fail, nobody waits.
    std::fprintf(stderr,
                 "mmpi: MMPI_Win_allocate_shared: the communicator's %d members are not all on "
                 "one node (%s); shared memory windows need one node\n",
                 c->size(), c->intra_cluster() ? "several nodes" : "both clusters");
    std::fflush(stderr);
    return MPI_ERR_RMA_SHARED;
  }
  MPI_Win native = MPI_WIN_NULL;
  void* base = nullptr;
  if (err == MPI_SUCCESS &&
      MPI_Win_allocate_shared(size, disp_unit, info, c->native(), &base, &native) != MPI_SUCCESS)
    err = MPI_ERR_NO_MEM;
  std::unique_ptr<WinEntry> e;
  if (int rc =
          create(comm, base, size, disp_unit, info, MPI_WIN_FLAVOR_SHARED, err, &e, win, false)) {
    if (native != MPI_WIN_NULL) MPI_Win_free(&native);
    return rc;
  }
  e->native_shared = native;
  std::memcpy(baseptr, &base, sizeof base);
  add_win(*win, std::move(e));
  return MPI_SUCCESS;
}

int mmpi_impl_Win_shared_query(MPI_Win win, int rank, MPI_Aint* size, int* disp_unit,
                               void* baseptr) {
  WinEntry* e = find_win(win);
  if (e == nullptr) return MPI_ERR_WIN;
  if (e->native_shared == MPI_WIN_NULL) return MPI_ERR_RMA_FLAVOR;
  return MPI_Win_shared_query(e->native_shared, rank, size, disp_unit, baseptr);
}

int mmpi_impl_Win_attach(MPI_Win win, void* base, MPI_Aint size) {
  WinEntry* e = find_win(win);
  if (e == nullptr) return MPI_ERR_WIN;
  if (!e->win->dynamic()) return MPI_ERR_RMA_FLAVOR;
  if (size < 0) return MPI_ERR_SIZE;
  return e->win->attach(base, static_cast<std::uint64_t>(size));
}

int mmpi_impl_Win_detach(MPI_Win win, const void* base) {
  WinEntry* e = find_win(win);
  if (e == nullptr) return MPI_ERR_WIN;
  if (!e->win->dynamic()) return MPI_ERR_RMA_FLAVOR;
  return e->win->detach(base);
}

int mmpi_impl_Win_free(MPI_Win* win) {
  if (win == nullptr) return MPI_ERR_ARG;
  WinEntry* e = find_win(*win);
  if (e == nullptr) return MPI_ERR_WIN;
  if (e->win->in_epoch()) return MPI_ERR_RMA_SYNC;
  // Nobody accesses this window once every member reached here; answers
  // still in flight finish before the window goes.
  int rc = e->win->barrier();
  if (const int d = e->win->drain(); rc == MPI_SUCCESS) rc = d;
  std::unique_ptr<WinEntry> gone = remove_win(*win);
  if (Runtime* rt = Runtime::get()) {
    rt->comms().remove(handle_of(*gone->comm));
    rt->window_closed();  // the thread stops first when this was the last
  }
  gone->win.reset();
  if (gone->native_shared != MPI_WIN_NULL) MPI_Win_free(&gone->native_shared);
  MPI_Win_free(win);  // runs the attribute delete callbacks; sets MPI_WIN_NULL
  return rc;
}

int mmpi_impl_Win_get_group(MPI_Win win, MPI_Group* group) {
  WinEntry* e = find_win(win);
  if (e == nullptr) return MPI_ERR_WIN;
  if (group == nullptr) return MPI_ERR_ARG;
  *group = new_group(zipper::client::Group{e->comm->map().world_ranks()});
  return MPI_SUCCESS;
}

}  // extern "C"
