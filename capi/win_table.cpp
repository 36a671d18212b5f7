#include "win_table.h"

#include <map>
#include <mutex>

namespace zipper::capi {

namespace {
// The progress thread (client/rma_progress.h) never looks windows up here,
// but the application's threads may: guard the map itself.
std::mutex table_mu;
std::map<MPI_Win, std::unique_ptr<WinEntry>>& table() {
  static std::map<MPI_Win, std::unique_ptr<WinEntry>> t;
  return t;
}
}  // namespace

WinEntry* find_win(MPI_Win w) {
  std::lock_guard<std::mutex> g(table_mu);
  const auto it = table().find(w);
  return it == table().end() ? nullptr : it->second.get();
}

void add_win(MPI_Win w, std::unique_ptr<WinEntry> e) {
  std::lock_guard<std::mutex> g(table_mu);
  table()[w] = std::move(e);
}

std::unique_ptr<WinEntry> remove_win(MPI_Win w) {
  std::lock_guard<std::mutex> g(table_mu);
  const auto it = table().find(w);
  if (it == table().end()) return nullptr;
  auto e = std::move(it->second);
  table().erase(it);
  return e;
}

}  // namespace zipper::capi
