// Where each MPI_COMM_WORLD rank runs when the launcher placed the ranks by
// a rank map (zipper-run --rank-map, docs/placement.md). The wire addresses
// a rank by its virtual rank, and each site's virtual ranks stay one
// contiguous range (sites.h; zipperd routes by them); the map only changes
// which MPI_COMM_WORLD rank each virtual rank is. So MMPI_COMM_WORLD is a
// communicator whose rank w is virtual rank vrank_of[w] (rank_map.h), and
// the application sees the ranks the map names, wherever they run.
//
// MMPI_RANK_MAP (set by zipper-run): each site's MPI_COMM_WORLD ranks, sites
// in site order separated by ';', each site's ranks ascending as
// comma-separated ranks or ranges "a-b", e.g. "0-3,8-11;4-7,12-15". Site s's
// k-th listed rank runs as virtual rank ranks_in(s).first + k, so that within
// a site the order of MPI_COMM_WORLD ranks and of native ranks agree.
//
// Pure data, independent of MPI, so that it is unit-tested on its own.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sites.h"

namespace zipper::client {

/// vrank_of[w] for every MPI_COMM_WORLD rank w of `sites`, from
/// MMPI_RANK_MAP's `text` (empty: block order, vrank_of[w] = w). Returns
/// nullopt and sets *why (naming MMPI_RANK_MAP and the fault) for a text
/// that does not parse, another number of sites than `sites` has, a site
/// given another number of ranks than it runs, ranks not ascending within
/// a site, or a rank outside the world or listed twice.
std::optional<std::vector<int>> world_placement_from(std::string_view text, const SiteMap& sites,
                                                     std::string* why);

}  // namespace zipper::client
