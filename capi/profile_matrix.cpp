#include "profile_matrix.h"

#include <mmpi_impl_generated.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "../place/comm_matrix.h"
#include "../proto/unique_fd.h"

namespace zipper::capi {

namespace {

using client::Runtime;

void say(const Runtime& rt, const std::string& text) {
  std::fprintf(stderr, "mmpi[rank %d]: MMPI_PROFILE: %s\n", rt.world()->rank(), text.c_str());
  std::fflush(stderr);
}

// Site s's name in the matrix: A, B, ... as zipper-run names its clusters.
std::string site_name(int s) {
  return s < 26 ? std::string(1, static_cast<char>('A' + s)) : "S" + std::to_string(s);
}

struct CloseFile {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// Writes `m` to `path` by a temporary file beside it renamed over it.
// Returns "" or why not.
std::string write_file(const std::string& path, const place::CommMatrix& m) {
  std::string tmp = path + ".XXXXXX";
  proto::UniqueFd fd(::mkstemp(tmp.data()));  // O_CREAT | O_EXCL, mode 0600
  if (!fd) return "cannot create " + tmp + ": " + std::strerror(errno);
  std::unique_ptr<std::FILE, CloseFile> f(::fdopen(fd.get(), "w"));
  if (!f) {
    const int e = errno;
    ::unlink(tmp.c_str());
    return "cannot write " + tmp + ": " + std::strerror(e);
  }
  fd.release();  // the FILE owns it now
  const bool written = place::write_comm_matrix(f.get(), m) && std::fflush(f.get()) == 0;
  const int e = errno;
  if (!written || std::fclose(f.release()) != 0) {
    ::unlink(tmp.c_str());
    return "cannot write " + tmp + ": " + std::strerror(written ? errno : e);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int r = errno;
    ::unlink(tmp.c_str());
    return "cannot rename " + tmp + " to " + path + ": " + std::strerror(r);
  }
  return "";
}

}  // namespace

void write_profile_matrix(Runtime& rt) {
  const std::unique_ptr<client::TrafficProfile> profile = rt.stop_profile();
  if (!profile) return;
  const std::string path = rt.settings().env.get("MMPI_PROFILE");
  const client::RankMap& map = rt.world()->map();
  const int me = rt.world()->rank(), size = rt.world()->size();
  // A gather across a lost link would fail the job on its way out.
  if (rt.engine().link_lost()) {
    if (me == 0) say(rt, "the link to the other cluster was lost: " + path + " not written");
    return;
  }
  // This rank's row, destinations as MPI_COMM_WORLD ranks in their order
  // (under a rank map not the virtual ranks'): dst, bytes, messages.
  std::vector<client::TrafficProfile::Row> cells = profile->rows();
  for (auto& c : cells) c.dst = map.rank_of_world(c.dst);
  std::sort(cells.begin(), cells.end(), [](const auto& a, const auto& b) { return a.dst < b.dst; });
  std::vector<std::uint64_t> row;
  for (const auto& c : cells) {
    row.push_back(static_cast<std::uint64_t>(c.dst));
    row.push_back(c.bytes);
    row.push_back(c.messages);
  }
  const MPI_Comm world = rt.world_handle();
  int n = static_cast<int>(row.size());  // at most 3 x kMaxWorldSize
  std::vector<int> counts(me == 0 ? size : 0), displs(counts.size());
  if (mmpi_impl_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, world) != MPI_SUCCESS) {
    say(rt, "gathering the rows failed: " + path + " not written");
    return;
  }
  long long total = 0;
  for (int r = 0; r < static_cast<int>(counts.size()); ++r) {
    displs[static_cast<std::size_t>(r)] = static_cast<int>(std::min<long long>(total, INT_MAX));
    total += counts[static_cast<std::size_t>(r)];
  }
  // Gatherv counts in ints: a matrix beyond them (over 715 million rows) is refused whole.
  int fits = total <= INT_MAX ? 1 : 0;
  if (mmpi_impl_Bcast(&fits, 1, MPI_INT, 0, world) != MPI_SUCCESS || !fits) {
    if (me == 0)
      say(rt, std::to_string(total / 3) + " rows are more than one gather takes: " + path +
                  " not written");
    return;
  }
  std::vector<std::uint64_t> all(me == 0 ? static_cast<std::size_t>(total) : 0);
  if (mmpi_impl_Gatherv(row.data(), n, MPI_UINT64_T, all.data(), counts.data(), displs.data(),
                        MPI_UINT64_T, 0, world) != MPI_SUCCESS) {
    say(rt, "gathering the rows failed: " + path + " not written");
    return;
  }
  if (me != 0) return;

  const client::SiteMap& sites = rt.sites();
  place::CommMatrix m;
  for (int s = 0; s < sites.sites(); ++s) {
    m.site_names.push_back(site_name(s));
    m.site_ranks.push_back(sites.ranks_in(s).size());
  }
  m.site_of.resize(static_cast<std::size_t>(size));
  for (int w = 0; w < size; ++w)
    m.site_of[static_cast<std::size_t>(w)] = sites.site_of(map.world(w));
  m.traffic.reserve(all.size() / 3);
  for (int src = 0; src < size; ++src) {
    const auto first = static_cast<std::size_t>(displs[static_cast<std::size_t>(src)]);
    const auto end = first + static_cast<std::size_t>(counts[static_cast<std::size_t>(src)]);
    for (std::size_t i = first; i + 2 < end; i += 3)
      m.traffic.push_back({src, static_cast<int>(all[i]), all[i + 1], all[i + 2]});
  }
  if (const std::string why = write_file(path, m); !why.empty())
    say(rt, why + " (the matrix is lost)");
}

}  // namespace zipper::capi
