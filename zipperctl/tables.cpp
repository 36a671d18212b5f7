#include "tables.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace zipper::ctl {

namespace {

using nlohmann::json;
using Row = std::vector<std::string>;

// Left-aligned first column, right-aligned numbers, two spaces apart.
std::string table(const Row& head, const std::vector<Row>& rows) {
  std::vector<std::size_t> w(head.size());
  for (std::size_t i = 0; i < head.size(); ++i) w[i] = head[i].size();
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], r[i].size());
  const auto line = [&](const Row& r) {
    std::string s;
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (i) s += "  ";
      s += i == 0 ? fmt::format("{:<{}}", r[i], w[i]) : fmt::format("{:>{}}", r[i], w[i]);
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  std::string out = line(head);
  for (const auto& r : rows) out += line(r);
  return out;
}

std::string num(const json& j) { return j.dump(); }
std::string str(const json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); }
std::string secs(const json& j) { return fmt::format("{:.0f}", j.get<double>()); }

}  // namespace

std::string render_status(const json& a) {
  const json& s = a.at("status");
  std::string out = fmt::format(
      "state        {}\nuptime       {} s\njobs         {} running\nranks        {}\n"
      "relayed      {} frames, {} bytes\nconnections  {} accepted\n"
      "errors       {} protocol, {} auth\nstalls       {} credit, {} memory\n",
      s.at("state").get<std::string>(), secs(s.at("uptime_s")), num(s.at("jobs_active")),
      num(s.at("ranks_connected")), num(s.at("relayed").at("frames")),
      num(s.at("relayed").at("bytes")), num(s.at("connections_accepted")),
      num(s.at("protocol_errors")), num(s.at("auth_errors")), num(s.at("credit_stalls")),
      num(s.at("memory_stalls")));
  // Older zipperd versions do not report it.
  if (s.contains("spliced"))
    out += fmt::format("spliced      {} frames, {} bytes (no copy in zipperd)\n",
                       num(s.at("spliced").at("frames")), num(s.at("spliced").at("bytes")));
  if (s.at("jobs_refused_draining").get<std::uint64_t>() > 0)
    out += fmt::format("refused      {} new jobs while draining\n",
                       num(s.at("jobs_refused_draining")));
  if (s.contains("ranks_refused") && s.at("ranks_refused").get<std::uint64_t>() > 0)
    out += fmt::format("refused      {} ranks in all (limits, layout, drain)\n",
                       num(s.at("ranks_refused")));
  std::vector<Row> rows;
  for (const auto& d : s.at("sides"))
    rows.push_back({d.at("name").get<std::string>(), d.at("address").get<std::string>(),
                    num(d.at("connections_open")), num(d.at("received").at("bytes")),
                    num(d.at("sent").at("bytes"))});
  return out + "\n" + table({"SIDE", "ADDRESS", "CONNS", "RX_BYTES", "TX_BYTES"}, rows);
}

std::string render_jobs(const json& a) {
  std::vector<Row> rows;
  for (const auto& j : a.at("jobs")) {
    // LAYOUT: ranks per site ("4+4+2"); traffic by sending site, "bytes/frames" each.
    std::string layout, bytes, frames;
    for (const auto& r : j.at("sites")) layout += (layout.empty() ? "" : "+") + num(r);
    for (const auto& t : j.at("from_site")) {
      bytes += (bytes.empty() ? "" : "/") + num(t.at("bytes"));
      frames += (frames.empty() ? "" : "/") + num(t.at("frames"));
    }
    rows.push_back({str(j.at("job")), str(j.at("id")), j.at("state").get<std::string>(), layout,
                    num(j.at("ranks_connected")), bytes, frames, secs(j.at("age_s"))});
  }
  return table(
      {"JOB", "ID", "STATE", "LAYOUT", "RANKS", "BYTES_FROM_SITE", "FRAMES_FROM_SITE", "AGE_S"},
      rows);
}

std::string render_links(const json& a) {
  std::vector<Row> rows;
  for (const auto& l : a.at("links"))
    rows.push_back({num(l.at("id")), l.at("side").get<std::string>(),
                    l.at("peer").get<std::string>(), str(l.at("job")), num(l.at("rank")),
                    fmt::format("{}/{}", num(l.at("credits_in_use_frames")),
                                num(l.at("credits_granted_frames"))),
                    num(l.at("queued_bytes")), num(l.at("received").at("bytes")),
                    num(l.at("sent").at("bytes")), num(l.at("credit_stalls")),
                    num(l.at("memory_stalls")), num(l.at("errors"))});
  return table({"ID", "SIDE", "PEER", "JOB", "RANK", "CREDIT_FRAMES_USED/GRANTED", "QUEUED",
                "RX_BYTES", "TX_BYTES", "CREDIT_STALLS", "MEM_STALLS", "ERRORS"},
               rows);
}

std::string render_pools(const json& a) {
  std::vector<Row> rows;
  for (const auto& p : a.at("pools"))
    rows.push_back({p.at("name").get<std::string>(), num(p.at("buffer_bytes")),
                    num(p.at("buffers")), num(p.at("in_use")), num(p.at("peak"))});
  return table({"POOL", "BUFFER_BYTES", "BUFFERS", "IN_USE", "PEAK"}, rows);
}

std::string render_routes(const json& a) {
  const json& r = a.at("routes");
  std::vector<Row> rows;
  for (const auto& x : r.at("routes")) {
    std::string next;
    for (const auto& h : x.at("next_hops"))
      next += (next.empty() ? "" : ", ") + h.get<std::string>();
    rows.push_back({x.at("site").get<std::string>(), num(x.at("hops")), num(x.at("cost")),
                    num(x.at("sent").at("bytes")), num(x.at("sent").at("frames")), next});
  }
  return "bridge " + r.at("bridge").get<std::string>() + "\n" +
         table({"SITE", "HOPS", "COST", "TX_BYTES", "TX_FRAMES", "NEXT_HOPS"}, rows);
}

}  // namespace zipper::ctl
