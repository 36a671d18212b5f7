#include "coordinator.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "../../proto/unique_fd.h"
#include "payload_check.h"
#include "traffic_pattern.h"
#include "worker.h"

namespace zipper::loadgen {

namespace {

using proto::UniqueFd;

constexpr int kScrapeTimeoutMs = 5000;

void add_error(RunResult& r, std::string what) {
  r.errors.push_back(std::move(what));
  ++r.error_count;
}

struct Child {
  pid_t pid = -1;
  UniqueFd commands, reports;  // parent's ends
  std::string buf;
  bool ready = false, traffic_done = false, has_result = false, eof = false;
};

void write_line(const UniqueFd& fd, const std::string& line) {
  const std::string out = line + "\n";
  std::size_t off = 0;
  while (off < out.size()) {
    const ssize_t n = ::write(fd.get(), out.data() + off, out.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the worker is gone; its missing result says so
    off += static_cast<std::size_t>(n);
  }
}

// Descriptors one worker needs at most: a connection per rank and zipperd
// (its share of every steady job, its churn jobs at once), and a few.
std::uint64_t fds_per_worker(const Options& o, const std::vector<JobPlan>& plans) {
  std::uint64_t ranks = 0;
  for (const auto& p : plans)
    if (!p.churn)
      ranks += p.worker >= 0 ? p.spec->layout.size()  // a storm job: one worker
                             : (p.spec->layout.size() + o.procs - 1) / o.procs;
  ranks += std::uint64_t{churn_concurrency(o, 0)} * o.churn.job.layout.size();
  return ranks * o.zipperds.size() + 64;
}

// Raises RLIMIT_NOFILE for the workers (inherited at fork); root may raise
// the hard limit too, up to fs.nr_open.
void raise_fd_limit(std::uint64_t need) {
  rlimit rl{};
  ::getrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur >= need) return;
  if (rl.rlim_max < need && ::geteuid() == 0) {
    std::uint64_t nr_open = 1048576;
    std::ifstream("/proc/sys/fs/nr_open") >> nr_open;
    rl.rlim_max = std::min<std::uint64_t>(std::max<std::uint64_t>(need, rl.rlim_max), nr_open);
  }
  rl.rlim_cur = std::min<rlim_t>(need, rl.rlim_max);
  ::setrlimit(RLIMIT_NOFILE, &rl);
  ::getrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur < need)
    throw std::runtime_error("a worker needs " + std::to_string(need) +
                             " file descriptors (a connection per rank and zipperd) and the "
                             "limit is " +
                             std::to_string(rl.rlim_cur) +
                             ": use more --procs, or raise `ulimit -n` (hard limit " +
                             std::to_string(rl.rlim_max) + ")");
}

void sample(const Options& o, RunResult& r, std::optional<ProcSample> ZipperdSamples::*proc,
            std::optional<MetricsText> ZipperdSamples::*metrics) {
  for (std::size_t i = 0; i < o.zipperds.size(); ++i) {
    const ZipperdSpec& z = o.zipperds[i];
    if (z.pid > 0) {
      r.zipperds[i].*proc = read_proc(z.pid);
      if (!(r.zipperds[i].*proc))
        add_error(r, "zipperd " + std::to_string(i) + " (pid " + std::to_string(z.pid) +
                         "): /proc cannot be read (has it died?)");
    }
    if (metrics && !z.metrics.empty()) {
      std::string why;
      r.zipperds[i].*metrics = scrape_metrics(z.metrics, kScrapeTimeoutMs, &why);
      if (!(r.zipperds[i].*metrics)) add_error(r, "zipperd " + std::to_string(i) + ": " + why);
    }
  }
}

// One line from a worker.
void on_line(Child& c, int index, const std::string& line, RunResult& r,
             std::vector<nlohmann::json>& results) {
  if (line == "ready") {
    c.ready = true;
  } else if (line == "traffic-done") {
    c.traffic_done = true;
  } else if (line.rfind("result ", 0) == 0) {
    c.has_result = true;
    try {
      results.push_back(nlohmann::json::parse(line.substr(7)));
    } catch (const nlohmann::json::exception& e) {
      add_error(r, "worker " + std::to_string(index) + ": unreadable result: " + e.what());
    }
  } else {
    add_error(r, "worker " + std::to_string(index) + ": unexpected line '" + line + "'");
  }
}

void merge_results(const std::vector<nlohmann::json>& results, RunResult& r) {
  for (const auto& j : results) {
    try {
      for (const auto& e : j.at("errors")) r.errors.push_back(e.get<std::string>());
      r.error_count += j.at("error_count").get<std::uint64_t>();
      const auto& groups = j.at("groups");
      for (std::size_t g = 0; g < groups.size() && g < r.groups.size(); ++g)
        r.groups[g].merge(GroupStats::from_json(groups[g]));
      for (const auto& e : j.at("jobs")) {
        const auto i = e.at(0).get<std::size_t>();
        if (i < r.jobs.size()) r.jobs[i].merge(JobTimes::from_json(e.at(1)));
      }
      r.loadgen_cpu_s += j.at("cpu_s").get<double>();
    } catch (const std::exception& e) {
      add_error(r, std::string("a worker's result: ") + e.what());
    }
  }
}

// zipperd ends a job's connections after our side closed them: wait (up to
// 10 s) until every zipperd with /metrics shows no job and no rank.
void await_empty(const Options& o, RunResult& r) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (std::size_t i = 0; i < o.zipperds.size(); ++i) {
    if (o.zipperds[i].metrics.empty()) continue;
    std::string why;
    std::optional<MetricsText> m;
    do {
      m = scrape_metrics(o.zipperds[i].metrics, kScrapeTimeoutMs, &why);
      if (m && m->sum("zipper_ranks") == 0 && m->sum("zipper_jobs") == 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    } while (std::chrono::steady_clock::now() < until);
    r.zipperds[i].m_end = m;
    if (!m) add_error(r, "zipperd " + std::to_string(i) + ": " + why);
  }
}

void check_counters(const Options& o, const std::vector<JobPlan>& plans, RunResult& r) {
  GroupStats all(o.zipperds.size());
  for (const auto& g : r.groups) all.merge(g);
  std::uint64_t steady_ranks = 0, steady_jobs = 0;
  for (const auto& p : plans)
    if (!p.churn) steady_ranks += p.spec->layout.size(), ++steady_jobs;
  for (std::size_t g = 0; g < r.groups.size(); ++g) {
    if (g == o.jobs.size() && o.churn.jobs == 0) continue;
    const std::string name = g < o.jobs.size() ? o.jobs[g].name : "churn";
    const double want = static_cast<double>(expected_messages(o, plans, g));
    r.checks.push_back({-1, name + ": messages sent", want, static_cast<double>(r.groups[g].sent)});
    r.checks.push_back({-1, name + ": messages received and checked", want,
                        static_cast<double>(r.groups[g].received)});
  }
  if (!o.check_counters) return;
  for (std::size_t i = 0; i < o.zipperds.size(); ++i) {
    const ZipperdSamples& s = r.zipperds[i];
    if (!s.m_base || !s.m_admitted || !s.m_end) continue;
    r.counters_checked = true;
    const int z = static_cast<int>(i);
    const auto delta = [&](const std::string& name) {
      return s.m_end->sum(name) - s.m_base->sum(name);
    };
    // Per side, in listener order: the low group's listener first.
    const auto per_side = [&](const std::string& name, const std::string& what,
                              const PerRail& ours) {
      const auto b = s.m_base->of(name), e = s.m_end->of(name);
      const auto low = static_cast<double>(ours[i][0]), high = static_cast<double>(ours[i][1]);
      if (b.size() == 2 && e.size() == 2) {
        r.checks.push_back({z, name + " low side (" + what + ")", low, e[0].value - b[0].value});
        r.checks.push_back({z, name + " high side (" + what + ")", high, e[1].value - b[1].value});
      } else {
        r.checks.push_back({z, name + " (" + what + ")", low + high, delta(name)});
      }
    };
    per_side("zipper_side_received_frames_total", "frames our ranks sent", all.rail_frames);
    per_side("zipper_side_received_bytes_total", "payload bytes our ranks sent", all.rail_bytes);
    per_side("zipper_side_connections_accepted_total", "connections our ranks made",
             all.rail_connections);
    const double frames = static_cast<double>(all.rail_frames[i][0] + all.rail_frames[i][1]);
    r.checks.push_back({z, "zipper_side_sent_frames_total (frames our ranks received)", frames,
                        delta("zipper_side_sent_frames_total")});
    for (const char* n :
         {"zipper_protocol_errors_total", "zipper_auth_errors_total", "zipper_ranks_refused_total"})
      r.checks.push_back({z, n, 0, delta(n)});
    r.checks.push_back({z, "zipper_ranks once the steady jobs were admitted",
                        static_cast<double>(steady_ranks), s.m_admitted->sum("zipper_ranks")});
    r.checks.push_back({z, "zipper_jobs once the steady jobs were admitted",
                        static_cast<double>(steady_jobs), s.m_admitted->sum("zipper_jobs")});
    r.checks.push_back({z, "zipper_ranks at the end", 0, s.m_end->sum("zipper_ranks")});
    r.checks.push_back({z, "zipper_jobs at the end", 0, s.m_end->sum("zipper_jobs")});
  }
}

}  // namespace

