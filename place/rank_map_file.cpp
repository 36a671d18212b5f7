#include "rank_map_file.h"

#include <stdexcept>

namespace zipper::place {

namespace {
constexpr const char* kFormat = "zipper-rank-map";
constexpr int kVersion = 1;
}  // namespace

nlohmann::json rank_map_json(const std::vector<std::string>& site_names,
                             const std::vector<int>& site_of) {
  std::vector<std::vector<int>> ranks(site_names.size());
  for (std::size_t r = 0; r < site_of.size(); ++r) {
    const int s = site_of[r];
    if (s < 0 || s >= static_cast<int>(site_names.size()))
      throw std::invalid_argument("rank map: site " + std::to_string(s) + " has no name");
    ranks[static_cast<std::size_t>(s)].push_back(static_cast<int>(r));
  }
  nlohmann::json j{{"format", kFormat}, {"version", kVersion}, {"sites", nlohmann::json::array()}};
  for (std::size_t s = 0; s < site_names.size(); ++s)
    j["sites"].push_back({{"name", site_names[s]}, {"ranks", ranks[s]}});
  return j;
}

std::vector<int> rank_map_from_json(const nlohmann::json& j,
                                    const std::vector<std::string>& site_names) {
  if (!j.is_object() || j.value("format", "") != kFormat || j.value("version", 0) != kVersion)
    throw std::runtime_error(std::string("not a rank map of format \"") + kFormat + "\" version " +
                             std::to_string(kVersion));
  try {
    const auto& sites = j.at("sites");
    if (sites.size() != site_names.size())
      throw std::runtime_error("rank map has " + std::to_string(sites.size()) +
                               " sites, expected " + std::to_string(site_names.size()));
    std::size_t world = 0;
    for (const auto& s : sites) world += s.at("ranks").size();
    std::vector<int> site_of(world, -1);
    for (std::size_t s = 0; s < sites.size(); ++s) {
      if (sites[s].at("name").get<std::string>() != site_names[s])
        throw std::runtime_error("rank map: site " + std::to_string(s) + " is \"" +
                                 sites[s].at("name").get<std::string>() + "\", expected \"" +
                                 site_names[s] + "\"");
      for (const auto& r : sites[s].at("ranks")) {
        const long long w = r.get<long long>();
        if (w < 0 || w >= static_cast<long long>(world) ||
            site_of[static_cast<std::size_t>(w)] >= 0)
          throw std::runtime_error("rank map: rank " + std::to_string(w) +
                                   " is out of range or listed twice");
        site_of[static_cast<std::size_t>(w)] = static_cast<int>(s);
      }
    }
    return site_of;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("rank map: ") + e.what());
  }
}

}  // namespace zipper::place
