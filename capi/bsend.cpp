#include "bsend.h"

#include <mmpi.h>
#include <mmpi_impl_generated.h>

#include <algorithm>
#include <climits>
#include <vector>

#include "../client/datatype.h"
#include "../client/engine.h"
#include "../client/runtime.h"
#include "coll_checks.h"
#include "progress.h"

namespace zipper::capi {

namespace {

// The attached buffer and the buffered sends still using parts of it.
struct Slot {
  int offset = 0, bytes = 0;       // bytes include MPI_BSEND_OVERHEAD
  client::Request* req = nullptr;  // owned: deleted by reap()
};
struct Attached {
  char* base = nullptr;
  int size = 0;
  bool attached = false;
  std::vector<Slot> live;  // by offset
} g_buf;

// Frees the slots of completed sends. Returns true when none is left.
bool reap() {
  client::Runtime* rt = client::Runtime::get();
  std::erase_if(g_buf.live, [rt](const Slot& s) {
    if (!rt->engine().test(*s.req)) return false;
    delete s.req;
    return true;
  });
  return g_buf.live.empty();
}

// First fit among the gaps between live slots; -1 if none is large enough.
int find_space(int need) {
  int end = 0;
  for (const Slot& s : g_buf.live) {
    if (s.offset - end >= need) return end;
    end = s.offset + s.bytes;
  }
  return g_buf.size - end >= need ? end : -1;
}

}  // namespace

int bsend_start(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  client::Runtime* rt = nullptr;
  std::shared_ptr<client::Comm> c;
  if (int rc = lookup(comm, &rt, &c)) return rc;
  if (int rc = check_buf(count, type)) return rc;
  if (dest == MPI_PROC_NULL) return MPI_SUCCESS;
  // An attached buffer holds at most INT_MAX bytes (its size is an int):
  // a message that cannot fit is refused before MPI_Pack_size's int overflows.
  if (static_cast<MPI_Count>(count) * client::type_size(type) > INT_MAX - MPI_BSEND_OVERHEAD)
    return MPI_ERR_BUFFER;
  int packed = 0;
  if (int rc = MPI_Pack_size(count, type, MPI_COMM_SELF, &packed)) return rc;
  const int need = packed + MPI_BSEND_OVERHEAD;
  reap();
  const int offset = g_buf.attached ? find_space(need) : -1;
  if (offset < 0) return MPI_ERR_BUFFER;
  char* data = g_buf.base + offset + MPI_BSEND_OVERHEAD;
  int pos = 0;
  if (packed > 0)
    if (int rc = MPI_Pack(buf, count, type, data, packed, &pos, MPI_COMM_SELF)) return rc;
  MPI_Request h = MPI_REQUEST_NULL;
  const int rc = mmpi_impl_Isend(data, pos, MPI_PACKED, dest, tag, comm, &h);
  if (h == MPI_REQUEST_NULL) return rc;
  if (rc != MPI_SUCCESS) {  // completed at start with its error: no space held
    take(&h);               // frees it
    return rc;
  }
  const Slot slot{offset, need, take(&h).release()};
  g_buf.live.insert(
      std::upper_bound(g_buf.live.begin(), g_buf.live.end(), slot,
                       [](const Slot& a, const Slot& b) { return a.offset < b.offset; }),
      slot);
  return MPI_SUCCESS;
}

}  // namespace zipper::capi

using namespace zipper::capi;

extern "C" {

int mmpi_impl_Buffer_attach(void* buffer, int size) {
  if (size < 0) return MPI_ERR_ARG;
  if (g_buf.attached || (buffer == nullptr && size > 0)) return MPI_ERR_BUFFER;
  g_buf = Attached{static_cast<char*>(buffer), size, true, {}};
  return MPI_SUCCESS;
}

int mmpi_impl_Buffer_detach(void* buffer_addr, int* size) {
  if (buffer_addr == nullptr || size == nullptr) return MPI_ERR_ARG;
  if (!g_buf.attached) {  // as MPICH: nothing attached gives (NULL, 0)
    *static_cast<void**>(buffer_addr) = nullptr;
    *size = 0;
    return MPI_SUCCESS;
  }
  // MPI: detaching waits until every buffered message has been sent. A
  // peer's or zipperd's failure completes the sends with an error.
  if (zipper::client::Runtime* rt = zipper::client::Runtime::get())
    rt->engine().wait_until(reap, true);
  *static_cast<void**>(buffer_addr) = g_buf.base;
  *size = g_buf.size;
  g_buf = Attached{};
  return MPI_SUCCESS;
}

int mmpi_impl_Bsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm) {
  return bsend_start(buf, count, datatype, dest, tag, comm);
}

int mmpi_impl_Ibsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                     MPI_Comm comm, MPI_Request* request) {
  if (request == nullptr) return MPI_ERR_REQUEST;
  const int rc = bsend_start(buf, count, datatype, dest, tag, comm);
  if (rc != MPI_SUCCESS) return rc;
  // The message is in the attached buffer: the request is complete at once.
  auto r = std::make_unique<zipper::client::Request>();
  r->complete = true;
  *request = to_handle(std::move(r));
  return MPI_SUCCESS;
}

}  // extern "C"
