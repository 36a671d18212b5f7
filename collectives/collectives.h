// Entry points the rest of libmmpi needs from the collectives.
#pragma once

#include <string>

namespace zipper::coll {

/// Loads algorithm selection (environment, tuning file) at MMPI_Init.
/// Returns false and sets *why on invalid settings.
bool init_collectives(std::string* why);

}  // namespace zipper::coll
