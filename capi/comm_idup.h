// MMPI_Comm_idup's operations in flight (comm_idup.cpp), as the blocking
// constructors see them.
#pragma once

#include "../client/communicator.h"
#include "../client/runtime.h"

namespace zipper::capi {

/// Drives this process's MMPI_Comm_idup operations of `parent` (those
/// duplicating it, or agreeing over it for an inter-communicator's merged
/// one) until each has finished, successfully or with the error its request
/// reports; progress continues meanwhile. Called by a blocking constructor
/// collective over all of `parent` (split, and so dup, create, cart, graph)
/// before its own steps: MPI orders collectives per communicator, so every
/// member started these idups before the constructor and finishes them
/// here too, and Open MPI's blocking split or dup of the parent's native
/// communicators never overlaps their native idups and agreement rounds,
/// which progress leaves at different points on different ranks (MPICH
/// comm/comm_idup_comm hung so at 1+3). Idups of other communicators are
/// not waited for: MPI does not order collectives across communicators.
void complete_idups_of(client::Runtime& rt, const client::Comm& parent);

}  // namespace zipper::capi
