// A rank map as zipper-place writes it and `zipper-run --rank-map` will read
// it (docs/placement.md, format "zipper-rank-map", JSON): for each site, by
// name, the world ranks it runs, ascending.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace zipper::place {

/// The JSON form of `site_of` (site of each world rank) over sites named
/// `site_names`. Throws std::invalid_argument for a site out of range.
nlohmann::json rank_map_json(const std::vector<std::string>& site_names,
                             const std::vector<int>& site_of);

/// site_of from the JSON form, checked: every world rank 0..n-1 exactly
/// once, sites named as `site_names` in that order. Throws std::runtime_error.
std::vector<int> rank_map_from_json(const nlohmann::json& j,
                                    const std::vector<std::string>& site_names);

}  // namespace zipper::place
