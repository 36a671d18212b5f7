// One-sided operations on MMPI windows: MPI_Put, _Get,
// _Accumulate, _Get_accumulate, _Fetch_and_op, _Compare_and_swap and the
// request forms. Argument checks here; the protocol in client/rma_origin.cpp.
#include <mmpi.h>
#include <mmpi_impl_generated.h>

#include "handles.h"
#include "win_table.h"

using zipper::client::Progressable;
using zipper::client::Request;
using zipper::client::RequestKind;
using zipper::client::rma::OpState;
using namespace zipper::capi;

namespace {

// An MPI_Request that completes with its operation (the window's progress
// round sets the state).
struct OpRequest final : Progressable {
  std::shared_ptr<OpState> st;
  bool poll(Request& outer) override {
    if (!st->done) return false;
    outer.error = st->error;
    return true;
  }
};

MPI_Request new_request(const std::shared_ptr<OpState>& st) {
  auto r = std::make_unique<Request>();
  r->kind = RequestKind::kProgressable;
  auto p = std::make_unique<OpRequest>();
  p->st = st;
  r->progressable = std::move(p);
  return to_handle(std::move(r));
}

int counts_ok(int a, int b) { return a < 0 || b < 0 ? MPI_ERR_COUNT : MPI_SUCCESS; }

// The request forms: checks in MPI's order (window, then counts), then
// `start(window, state)` issues the operation and the request completes with it.
template <class Start>
int request_op(MPI_Win win, int count_rc, MPI_Request* request, Start start) {
  WinEntry* e = find_win(win);
  if (e == nullptr) return MPI_ERR_WIN;
  if (count_rc != MPI_SUCCESS) return count_rc;
  auto st = std::make_shared<OpState>();
  if (int rc = start(*e->win, st)) return rc;
  *request = new_request(st);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int mmpi_impl_Put(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                  int target_rank, MPI_Aint target_disp, int target_count,
                  MPI_Datatype target_datatype, MPI_Win win) {
  WinEntry* e = find_win(win);
  if (e == nullptr) return MPI_ERR_WIN;
  if (int rc = counts_ok(origin_count, target_count)) return rc;
  return e->win->put(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                     target_count, target_datatype);
}

int mmpi_impl_Get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                  int target_rank, MPI_Aint target_disp, int target_count,
                  MPI_Datatype target_datatype, MPI_Win win) {
  WinEntry* e = find_win(win);
  if (e == nullptr) return MPI_ERR_WIN;
  if (int rc = counts_ok(origin_count, target_count)) return rc;
  return e->win->get(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                     target_count, target_datatype);
}

int mmpi_impl_Accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                         int target_rank, MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  WinEntry* e = find_win(win);
  if (e == nullptr) return MPI_ERR_WIN;
  if (int rc = counts_ok(origin_count, target_count)) return rc;
  return e->win->accumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                            target_count, target_datatype, op);
}

int mmpi_impl_Get_accumulate(const void* origin_addr, int origin_count,
                             MPI_Datatype origin_datatype, void* result_addr, int result_count,
                             MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                             int target_count, MPI_Datatype target_datatype, MPI_Op op,
                             MPI_Win win) {
  WinEntry* e = find_win(win);
  if (e == nullptr) return MPI_ERR_WIN;
  if (int rc = counts_ok(origin_count, target_count)) return rc;
  if (result_count < 0) return MPI_ERR_COUNT;
  if (result_datatype == MPI_DATATYPE_NULL) return MPI_ERR_TYPE;
  return e->win->get_accumulate(origin_addr, origin_count, origin_datatype, result_addr,
                                result_count, result_datatype, target_rank, target_disp,
                                target_count, target_datatype, op);
}

int mmpi_impl_Fetch_and_op(const void* origin_addr, void* result_addr, MPI_Datatype datatype,
                           int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  WinEntry* e = find_win(win);
  if (e == nullptr) return MPI_ERR_WIN;
  if (datatype == MPI_DATATYPE_NULL) return MPI_ERR_TYPE;
  return e->win->get_accumulate(origin_addr, 1, datatype, result_addr, 1, datatype, target_rank,
                                target_disp, 1, datatype, op);
}

int mmpi_impl_Compare_and_swap(const void* origin_addr, const void* compare_addr, void* result_addr,
                               MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                               MPI_Win win) {
  WinEntry* e = find_win(win);
  if (e == nullptr) return MPI_ERR_WIN;
  return e->win->compare_and_swap(origin_addr, compare_addr, result_addr, datatype, target_rank,
                                  target_disp);
}

int mmpi_impl_Rput(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
  return request_op(win, counts_ok(origin_count, target_count), request,
                    [&](auto& w, const auto& st) {
                      return w.put(origin_addr, origin_count, origin_datatype, target_rank,
                                   target_disp, target_count, target_datatype, st);
                    });
}

int mmpi_impl_Rget(void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
  return request_op(win, counts_ok(origin_count, target_count), request,
                    [&](auto& w, const auto& st) {
                      return w.get(origin_addr, origin_count, origin_datatype, target_rank,
                                   target_disp, target_count, target_datatype, st);
                    });
}

int mmpi_impl_Raccumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                          int target_rank, MPI_Aint target_disp, int target_count,
                          MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                          MPI_Request* request) {
  return request_op(win, counts_ok(origin_count, target_count), request,
                    [&](auto& w, const auto& st) {
                      return w.accumulate(origin_addr, origin_count, origin_datatype, target_rank,
                                          target_disp, target_count, target_datatype, op, st);
                    });
}

int mmpi_impl_Rget_accumulate(const void* origin_addr, int origin_count,
                              MPI_Datatype origin_datatype, void* result_addr, int result_count,
                              MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                              int target_count, MPI_Datatype target_datatype, MPI_Op op,
                              MPI_Win win, MPI_Request* request) {
  return request_op(win, result_count < 0 ? MPI_ERR_COUNT : counts_ok(origin_count, target_count),
                    request, [&](auto& w, const auto& st) {
                      return w.get_accumulate(origin_addr, origin_count, origin_datatype,
                                              result_addr, result_count, result_datatype,
                                              target_rank, target_disp, target_count,
                                              target_datatype, op, st);
                    });
}

}  // extern "C"
