// Human tables for zipperctl's status, jobs, links and pools (the --json
// output is the control socket's answer as is).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace zipper::ctl {

std::string render_status(const nlohmann::json& answer);
std::string render_jobs(const nlohmann::json& answer);
std::string render_links(const nlohmann::json& answer);
std::string render_pools(const nlohmann::json& answer);
/// This bridge's routes: destination site, hops, cost, next hops, traffic.
std::string render_routes(const nlohmann::json& answer);

}  // namespace zipper::ctl
