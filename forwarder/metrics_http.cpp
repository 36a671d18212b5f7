#include "metrics_http.h"

#include <fcntl.h>
#include <microhttpd.h>

#include <stdexcept>

namespace zipper::forwarder {

namespace {

MHD_Result answer(void* cls, MHD_Connection* c, const char* url, const char* method,
                  const char* /*version*/, const char* /*upload*/, size_t* upload_size,
                  void** state) {
  // First call: headers only. A request body (none of ours has one) is
  // discarded; the answer goes out on the last call.
  static int first;
  if (*state == nullptr) {
    *state = &first;
    return MHD_YES;
  }
  if (*upload_size != 0) {
    *upload_size = 0;
    return MHD_YES;
  }
  const auto& body = *static_cast<const std::function<std::string()>*>(cls);
  const auto [status, text] = MetricsServer::route(method, url, body);
  MHD_Response* r = MHD_create_response_from_buffer(text.size(), const_cast<char*>(text.data()),
                                                    MHD_RESPMEM_MUST_COPY);
  if (!r) return MHD_NO;
  MHD_add_response_header(
      r, MHD_HTTP_HEADER_CONTENT_TYPE,
      status == MHD_HTTP_OK ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain");
  if (status == MHD_HTTP_METHOD_NOT_ALLOWED) MHD_add_response_header(r, "Allow", "GET, HEAD");
  const MHD_Result ok = MHD_queue_response(c, status, r);
  MHD_destroy_response(r);
  return ok;
}

}  // namespace

std::pair<unsigned, std::string> MetricsServer::route(const std::string& method,
                                                      const std::string& url,
                                                      const std::function<std::string()>& body) {
  if (method != "GET" && method != "HEAD")
    return {MHD_HTTP_METHOD_NOT_ALLOWED, "only GET /metrics\n"};
  if (url.substr(0, url.find('?')) != "/metrics")
    return {MHD_HTTP_NOT_FOUND, "zipperd serves /metrics only\n"};
  return {MHD_HTTP_OK, body()};
}

MetricsServer::MetricsServer(proto::UniqueFd listener, std::function<std::string()> body,
                             Limits limits)
    : body_(std::move(body)) {
  // Every worker thread accepts on it: it must not block.
  const int fd = listener.get();
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  daemon_ = MHD_start_daemon(
      MHD_USE_AUTO_INTERNAL_THREAD, 0, nullptr, nullptr, &answer, &body_, MHD_OPTION_LISTEN_SOCKET,
      static_cast<MHD_socket>(fd), MHD_OPTION_THREAD_POOL_SIZE, limits.threads,
      MHD_OPTION_CONNECTION_TIMEOUT, limits.timeout_s, MHD_OPTION_CONNECTION_LIMIT,
      limits.max_connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT, limits.max_per_address,
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, static_cast<size_t>(32768), MHD_OPTION_END);
  if (!daemon_) throw std::runtime_error("cannot start the /metrics server (libmicrohttpd)");
  listener.release();  // MHD_stop_daemon closes it
}

MetricsServer::~MetricsServer() {
  if (daemon_) MHD_stop_daemon(daemon_);
}

}  // namespace zipper::forwarder
