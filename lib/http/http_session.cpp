// One HTTP connection: see http_session.hpp. Reading is in two steps so
// that a body that is too large is refused from its Content-Length before
// it is read, and a client that sends "Expect: 100-continue" is told to go
// on.
#include "http_session.hpp"

#include "http_routes.hpp"
#include "jobs_json.hpp"
#include "metrics_text.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/core/string.hpp>

namespace tarry::http_detail {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

namespace {
const char* const text_type = "text/plain; charset=utf-8";
const char* const json_type = "application/json";
const char* const html_type = "text/html; charset=utf-8";
}  // namespace

http_session::http_session(boost::asio::ip::tcp::socket socket, std::shared_ptr<http_endpoint::impl> endpoint)
    : endpoint_(std::move(endpoint)), stream_(std::move(socket)) {}

http_session::~http_session() { endpoint_->session_ended(); }

void http_session::start() { read_header(); }

void http_session::close() {
    beast::error_code ignored;
    stream_.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
    stream_.close();
}

void http_session::read_header() {
    const auto& o = endpoint_->options();
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(std::min<std::size_t>(o.max_header_bytes, UINT32_MAX)));
    parser_->body_limit(o.max_body_bytes);
    stream_.expires_after(o.request_timeout);
    bhttp::async_read_header(stream_, buffer_, *parser_,
                             boost::asio::bind_executor(endpoint_->strand(),
                                                        [self = shared_from_this()](beast::error_code ec, std::size_t) {
        if (self->endpoint_->stopped() || self->read_failed(ec)) return;
        const auto& req = self->parser_->get();
        if (beast::iequals(req[bhttp::field::expect], "100-continue")) {
            auto cont = std::make_shared<bhttp::response<bhttp::empty_body>>(bhttp::status::continue_, req.version());
            return bhttp::async_write(self->stream_, *cont,
                                      boost::asio::bind_executor(self->endpoint_->strand(),
                                                                 [self, cont](beast::error_code ec, std::size_t) {
                                          if (ec || self->endpoint_->stopped()) return self->close();
                                          self->read_body();
                                      }));
        }
        self->read_body();
    }));
}

void http_session::read_body() {
    bhttp::async_read(stream_, buffer_, *parser_,
                      boost::asio::bind_executor(endpoint_->strand(),
                                                 [self = shared_from_this()](beast::error_code ec, std::size_t) {
        if (self->endpoint_->stopped() || self->read_failed(ec)) return;
        self->stream_.expires_never();
        self->handle();
    }));
}

void http_session::handle() {
    const auto& req = parser_->get();
    head_ = req.method() == bhttp::verb::head;
    keep_alive_ = req.keep_alive();
    auto& served = endpoint_->served();
    const std::string& queue = served.options().queue;
    const route r = route_of(req.method_string(), req.target(), queue);
    switch (r.kind) {
        case route_kind::metrics:
            return respond(200, metrics_content_type, metrics_text(served.metrics(), queue));
        case route_kind::healthz:
            return answer_healthz();
        case route_kind::readyz: {
            const auto h = served.health();
            return h.ready() ? respond(200, text_type, "ready\n") : respond(503, text_type, h.reason + "\n");
        }
        case route_kind::jobs:
            return answer_jobs(r.query);
        case route_kind::publish:
            return answer_publish();
        case route_kind::cancel:
        case route_kind::reschedule:
            return answer_job_command(r);
        case route_kind::status_page:
            return answer_status_page();
        case route_kind::method_not_allowed: {
            respond_error({405, "method " + std::string(req.method_string()) + " is not allowed here; use " +
                                    r.allow});
            response_->set(bhttp::field::allow, r.allow);
            return;
        }
        case route_kind::not_found:
            break;
    }
    respond_error({404, "no such resource: " + std::string(req.target())});
}

void http_session::answer_healthz() {
    endpoint_->ping_consumer(std::chrono::seconds(1), [self = shared_from_this()](bool answered) {
        if (answered) return self->respond(200, text_type, "ok\n");
        self->respond(503, text_type, "the consumer's I/O thread did not answer within 1 s\n");
    });
}

void http_session::answer_jobs(const std::string& query) {
    auto parsed = parse_jobs_query(query);
    if (auto* e = std::get_if<http_error>(&parsed)) return respond_error(*e);
    const auto& q = std::get<jobs_query>(parsed);
    std::error_code ec;
    auto page = endpoint_->served().held_jobs(q.limit, q.after, ec);
    if (ec) return respond_error({400, "after: not a cursor this endpoint gave out"});
    endpoint_->parked().get([self = shared_from_this(), page = std::move(page)](const std::vector<parked_count>& parked) {
        if (self->endpoint_->stopped()) return;
        self->respond(200, json_type, jobs_json(page, parked));
    });
}

publish_gateway* http_session::authorized_gateway() {
    const auto& req = parser_->get();
    std::optional<std::string_view> authorization;
    if (auto it = req.find(bhttp::field::authorization); it != req.end()) authorization = it->value();
    switch (check_bearer(authorization, endpoint_->options().token)) {
        case auth_result::ok:
            break;
        case auth_result::missing: {
            respond_error({401, "publishing needs 'Authorization: Bearer TOKEN'"});
            response_->set(bhttp::field::www_authenticate, "Bearer");
            return nullptr;
        }
        case auth_result::wrong:
            respond_error({403, "the token is not the endpoint's"});
            return nullptr;
        case auth_result::not_configured:
            respond_error({403, "this endpoint was started without a token: it publishes nothing"});
            return nullptr;
    }
    auto* gateway = endpoint_->gateway();
    if (!gateway) respond_error({503, "this endpoint has no connection to publish on"});
    return gateway;
}

