#include "job_spec.h"

#include <stdexcept>

namespace zipper::loadgen {

namespace {

constexpr std::uint64_t kMaxMessages = std::uint64_t{1} << 40;

// The keys a job and a churn job share.
void traffic_from(const SpecText& s, const char* what, JobSpec* j) {
  if (s.has("layout")) j->layout = parse_layout(what, s.str("layout", ""));
  const std::string p = s.str("pattern", std::string(to_string(j->pattern)));
  const auto pattern = parse_pattern(p);
  if (!pattern)
    throw std::invalid_argument(std::string(what) + ": pattern=" + p +
                                ": not one of ring, neighbours, incast, alltoall, pingpong");
  j->pattern = *pattern;
  j->degree = static_cast<std::uint32_t>(s.integer("degree", j->degree, 1, 1u << 20));
  j->size = static_cast<std::uint32_t>(s.integer("size", j->size, 0, kMaxMessageSize));
  j->messages = s.integer("messages", j->messages, 1, kMaxMessages);
}

}  // namespace

JobSpec parse_job_spec(std::string_view text, std::string default_name) {
  const SpecText s("--job", text,
                   {"name", "count", "layout", "pattern", "degree", "size", "messages", "rate"});
  JobSpec j;
  j.name = s.str("name", std::move(default_name));
  j.count = static_cast<std::uint32_t>(s.integer("count", 1, 1, 4096));
  traffic_from(s, "--job", &j);
  j.rate = s.number("rate", 0, 0, 1e9);
  return j;
}

JobSpec parse_storm_spec(std::string_view text) {
  const SpecText s("--storm", text, {"layout", "after"});
  JobSpec j;
  j.name = "storm";
  j.layout = parse_layout("--storm", s.str("layout", "1024+1024"));
  j.messages = 0;  // it only holds connections, then drops them all at once
  j.vanish_after_s = s.number("after", 1.0, 0, 3600);
  return j;
}

ChurnSpec parse_churn_spec(std::string_view text) {
  const SpecText s(
      "--churn", text,
      {"jobs", "concurrent", "layout", "pattern", "degree", "size", "messages", "vanish"});
  ChurnSpec c;
  c.job.name = "churn";
  c.job.layout = {8, 8};
  c.job.messages = 10;
  c.jobs = static_cast<std::uint32_t>(s.integer("jobs", 4, 0, 1u << 20));
  c.concurrent = static_cast<std::uint32_t>(s.integer("concurrent", 1, 1, 4096));
  traffic_from(s, "--churn", &c.job);
  c.vanish = s.number("vanish", c.vanish, 0, 1);
  return c;
}

}  // namespace zipper::loadgen
