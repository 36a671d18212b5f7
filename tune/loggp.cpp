#include "loggp.h"

#include <algorithm>

namespace zipper::tune {
namespace {

constexpr std::uint64_t kLatencySizes = 1024;  // bytes: sizes whose PRTT gives L

// Piecewise-linear interpolation of field f over the points; beyond the last
// point the slope is `tail_slope` (per byte).
template <typename F>
double interpolate(const std::vector<SizePoint>& pts, double bytes, F f, double tail_slope) {
  if (pts.empty()) return 0;
  if (bytes <= static_cast<double>(pts.front().bytes)) return f(pts.front());
  for (std::size_t i = 1; i < pts.size(); ++i) {
    const double b0 = static_cast<double>(pts[i - 1].bytes), b1 = static_cast<double>(pts[i].bytes);
    if (bytes <= b1) {
      const double w = b1 > b0 ? (bytes - b0) / (b1 - b0) : 1.0;
      return f(pts[i - 1]) + w * (f(pts[i]) - f(pts[i - 1]));
    }
  }
  return f(pts.back()) + (bytes - static_cast<double>(pts.back().bytes)) * tail_slope;
}

}  // namespace

double LinkParams::g(double bytes) const {
  return std::max(bytes * G_load, interpolate(
                                      points, bytes, [](const SizePoint& p) { return p.g; }, G));
}
double LinkParams::o_s(double bytes) const {
  // Overheads grow with the copy, not the wire: keep the last value's trend flat.
  return interpolate(
      points, bytes, [](const SizePoint& p) { return p.o_s; }, 0.0);
}
double LinkParams::o_r(double bytes) const {
  return interpolate(
      points, bytes, [](const SizePoint& p) { return p.o_r; }, 0.0);
}

LinkParams derive(const std::vector<PrttSample>& samples, int n) {
  LinkParams out;
  if (samples.empty() || n < 2) return out;
  for (const PrttSample& s : samples) {
    SizePoint p;
    p.bytes = s.bytes;
    p.rtt = s.prtt1;
    p.g = std::max(0.0, (s.prttn - s.prtt1) / (n - 1));
    p.o_s = std::max(0.0, (s.prttd - s.prtt1) / (n - 1) - s.d);
    p.o_r = std::max(0.0, s.o_r);
    out.points.push_back(p);
  }
  out.g0 = out.points.front().g;
  // L = PRTT(1,0,s)/2 - g(s) at the small sizes (Kielmann et al. take the
  // smallest); the median over sizes up to kLatencySizes keeps one disturbed
  // sample on a busy machine from setting it.
  std::vector<double> ls;
  for (const SizePoint& p : out.points)
    if (p.bytes <= kLatencySizes || ls.empty()) ls.push_back(p.rtt / 2 - p.g);
  std::sort(ls.begin(), ls.end());
  const std::size_t h = ls.size() / 2;
  out.L = std::max(0.0, ls.size() % 2 ? ls[h] : (ls[h - 1] + ls[h]) / 2);
  // G: least-squares slope of g(s) over the largest sizes (at least two).
  const std::uint64_t fit_from = out.points.back().bytes / 4;
  std::vector<const SizePoint*> fit;
  for (const SizePoint& p : out.points)
    if (p.bytes >= fit_from) fit.push_back(&p);
  if (fit.size() < 2 && out.points.size() >= 2)
    fit = {&out.points[out.points.size() - 2], &out.points.back()};
  if (fit.size() >= 2) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (const SizePoint* p : fit) {
      const double x = static_cast<double>(p->bytes);
      sx += x;
      sy += p->g;
      sxx += x * x;
      sxy += x * p->g;
    }
    const double k = static_cast<double>(fit.size()), den = k * sxx - sx * sx;
    if (den > 0) out.G = std::max(0.0, (k * sxy - sx * sy) / den);
  }
  return out;
}

void set_load_from_barrier(LinkParams& p, int P, double t_us) {
  if (P < 2 || t_us <= 0) return;
  int rounds = 0;
  while ((1 << rounds) < P) ++rounds;
  p.L_load = std::max(p.L, t_us / rounds - p.g(0));
}

std::vector<Threshold> detect_thresholds(const std::vector<SizePoint>& pts, double rel,
                                         double min_jump_us) {
  std::vector<Threshold> out;
  if (pts.size() < 3) return out;
  auto slope = [&](std::size_t i) {  // µs per byte between point i and i+1
    const double db = static_cast<double>(pts[i + 1].bytes - pts[i].bytes);
    return db > 0 ? (pts[i + 1].rtt - pts[i].rtt) / db : 0.0;
  };
  for (std::size_t i = 0; i + 1 < pts.size(); ++i) {
    // The trend: the steeper of the neighbouring steps' slopes, so that the
    // bend where the wire starts to dominate (e.g. a TBF burst running out)
    // is not taken for a protocol change; a step has flat slopes both sides.
    double trend = 0;
    if (i > 0) trend = std::max(trend, slope(i - 1));
    if (i + 2 < pts.size()) trend = std::max(trend, slope(i + 1));
    const double db = static_cast<double>(pts[i + 1].bytes - pts[i].bytes);
    const double expected = trend * db, actual = pts[i + 1].rtt - pts[i].rtt;
    const double excess = actual - expected;
    if (excess >= min_jump_us && excess >= rel * pts[i].rtt)
      out.push_back({pts[i].bytes, pts[i + 1].bytes, actual - expected});
  }
  return out;
}

}  // namespace zipper::tune
