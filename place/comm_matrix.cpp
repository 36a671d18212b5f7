#include "comm_matrix.h"

#include <fstream>
#include <limits>
#include <stdexcept>

namespace zipper::place {

namespace {

constexpr const char* kFormat = "zipper-comm-matrix";
constexpr int kVersion = 1;

[[noreturn]] void bad(const std::string& what) { throw std::runtime_error(what); }

}  // namespace

CommMatrix comm_matrix_from_json(const nlohmann::json& j) {
  if (!j.is_object() || j.value("format", "") != kFormat)
    bad(std::string("not a communication matrix (format is not \"") + kFormat + "\")");
  if (j.value("version", 0) != kVersion)
    bad("communication matrix version " + j.value("version", nlohmann::json(0)).dump() +
        "; this zipper reads version " + std::to_string(kVersion));
  CommMatrix m;
  try {
    std::int64_t world = 0;
    for (const auto& s : j.at("sites")) {
      m.site_names.push_back(s.at("name").get<std::string>());
      const int n = s.at("ranks").get<int>();
      if (n < 1) bad("site \"" + m.site_names.back() + "\" has " + std::to_string(n) + " ranks");
      m.site_ranks.push_back(n);
      world += n;
      if (world > std::numeric_limits<int>::max()) bad("sites: more ranks than an int holds");
    }
    if (m.site_ranks.empty()) bad("sites: none");
    m.site_of = j.at("site_of").get<std::vector<int>>();
    if (static_cast<std::int64_t>(m.site_of.size()) != world)
      bad("site_of has " + std::to_string(m.site_of.size()) + " entries for " +
          std::to_string(world) + " ranks");
    std::vector<int> count(m.site_ranks.size(), 0);
    for (int s : m.site_of) {
      if (s < 0 || s >= static_cast<int>(count.size()))
        bad("site_of names site " + std::to_string(s));
      ++count[static_cast<std::size_t>(s)];
    }
    if (count != m.site_ranks) bad("site_of does not give each site its number of ranks");
    for (const auto& row : j.at("traffic")) {
      if (!row.is_array() || row.size() != 4 || !row[0].is_number_integer() ||
          !row[1].is_number_integer() || !row[2].is_number_unsigned() ||
          !row[3].is_number_unsigned())
        bad("traffic: a row is not [src, dst, bytes, messages] of integers (bytes, messages >= "
            "0): " +
            row.dump());
      Traffic t{row[0].get<int>(), row[1].get<int>(), row[2].get<std::uint64_t>(),
                row[3].get<std::uint64_t>()};
      if (t.src < 0 || t.dst < 0 || t.src >= world || t.dst >= world)
        bad("traffic: row [" + std::to_string(t.src) + ", " + std::to_string(t.dst) +
            ", ...] names a rank outside 0.." + std::to_string(world - 1));
      m.traffic.push_back(t);
    }
  } catch (const nlohmann::json::exception& e) {
    bad(std::string("communication matrix: ") + e.what());
  }
  return m;
}

nlohmann::json comm_matrix_json(const CommMatrix& m) {
  nlohmann::json j{{"format", kFormat}, {"version", kVersion}};
  j["sites"] = nlohmann::json::array();
  for (std::size_t s = 0; s < m.site_names.size(); ++s)
    j["sites"].push_back({{"name", m.site_names[s]}, {"ranks", m.site_ranks[s]}});
  j["site_of"] = m.site_of;
  j["traffic"] = nlohmann::json::array();
  for (const Traffic& t : m.traffic) j["traffic"].push_back({t.src, t.dst, t.bytes, t.messages});
  return j;
}

CommMatrix read_comm_matrix(const std::string& path) {
  std::ifstream in(path);
  if (!in) bad(path + ": cannot open");
  try {
    return comm_matrix_from_json(nlohmann::json::parse(in));
  } catch (const nlohmann::json::exception& e) {
    bad(path + ": " + e.what());
  } catch (const std::runtime_error& e) {
    bad(path + ": " + e.what());
  }
}

}  // namespace zipper::place
