// The public face of the consumer (see tarry/consumer/consumer.hpp) and the
// small value helpers it declares.
#include "consumer_impl.hpp"

#include "tarry/control/tombstone_table.hpp"

#include <boost/asio/associated_executor.hpp>

namespace tarry {

consumer::consumer(amqp::connection_config config, subscription_options options,
                   job_handler handler, consumer_hooks hooks)
    : consumer(boost::asio::any_io_executor(), std::move(config), std::move(options), std::move(handler),
               std::move(hooks)) {}

consumer::consumer(boost::asio::any_io_executor executor, amqp::connection_config config,
                   subscription_options options, job_handler handler, consumer_hooks hooks)
    : impl_(std::make_shared<impl>(std::move(executor), std::move(config), std::move(options),
                                   impl::handlers{std::move(handler), {}, {}}, std::move(hooks))) {}

consumer::consumer(amqp::connection_config config, subscription_options options, async_job_handler handler,
                   consumer_hooks hooks, boost::asio::any_io_executor handler_executor)
    : consumer(boost::asio::any_io_executor(), std::move(config), std::move(options), std::move(handler),
               std::move(hooks), std::move(handler_executor)) {}

consumer::consumer(boost::asio::any_io_executor executor, amqp::connection_config config,
                   subscription_options options, async_job_handler handler, consumer_hooks hooks,
                   boost::asio::any_io_executor handler_executor)
    : impl_(std::make_shared<impl>(std::move(executor), std::move(config), std::move(options),
                                   impl::handlers{{}, std::move(handler), std::move(handler_executor)},
                                   std::move(hooks))) {}

namespace {
// Completes `h` with `args` on its associated executor (`fallback` when it has none).
template <class Handler, class... Args>
void complete(std::shared_ptr<Handler> h, const boost::asio::any_io_executor& fallback, Args... args) {
    auto ex = boost::asio::get_associated_executor(*h, fallback);
    ex.execute([h, args...]() mutable { std::move(*h)(args...); });
}
}  // namespace

void consumer::run_erased(boost::asio::any_completion_handler<void(std::error_code)> handler,
                          amqp::diagnostics* diag) {
    auto h = std::make_shared<decltype(handler)>(std::move(handler));
    auto self = impl_;
    // Completions are handed over before the consumer lets go of its
    // executor's work (when_stopped), so a caller's io_context is still
    // running for them.
    self->begin_start([self, h, diag](const amqp::diagnostics& d) {
        self->when_stopped([self, h, diag, d] {
            if (diag) *diag = d;
            complete(h, self->completion_executor(), d.code);
        });
        if (d.code) self->stop_in_background([] {});  // nothing keeps running
    });
}

void consumer::stop_erased(boost::asio::any_completion_handler<void()> handler) {
    auto h = std::make_shared<decltype(handler)>(std::move(handler));
    auto self = impl_;
    self->when_stopped([self, h] { complete(h, self->completion_executor()); });
    self->stop_in_background([] {});
}

consumer::~consumer() {
    if (impl_) impl_->stop();
}

void consumer::start() { impl_->start(); }
void consumer::stop() { impl_->stop(); }
consumer_stats consumer::stats() const { return impl_->stats(); }
consumer_metrics consumer::metrics() const { return impl_->metrics(); }
consumer_health consumer::health() const { return impl_->health(); }
held_jobs_page consumer::held_jobs(std::size_t limit, std::string_view after, std::error_code& ec) const {
    return impl_->held_jobs(limit, after, ec);
}
std::vector<std::string> consumer::wait_queues() const { return impl_->wait_queues(); }
void consumer::ping_erased(boost::asio::any_completion_handler<void()> handler) { impl_->ping(std::move(handler)); }
const subscription_options& consumer::options() const noexcept { return impl_->options(); }

const amqp::field_table& job::headers() const noexcept {
    static const amqp::field_table none;
    return message.properties.headers ? *message.properties.headers : none;
}

bool job::cancel_requested() const {
    const auto i = id();
    return tombstones != nullptr && !tombstones->empty() && !i.empty() &&
           tombstones->covers(i, generation, std::chrono::system_clock::now());
}

std::string_view job::id() const noexcept {
    return message.properties.message_id ? std::string_view(*message.properties.message_id)
                                         : std::string_view();
}

const char* to_string(job_event::kind k) noexcept {
    switch (k) {
        case job_event::kind::run: return "run";
        case job_event::kind::succeeded: return "succeeded";
        case job_event::kind::parked: return "parked";
        case job_event::kind::dead: return "dead";
        case job_event::kind::retry: return "retry";
        case job_event::kind::requeued: return "requeued";
        case job_event::kind::dropped: return "dropped";
        case job_event::kind::failed: return "failed";
        case job_event::kind::abandoned: return "abandoned";
        case job_event::kind::cancelled: return "cancelled";
        case job_event::kind::scheduled: return "scheduled";
        case job_event::kind::skipped: return "skipped";
        case job_event::kind::deduplicated: return "deduplicated";
    }
    return "unknown";
}

}  // namespace tarry
