// Group entry points of the C API (mmpi.h). Groups are local objects
// (client/group.h): no communication.
#include <mmpi.h>
#include <mmpi_impl_generated.h>

#include <array>
#include <vector>

#include "handles.h"

using zipper::client::Group;
using zipper::client::GroupRelation;
using namespace zipper::capi;

namespace {

int get(MPI_Group h, const Group** g) {
  *g = find_group(h);
  return *g ? MPI_SUCCESS : MPI_ERR_GROUP;
}

int result(std::optional<Group> g, MPI_Group* out) {
  if (!g) return MPI_ERR_RANK;
  *out = g->world.empty() ? MPI_GROUP_EMPTY : new_group(std::move(*g));
  return MPI_SUCCESS;
}

std::vector<std::array<int, 3>> triplets(int n, int ranges[][3]) {
  std::vector<std::array<int, 3>> out(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    out[static_cast<std::size_t>(i)] = {ranges[i][0], ranges[i][1], ranges[i][2]};
  return out;
}

// The calling process's world rank (groups name processes by world rank).
int my_world_rank() {
  auto* rt = zipper::client::Runtime::get();
  return rt ? rt->rank() : -1;
}

}  // namespace

extern "C" {

int mmpi_impl_Group_size(MPI_Group group, int* size) {
  const Group* g;
  if (int rc = get(group, &g)) return rc;
  *size = g->size();
  return MPI_SUCCESS;
}

int mmpi_impl_Group_rank(MPI_Group group, int* rank) {
  const Group* g;
  if (int rc = get(group, &g)) return rc;
  const int r = g->rank_of_world(my_world_rank());
  *rank = r < 0 ? MPI_UNDEFINED : r;
  return MPI_SUCCESS;
}

int mmpi_impl_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  const Group* g;
  if (int rc = get(group, &g)) return rc;
  if (n < 0) return MPI_ERR_ARG;
  return result(zipper::client::group_incl(*g, std::vector<int>(ranks, ranks + n)), newgroup);
}

int mmpi_impl_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  const Group* g;
  if (int rc = get(group, &g)) return rc;
  if (n < 0) return MPI_ERR_ARG;
  return result(zipper::client::group_excl(*g, std::vector<int>(ranks, ranks + n)), newgroup);
}

int mmpi_impl_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  const Group* g;
  if (int rc = get(group, &g)) return rc;
  if (n < 0) return MPI_ERR_ARG;
  return result(zipper::client::group_range_incl(*g, triplets(n, ranges)), newgroup);
}

int mmpi_impl_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  const Group* g;
  if (int rc = get(group, &g)) return rc;
  if (n < 0) return MPI_ERR_ARG;
  return result(zipper::client::group_range_excl(*g, triplets(n, ranges)), newgroup);
}

int mmpi_impl_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  const Group *a, *b;
  if (int rc = get(group1, &a)) return rc;
  if (int rc = get(group2, &b)) return rc;
  return result(zipper::client::group_union(*a, *b), newgroup);
}

int mmpi_impl_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  const Group *a, *b;
  if (int rc = get(group1, &a)) return rc;
  if (int rc = get(group2, &b)) return rc;
  return result(zipper::client::group_intersection(*a, *b), newgroup);
}

int mmpi_impl_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  const Group *a, *b;
  if (int rc = get(group1, &a)) return rc;
  if (int rc = get(group2, &b)) return rc;
  return result(zipper::client::group_difference(*a, *b), newgroup);
}

int mmpi_impl_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                                    int ranks2[]) {
  const Group *a, *b;
  if (int rc = get(group1, &a)) return rc;
  if (int rc = get(group2, &b)) return rc;
  if (n < 0) return MPI_ERR_ARG;
  auto out = zipper::client::group_translate(*a, std::vector<int>(ranks1, ranks1 + n), *b,
                                             MPI_UNDEFINED, MPI_PROC_NULL);
  if (!out) return MPI_ERR_RANK;
  std::copy(out->begin(), out->end(), ranks2);
  return MPI_SUCCESS;
}

int mmpi_impl_Group_compare(MPI_Group group1, MPI_Group group2, int* result) {
  const Group *a, *b;
  if (int rc = get(group1, &a)) return rc;
  if (int rc = get(group2, &b)) return rc;
  switch (zipper::client::group_compare(*a, *b)) {
    case GroupRelation::kIdent:
      *result = MPI_IDENT;
      break;
    case GroupRelation::kSimilar:
      *result = MPI_SIMILAR;
      break;
    case GroupRelation::kUnequal:
      *result = MPI_UNEQUAL;
      break;
  }
  return MPI_SUCCESS;
}

int mmpi_impl_Group_free(MPI_Group* group) {
  if (group == nullptr) return MPI_ERR_ARG;
  if (*group == MPI_GROUP_EMPTY) {
    *group = MPI_GROUP_NULL;  // MPI allows freeing the predefined empty group's handle
    return MPI_SUCCESS;
  }
  if (!free_group(*group)) return MPI_ERR_GROUP;
  *group = MPI_GROUP_NULL;
  return MPI_SUCCESS;
}

}  // extern "C"
