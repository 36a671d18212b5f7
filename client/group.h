// MPI groups: an ordered set of processes, each named by its virtual world
// rank. Group rank i is the i-th entry. The set operations follow MPI-3.1
// §6.3.2 (order of the results included).
//
// Pure data, independent of MPI, so that it is unit-tested on its own. The
// functions taking rank lists return nullopt for invalid input (a rank out
// of range or named twice, a zero stride), which the C API reports as
// MPI_ERR_RANK / MPI_ERR_ARG.
#pragma once

#include <array>
#include <optional>
#include <vector>

namespace zipper::client {

struct Group {
  std::vector<int> world;  // world rank of group rank i

  int size() const { return static_cast<int>(world.size()); }
  /// Group rank of world rank w, or -1 when w is not in the group.
  int rank_of_world(int w) const;
};

enum class GroupRelation { kIdent, kSimilar, kUnequal };

std::optional<Group> group_incl(const Group& g, const std::vector<int>& ranks);
std::optional<Group> group_excl(const Group& g, const std::vector<int>& ranks);
/// Ranges are (first, last, stride) triplets, MPI_Group_range_incl's.
std::optional<Group> group_range_incl(const Group& g,
                                      const std::vector<std::array<int, 3>>& ranges);
std::optional<Group> group_range_excl(const Group& g,
                                      const std::vector<std::array<int, 3>>& ranges);
/// Ranks the triplets name, in order; nullopt on a zero stride or a rank out of range.
std::optional<std::vector<int>> expand_ranges(const std::vector<std::array<int, 3>>& ranges,
                                              int size);
Group group_union(const Group& a, const Group& b);
Group group_intersection(const Group& a, const Group& b);
Group group_difference(const Group& a, const Group& b);
GroupRelation group_compare(const Group& a, const Group& b);
/// Rank in `b` of each rank of `a` in `ranks`: `undefined` when absent,
/// `proc_null` stays `proc_null`; nullopt when a rank is out of range.
std::optional<std::vector<int>> group_translate(const Group& a, const std::vector<int>& ranks,
                                                const Group& b, int undefined, int proc_null);

}  // namespace zipper::client
