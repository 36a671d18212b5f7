// Snapshot <-> JSON (nlohmann-json): the control socket's answer to
// `status`, `jobs`, `links` and `pools`, and what `zipperctl --json` prints.
// Field names are stable for scripts; units are in the names (_bytes, _s).
#pragma once

#include <nlohmann/json.hpp>

#include "snapshot.h"

namespace zipper::forwarder {

nlohmann::json to_json(const Snapshot& s);

}  // namespace zipper::forwarder
