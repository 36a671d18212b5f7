// The library's collective algorithms (library_table.h).
#include "library_table.h"

#include <mmpi.h>

namespace zipper::tune {

using nlohmann::json;

// The library's algorithm table through MMPIX_Coll_algorithm (never a copy).
std::vector<coll::AlgorithmTraits> library_algorithms(const std::string& collective) {
  std::vector<coll::AlgorithmTraits> out;
  const char* name = nullptr;
  int n = 0, s = 0;
  for (int i = 0; MMPIX_Coll_algorithm(collective.c_str(), i, &name, &n, &s) == MPI_SUCCESS; ++i) {
    const auto c = coll::collective_named(collective);
    const auto a = c ? coll::algorithm_named(*c, name) : std::nullopt;
    if (a) out.push_back({*a, coll::name_of(*a), n != 0, s != 0});
  }
  return out;
}

json list_algorithms(const std::vector<std::string>& collectives) {
  json j = json::object();
  for (const auto& c : collectives) {
    json arr = json::array();
    const char* name = nullptr;
    int n = 0, s = 0;
    for (int i = 0; MMPIX_Coll_algorithm(c.c_str(), i, &name, &n, &s) == MPI_SUCCESS; ++i)
      arr.push_back({{"name", name}, {"takes_senders", n != 0}, {"takes_segment", s != 0}});
    j[c] = arr;
  }
  return j;
}

}  // namespace zipper::tune
