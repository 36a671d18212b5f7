// The communication matrix of one run, in the file format of
// docs/placement.md ("zipper-comm-matrix", JSON): the sites and their rank
// counts, the layout the run had (site of each world rank), and the traffic
// between pairs of world ranks as [src, dst, bytes, messages] rows.
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "placement.h"

namespace zipper::place {

struct CommMatrix {
  std::vector<std::string> site_names;  // e.g. {"A", "B"}
  std::vector<int> site_ranks;          // ranks per site, in site order
  std::vector<int> site_of;             // the profiled run's site of each world rank
  std::vector<Traffic> traffic;         // one row per (src, dst) pair that exchanged data
};

/// Parses the JSON form. Throws std::runtime_error naming the field for a
/// wrong format name or version, a missing field, a site of < 1 rank, a
/// layout that does not match the sites' counts, or a row naming a rank
/// outside the world.
CommMatrix comm_matrix_from_json(const nlohmann::json& j);
/// The JSON form (format "zipper-comm-matrix", version 1).
nlohmann::json comm_matrix_json(const CommMatrix& m);
/// Reads and parses `path`; errors are "PATH: reason".
CommMatrix read_comm_matrix(const std::string& path);
/// Writes the JSON form to `out` as it goes, one traffic row per line (a
/// matrix of millions of rows never exists twice in memory; libmmpi writes
/// the profile with it, comm_matrix_write.cpp). False when a write failed.
bool write_comm_matrix(std::FILE* out, const CommMatrix& m);

}  // namespace zipper::place
