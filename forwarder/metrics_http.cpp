#include "metrics_http.h"

#include <sstream>

namespace zipper::forwarder {

namespace {
std::string response(const char* status, const char* type, const std::string& body, bool head) {
  std::string r = std::string("HTTP/1.0 ") + status + "\r\nContent-Type: " + type +
                  "\r\nContent-Length: " + std::to_string(body.size()) +
                  "\r\nConnection: close\r\n\r\n";
  if (!head) r += body;
  return r;
}
}  // namespace

std::string metrics_http_answer(const std::string& request_head,
                                const std::function<std::string()>& body) {
  std::istringstream in(request_head);
  std::string method, target;
  in >> method >> target;
  const bool head = method == "HEAD";
  if (method != "GET" && !head)
    return response("405 Method Not Allowed", "text/plain", "only GET /metrics\n", false);
  const auto q = target.find('?');
  if (target.substr(0, q) != "/metrics")
    return response("404 Not Found", "text/plain", "zipperd serves /metrics only\n", head);
  return response("200 OK", "text/plain; version=0.0.4; charset=utf-8", body(), head);
}

}  // namespace zipper::forwarder
