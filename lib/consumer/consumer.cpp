// The public face of the consumer (see tarry/consumer/consumer.hpp) and the
// small value helpers it declares.
#include "consumer_impl.hpp"

namespace tarry {

consumer::consumer(amqp::connection_config config, subscription_options options,
                   job_handler handler, consumer_hooks hooks)
    : impl_(std::make_shared<impl>(std::move(config), std::move(options), std::move(handler),
                                   std::move(hooks))) {}

consumer::~consumer() {
    if (impl_) impl_->stop();
}

void consumer::start() { impl_->start(); }
void consumer::stop() { impl_->stop(); }
consumer_stats consumer::stats() const { return impl_->stats(); }
const subscription_options& consumer::options() const noexcept { return impl_->options(); }

const amqp::field_table& job::headers() const noexcept {
    static const amqp::field_table none;
    return message.properties.headers ? *message.properties.headers : none;
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
    }
    return "unknown";
}

}  // namespace tarry