std::uint64_t expected_messages(const Options& o, const std::vector<JobPlan>& plans,
                                std::size_t g) {
  std::uint64_t n = 0;
  for (const auto& p : plans)
    if (p.group == g) {
      const auto& s = *p.spec;
      n += PairTable(s.pattern, s.layout.x, s.layout.y, s.degree).pairs() * s.messages;
    }
  return n;
}

RunResult run_load(const Options& o, const std::vector<JobPlan>& plans) {
  RunResult r;
  r.groups.assign(o.jobs.size() + 1, GroupStats(o.zipperds.size()));
  r.jobs.resize(plans.size());
  r.zipperds.resize(o.zipperds.size());
  raise_fd_limit(fds_per_worker(o, plans));
  sample(o, r, &ZipperdSamples::base, &ZipperdSamples::m_base);
  r.t_start = now_ns();

  std::vector<Child> kids(static_cast<std::size_t>(o.procs));
  for (int w = 0; w < o.procs; ++w) {
    int cmd[2], rep[2];
    if (::pipe2(cmd, O_CLOEXEC) != 0 || ::pipe2(rep, O_CLOEXEC) != 0)
      throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    UniqueFd cmd_r(cmd[0]), cmd_w(cmd[1]), rep_r(rep[0]), rep_w(rep[1]);
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      // The worker: only its own ends of its own pipes.
      for (auto& k : kids) k.commands.reset(), k.reports.reset();
      cmd_w.reset();
      rep_r.reset();
      ::fcntl(cmd_r.get(), F_SETFL, O_NONBLOCK);
      int rc = 1;
      try {
        rc = Worker(o, plans, w, std::move(cmd_r), std::move(rep_w)).run();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "zipper-loadgen worker %d: %s\n", w, e.what());
      }
      std::_Exit(rc);
    }
    kids[w].pid = pid;
    kids[w].commands = std::move(cmd_w);
    kids[w].reports = std::move(rep_r);
  }

  std::vector<nlohmann::json> results;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.timeout_s + 15);
  bool go_sent = false, close_sent = false, killed = false;
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<int> who;
    for (int w = 0; w < o.procs; ++w)
      if (!kids[w].eof) fds.push_back({kids[w].reports.get(), POLLIN, 0}), who.push_back(w);
    if (fds.empty()) break;
    if (std::chrono::steady_clock::now() > deadline && !killed) {
      add_error(r, "workers did not finish within --timeout; killed");
      for (auto& k : kids) ::kill(k.pid, SIGKILL);
      killed = true;
    }
    if (::poll(fds.data(), fds.size(), 200) < 0 && errno != EINTR)
      throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    for (std::size_t f = 0; f < fds.size(); ++f) {
      if (!(fds[f].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Child& c = kids[who[f]];
      char buf[65536];
      const ssize_t n = ::read(c.reports.get(), buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        c.eof = true;
        continue;
      }
      c.buf.append(buf, static_cast<std::size_t>(n));
      for (std::size_t nl; (nl = c.buf.find('\n')) != std::string::npos;) {
        on_line(c, who[f], c.buf.substr(0, nl), r, results);
        c.buf.erase(0, nl + 1);
      }
    }
    const auto all = [&](bool Child::*flag) {
      for (const auto& k : kids)
        if (!(k.*flag)) return false;
      return true;
    };
    // A worker that stopped early (a fault) makes the others pointless.
    bool early = false;
    for (const auto& k : kids) early = early || ((k.has_result || k.eof) && !k.traffic_done);
    if (early && !killed && !(go_sent && all(&Child::traffic_done))) {
      for (auto& k : kids)
        if (!k.has_result && !k.eof) ::kill(k.pid, SIGKILL);
      killed = true;
    }
    if (!go_sent && all(&Child::ready)) {
      sample(o, r, &ZipperdSamples::admitted, &ZipperdSamples::m_admitted);
      r.t_go = now_ns();
      for (auto& k : kids) write_line(k.commands, "go");
      go_sent = true;
    }
    if (go_sent && !close_sent && all(&Child::traffic_done)) {
      r.t_traffic_done = now_ns();
      sample(o, r, &ZipperdSamples::traffic, &ZipperdSamples::m_traffic);
      for (auto& k : kids) write_line(k.commands, "close");
      close_sent = true;
    }
  }
  for (int w = 0; w < o.procs; ++w) {
    int st = 0;
    ::waitpid(kids[w].pid, &st, 0);
    if (!kids[w].has_result) {
      add_error(r, "worker " + std::to_string(w) + " ended without a result (" +
                       (WIFSIGNALED(st) ? "signal " + std::to_string(WTERMSIG(st))
                                        : "exit status " + std::to_string(WEXITSTATUS(st))) +
                       ")");
    }
  }
  merge_results(results, r);
  r.t_end = now_ns();
  if (r.error_count == 0) {
    await_empty(o, r);
    sample(o, r, &ZipperdSamples::end, nullptr);
    check_counters(o, plans, r);
  }
  return r;
}

}  // namespace zipper::loadgen
