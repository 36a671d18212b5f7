// zipper-tune --check (check_report.h).
#include "check_report.h"

#include <mmpi.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

namespace zipper::tune {

using nlohmann::json;

// --check: the tuning file in MMPI_TUNING_FILE must give every choice of the report.
int check_report(const std::string& path, int rank) {
  std::ifstream in(path);
  json rep;
  try {
    rep = json::parse(in);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zipper-tune: --check: cannot read %s: %s\n", path.c_str(), e.what());
    return 2;
  }
  int bad = 0, checked = 0;
  for (const auto& p : rep.at("points")) {
    const std::string c = p.at("collective");
    const auto& want = p.at("tuned");
    const char* alg = nullptr;
    int n = 0;
    MPI_Aint seg = 0;
    if (MMPIX_Coll_choice(c.c_str(), static_cast<MPI_Aint>(p.at("bytes").get<std::uint64_t>()),
                          &alg, &n, &seg) != MPI_SUCCESS)
      return 2;
    ++checked;
    const bool takes_n = want.at("n").get<int>() > 0;
    if (want.at("algorithm") != alg || (takes_n && want.at("n").get<int>() != n) ||
        want.at("segment_bytes").get<MPI_Aint>() != seg) {
      ++bad;
      if (rank == 0)
        std::fprintf(stderr,
                     "zipper-tune: --check: %s at %llu bytes: file gives %s n=%d seg=%lld, "
                     "report says %s\n",
                     c.c_str(), (unsigned long long)p.at("bytes").get<std::uint64_t>(), alg, n,
                     (long long)seg, want.dump().c_str());
    }
  }
  if (rank == 0)
    std::printf("zipper-tune: --check: %d of %d choices read back from the tuning file\n",
                checked - bad, checked);
  return bad == 0 && checked > 0 ? 0 : 1;
}

}  // namespace zipper::tune
