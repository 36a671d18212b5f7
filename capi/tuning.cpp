// The tuning half of the C API extension (mmpi.h, MMPIX_*): the algorithm
// table for tools (zipper-tune, zipper-bench), the segment size override and
// the choice the selection makes. Kept apart from the collectives' C API so
// that neither depends on how the other is laid out.
#include <mmpi.h>

#include "../client/runtime.h"
#include "../collectives/collectives.h"
#include "../collectives/selection.h"
#include "../collectives/topology.h"
#include "coll_entry.h"

using namespace zipper::coll;
using namespace zipper::capi;

extern "C" {

int MMPIX_Coll_algorithm(const char* collective, int index, const char** name, int* takes_senders,
                         int* takes_segment) {
  if (collective == nullptr || name == nullptr || index < 0) return MPI_ERR_ARG;
  const auto c = collective_named(collective);
  if (!c) return MPI_ERR_ARG;
  const auto all = algorithms_for(*c);
  if (index >= static_cast<int>(all.size())) return MPI_ERR_ARG;
  // Names are string literals in selection.cpp: NUL-terminated, static.
  *name = all[index].name.data();
  if (takes_senders) *takes_senders = all[index].takes_senders ? 1 : 0;
  if (takes_segment) *takes_segment = all[index].takes_segment ? 1 : 0;
  return MPI_SUCCESS;
}

int MMPIX_Coll_set_segment(const char* collective, MPI_Aint segment_bytes) {
  if (zipper::client::Runtime::get() == nullptr) return MPI_ERR_OTHER;
  if (collective == nullptr) return MPI_ERR_ARG;
  const auto c = collective_named(collective);
  if (!c) return MPI_ERR_ARG;
  if (segment_bytes == -1) {
    selection().set_segment_override(*c, std::nullopt);
    return MPI_SUCCESS;
  }
  const auto s = static_cast<std::uint64_t>(segment_bytes);
  if (segment_bytes < 0 || (s != 0 && (s < kMinSegmentBytes || s > kMaxSegmentBytes)))
    return MPI_ERR_ARG;
  selection().set_segment_override(*c, s);
  return MPI_SUCCESS;
}

int MMPIX_Coll_choice(const char* collective, MPI_Aint bytes, const char** algorithm,
                      int* inter_senders, MPI_Aint* segment_bytes) {
  Topology t;
  if (int rc = enter(MMPI_COMM_WORLD, &t)) return rc;
  if (collective == nullptr || algorithm == nullptr || bytes < 0) return MPI_ERR_ARG;
  const auto c = collective_named(collective);
  if (!c) return MPI_ERR_ARG;
  Choice ch = selection().choose(*c, static_cast<std::uint64_t>(bytes), t.site_members);
  *algorithm = name_of(ch.algorithm).data();
  if (inter_senders)
    *inter_senders = t.clamp_senders(ch.inter_senders ? ch.inter_senders : t.max_senders());
  if (segment_bytes) *segment_bytes = static_cast<MPI_Aint>(ch.segment);
  return MPI_SUCCESS;
}

}  // extern "C"
