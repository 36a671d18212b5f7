// The collective algorithms of the libmmpi this tool runs on, asked through
// MMPIX_Coll_algorithm (never a copy of the table).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../collectives/selection.h"

namespace zipper::tune {

/// The algorithms of `collective` (by name), in the library's order.
std::vector<coll::AlgorithmTraits> library_algorithms(const std::string& collective);
/// {collective: [{name, takes_senders, takes_segment}]} for --list-algorithms.
nlohmann::json list_algorithms(const std::vector<std::string>& collectives);

}  // namespace zipper::tune
