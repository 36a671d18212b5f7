// Making communicators: every constructor (dup, split, split_type, create,
// cart_create, cart_sub) is a split of its parent, collective over the parent.
#pragma once

#include <memory>
#include <vector>

#include "../client/communicator.h"
#include "../client/runtime.h"
#include "handles.h"  // handle_of: the new communicator's handle

namespace zipper::capi {

/// MPI_Comm_split over `parent`: members with the same `color` form one
/// communicator, ranked by (key, parent rank). Steps: one allgather of
/// (color, key, context-id proposal) over the parent (the id is the largest
/// proposal: one cross-cluster round), and a native split of the parent's
/// native communicator (this cluster's members, ranked as in the new
/// communicator), or a split of MPI_COMM_SELF where no two members in this
/// cluster share a colour. *out is null for
/// color == MPI_UNDEFINED; else the new communicator, registered in the
/// table under its handle (its native communicator). Returns MPI_ERR_ARG for
/// a negative colour other than MPI_UNDEFINED (checked before communicating;
/// every rank must pass a valid colour), or an error from the collectives.
/// `dup_of`: for MPI_Comm_dup, the parent's handle; the native
/// communicator is then Open MPI's duplicate of it (same members, same
/// order), so the attribute copy callbacks run as MPI-3.1 section 6.7.2 asks;
/// the context id then comes from a barrier and a MAX allreduce.
int split(client::Runtime& rt, const client::CommPtr& parent, int color, int key,
          std::shared_ptr<client::Comm>* out, MPI_Comm dup_of = MPI_COMM_NULL);

/// MPI_Comm_create_group: collective over the members of `members` only
/// (world ranks, in new rank order; the caller among them). The native
/// communicator comes from Open MPI's MPI_Comm_create_group with `tag`; the
/// context id is agreed by a MAX allreduce over the new members alone, on
/// the parent's collective context. Returns MPI_ERR_GROUP when the caller is
/// not a member.
int create_group(client::Runtime& rt, const client::CommPtr& parent,
                 const std::vector<int>& members, int tag, std::shared_ptr<client::Comm>* out);

}  // namespace zipper::capi
