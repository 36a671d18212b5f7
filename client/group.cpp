#include "group.h"

#include <algorithm>
#include <unordered_set>

namespace zipper::client {

int Group::rank_of_world(int w) const {
  const auto it = std::find(world.begin(), world.end(), w);
  return it == world.end() ? -1 : static_cast<int>(it - world.begin());
}

namespace {

// True when every rank is in 0..size-1 and none repeats.
bool valid_distinct(const std::vector<int>& ranks, int size) {
  std::vector<bool> seen(static_cast<std::size_t>(size), false);
  for (int r : ranks) {
    if (r < 0 || r >= size || seen[static_cast<std::size_t>(r)]) return false;
    seen[static_cast<std::size_t>(r)] = true;
  }
  return true;
}

}  // namespace

std::optional<Group> group_incl(const Group& g, const std::vector<int>& ranks) {
  if (!valid_distinct(ranks, g.size())) return std::nullopt;
  Group out;
  for (int r : ranks) out.world.push_back(g.world[static_cast<std::size_t>(r)]);
  return out;
}

std::optional<Group> group_excl(const Group& g, const std::vector<int>& ranks) {
  if (!valid_distinct(ranks, g.size())) return std::nullopt;
  std::vector<bool> drop(static_cast<std::size_t>(g.size()), false);
  for (int r : ranks) drop[static_cast<std::size_t>(r)] = true;
  Group out;
  for (int r = 0; r < g.size(); ++r)
    if (!drop[static_cast<std::size_t>(r)])
      out.world.push_back(g.world[static_cast<std::size_t>(r)]);
  return out;
}

std::optional<std::vector<int>> expand_ranges(const std::vector<std::array<int, 3>>& ranges,
                                              int size) {
  std::vector<int> out;
  for (const auto& [first, last, stride] : ranges) {
    if (stride == 0) return std::nullopt;
    if (first < 0 || first >= size || last < 0 || last >= size) return std::nullopt;
    // MPI-3.1 §6.3.2: a triplet whose stride points away from `last` names no rank.
    if ((stride > 0 && first > last) || (stride < 0 && first < last)) continue;
    for (long r = first; stride > 0 ? r <= last : r >= last; r += stride)
      out.push_back(static_cast<int>(r));
  }
  return out;
}

std::optional<Group> group_range_incl(const Group& g,
                                      const std::vector<std::array<int, 3>>& ranges) {
  auto ranks = expand_ranges(ranges, g.size());
  if (!ranks) return std::nullopt;
  return group_incl(g, *ranks);
}

std::optional<Group> group_range_excl(const Group& g,
                                      const std::vector<std::array<int, 3>>& ranges) {
  auto ranks = expand_ranges(ranges, g.size());
  if (!ranks) return std::nullopt;
  return group_excl(g, *ranks);
}

Group group_union(const Group& a, const Group& b) {
  Group out = a;
  const std::unordered_set<int> in_a(a.world.begin(), a.world.end());
  for (int w : b.world)
    if (!in_a.count(w)) out.world.push_back(w);
  return out;
}

Group group_intersection(const Group& a, const Group& b) {
  const std::unordered_set<int> in_b(b.world.begin(), b.world.end());
  Group out;
  for (int w : a.world)
    if (in_b.count(w)) out.world.push_back(w);
  return out;
}

Group group_difference(const Group& a, const Group& b) {
  const std::unordered_set<int> in_b(b.world.begin(), b.world.end());
  Group out;
  for (int w : a.world)
    if (!in_b.count(w)) out.world.push_back(w);
  return out;
}

GroupRelation group_compare(const Group& a, const Group& b) {
  if (a.world == b.world) return GroupRelation::kIdent;
  if (a.size() != b.size()) return GroupRelation::kUnequal;
  std::vector<int> sa = a.world, sb = b.world;
  std::sort(sa.begin(), sa.end());
  std::sort(sb.begin(), sb.end());
  return sa == sb ? GroupRelation::kSimilar : GroupRelation::kUnequal;
}

std::optional<std::vector<int>> group_translate(const Group& a, const std::vector<int>& ranks,
                                                const Group& b, int undefined, int proc_null) {
  std::vector<int> out;
  out.reserve(ranks.size());
  for (int r : ranks) {
    if (r == proc_null) {
      out.push_back(proc_null);
      continue;
    }
    if (r < 0 || r >= a.size()) return std::nullopt;
    const int in_b = b.rank_of_world(a.world[static_cast<std::size_t>(r)]);
    out.push_back(in_b < 0 ? undefined : in_b);
  }
  return out;
}

}  // namespace zipper::client
