// The HTTP side of /metrics: answers one HTTP/1.x request head. GET (or
// HEAD) /metrics gets 200 with the Prometheus text; other paths 404, other
// methods 405. HTTP/1.0 semantics: the connection closes after the answer.
#pragma once

#include <functional>
#include <string>

namespace zipper::forwarder {

std::string metrics_http_answer(const std::string& request_head,
                                const std::function<std::string()>& body);

}  // namespace zipper::forwarder
