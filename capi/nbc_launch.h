// Starting a non-blocking collective's schedule (collectives/schedule.h) and
// handing it out as an MMPI_Request, shared by capi/nbc.cpp and
// capi/neighbor.cpp.
#pragma once

#include <memory>

#include "../collectives/schedule.h"
#include "../collectives/tags.h"
#include "coll_checks.h"
#include "handles.h"
#include "progress.h"

namespace zipper::capi {

/// An empty schedule for the next non-blocking collective on t.comm: the
/// n-th one gets the same tag on every rank (MPI: all ranks start them in
/// the same order).
inline std::unique_ptr<coll::Schedule> nbc_schedule(const coll::Topology& t) {
  const int tag = coll::kTagNbcBase + static_cast<int>(t.comm->nbc_started++ % coll::kNbcTagSpan);
  return std::make_unique<coll::Schedule>(t, tag);
}

/// Starts `s` and hands it out as *request (kind kProgressable; its errors
/// go to the communicator's handler). A failure to start aborts the job, as
/// for the blocking collectives: the other ranks could not complete it.
inline int nbc_launch(const char* what, std::unique_ptr<coll::Schedule> s, MPI_Request* request) {
  join_progress();
  const coll::Topology t = s->topology();
  if (int rc = s->start()) return finish_named(what, "schedule", t, rc);
  auto r = std::make_unique<client::Request>();
  r->kind = client::RequestKind::kProgressable;
  r->comm = t.comm;
  r->progressable = std::move(s);
  *request = to_handle(std::move(r));
  return MPI_SUCCESS;
}

}  // namespace zipper::capi
