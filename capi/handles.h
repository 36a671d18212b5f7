// MMPI handles and the objects behind them (object_handles.h: the object's
// address on Open MPI, a table slot on MPICH).
//   MPI_Request: a client::Request, owned by the handle. to_handle
//     gives up ownership to the user; take() gets it back (and nulls the handle).
//   MPI_Comm: the communicator's native handle, looked up in the runtime's
//     communicator table (client/comm_table.h); MPI_COMM_SELF is MMPI_COMM_SELF.
//   MPI_Group: a client::Group from new_group(), known to a table of live
//     groups; native MPI_GROUP_EMPTY is the empty group.
//   MPI_Message: a client::MatchedMessage; MPI_MESSAGE_NO_PROC
//     stands for a message from MPI_PROC_NULL.
#pragma once

#include <mpi.h>

#include <memory>

#include "../client/group.h"
#include "../client/runtime.h"
#include "object_handles.h"

namespace zipper::capi {

using RequestHandles = ObjectHandles<MPI_Request, client::Request>;
using MessageHandles = ObjectHandles<MPI_Message, client::MatchedMessage>;
using GroupHandles = ObjectHandles<MPI_Group, const client::Group>;

inline MPI_Request to_handle(client::RequestPtr r) { return RequestHandles::encode(r.release()); }
inline client::Request* peek(MPI_Request h) { return RequestHandles::decode(h); }
inline client::RequestPtr take(MPI_Request* h) {
  client::RequestPtr r(RequestHandles::release(*h));
  *h = MPI_REQUEST_NULL;
  return r;
}

/// The handle of a registered communicator: its native communicator, or
/// MPI_COMM_SELF for MMPI_COMM_SELF.
inline MPI_Comm handle_of(const client::Comm& c) {
  return c.cid() == client::kSelfCid ? MPI_COMM_SELF : c.native();
}

/// The runtime and the communicator behind `h`. Returns MPI_ERR_OTHER before
/// MMPI_Init or after MMPI_Finalize, MPI_ERR_COMM for a handle that is not an
/// MMPI communicator.
int lookup(MPI_Comm h, client::Runtime** rt, std::shared_ptr<client::Comm>* c);

/// A new group handle.
MPI_Group new_group(client::Group g);
/// The group behind `h`, or null when `h` is not a live group (MPI_ERR_GROUP).
const client::Group* find_group(MPI_Group h);
/// Frees a group from new_group (false for an unknown handle or MPI_GROUP_EMPTY).
bool free_group(MPI_Group h);

inline MPI_Message to_handle(std::unique_ptr<client::MatchedMessage> m) {
  return MessageHandles::encode(m.release());
}
/// Its own name: MPI_Message and MPI_Request are both int in MPICH.
inline std::unique_ptr<client::MatchedMessage> take_message(MPI_Message* h) {
  std::unique_ptr<client::MatchedMessage> m(MessageHandles::release(*h));
  *h = MPI_MESSAGE_NULL;
  return m;
}

}  // namespace zipper::capi