gateway_limits http_session::limits() const {
    gateway_limits limits;
    limits.max_messages = endpoint_->options().max_messages;
    limits.max_delay = endpoint_->served().options().max_delay;
    return limits;
}

void http_session::answer_job_command(const route& r) {
    auto* gateway = authorized_gateway();
    if (!gateway) return;
    std::optional<gateway_message> copy;
    if (r.kind == route_kind::reschedule) {
        auto parsed = parse_reschedule_request(parser_->get().body(), r.job_id, limits());
        if (auto* e = std::get_if<http_error>(&parsed)) return respond_error(*e);
        copy = std::move(std::get<gateway_message>(parsed));
    }
    if (!gateway->available()) return respond_error({503, "the broker is not reachable now: nothing was sent"});
    auto done = [self = shared_from_this()](std::vector<publish_result> results) {
        if (self->endpoint_->stopped()) return;
        auto answer = command_response_of(results.at(0));
        self->respond(answer.status, json_type, std::move(answer.body));
    };
    const auto timeout = endpoint_->options().request_timeout;
    if (copy) gateway->reschedule(std::move(*copy), timeout, std::move(done));
    else gateway->cancel(r.job_id, timeout, std::move(done));
}

void http_session::answer_publish() {
    const auto& req = parser_->get();
    auto* gateway = authorized_gateway();
    if (!gateway) return;
    auto parsed = parse_gateway_request(req.body(), limits());
    if (auto* e = std::get_if<http_error>(&parsed)) return respond_error(*e);
    if (!gateway->available()) return respond_error({503, "the broker is not reachable now: nothing was sent"});
    gateway->publish(std::move(std::get<std::vector<gateway_message>>(parsed)), endpoint_->options().request_timeout,
                     [self = shared_from_this()](std::vector<publish_result> results) {
                         if (self->endpoint_->stopped()) return;
                         auto r = gateway_response_of(results);
                         self->respond(r.status, json_type, std::move(r.body));
                     });
}

void http_session::answer_status_page() {
    endpoint_->parked().get([self = shared_from_this()](const std::vector<parked_count>& parked) {
        if (self->endpoint_->stopped()) return;
        auto& served = self->endpoint_->served();
        self->respond(200, html_type,
                      status_page_html(served.options().queue, served.metrics(), parked, self->endpoint_->history(),
                                       std::chrono::system_clock::now()));
    });
}

// A header or body over its limit is refused (413; a Content-Length over the
// body limit is found with the header), a request that does not parse too
// (400); a client gone or too slow is closed on without an answer.
bool http_session::read_failed(beast::error_code ec) {
    if (!ec) return false;
    if (ec == bhttp::error::body_limit) {
        respond_error({413, "the request's body is larger than " +
                                std::to_string(endpoint_->options().max_body_bytes) + " bytes"},
                      true);
    } else if (ec == bhttp::error::header_limit) {
        respond_error({413, "the request's header is larger than " +
                                std::to_string(endpoint_->options().max_header_bytes) + " bytes"},
                      true);
    } else if (ec == bhttp::error::end_of_stream || ec == beast::error::timeout || ec == boost::asio::error::eof ||
               ec == boost::asio::error::connection_reset || ec == boost::asio::error::operation_aborted) {
        close();
    } else {
        respond_error({400, "malformed request: " + ec.message()}, true);
    }
    return true;
}

void http_session::respond_error(const http_error& e, bool close_after) {
    respond(e.status, json_type, error_json(e), close_after);
}

// The response is written after the current handler returns (posted), so
// that a route may still add a header to it.
void http_session::respond(unsigned status, const char* content_type, std::string body, bool close_after) {
    const unsigned version = parser_ && parser_->is_header_done() ? parser_->get().version() : 11;
    response_.emplace(static_cast<bhttp::status>(status), version);
    auto& res = *response_;
    res.set(bhttp::field::server, "tarry");
    res.set(bhttp::field::content_type, content_type);
    res.set(bhttp::field::cache_control, "no-store");
    const bool keep = keep_alive_ && !close_after;
    res.keep_alive(keep);
    const std::size_t size = body.size();
    if (!head_) res.body() = std::move(body);
    res.content_length(size);
    boost::asio::post(endpoint_->strand(), [self = shared_from_this(), keep] {
        if (self->endpoint_->stopped()) return;
        bhttp::async_write(self->stream_, *self->response_,
                           boost::asio::bind_executor(self->endpoint_->strand(),
                                                      [self, keep](beast::error_code ec, std::size_t) {
                               if (ec || self->endpoint_->stopped()) return self->close();
                               self->written(!keep);
                           }));
    });
}

void http_session::written(bool close_after) {
    response_.reset();
    if (close_after) return close();
    keep_alive_ = false;
    head_ = false;
    read_header();
}

}  // namespace tarry::http_detail
