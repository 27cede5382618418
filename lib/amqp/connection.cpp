// The public connection: a thin owner of the driver (detail/connection_impl).
#include "tarry/amqp/connection.hpp"

#include "detail/connection_impl.hpp"

namespace tarry::amqp {

connection::connection(executor_type ex, connection_config config, connection_hooks hooks)
    : impl_(std::make_shared<detail::connection_impl>(std::move(ex), std::move(config),
                                                      std::move(hooks))) {}

connection::~connection() {
    if (impl_) impl_->shutdown();
}

connection::connection(connection&&) noexcept = default;

connection& connection::operator=(connection&& other) noexcept {
    if (this != &other) {
        if (impl_) impl_->shutdown();
        impl_ = std::move(other.impl_);
    }
    return *this;
}

connection::executor_type connection::get_executor() const noexcept { return impl_->executor(); }
const connection_config& connection::config() const noexcept { return impl_->config(); }

void connection::connect_(const impl_ptr& impl, completion<> h) { impl->connect(std::move(h)); }
void connection::close_(const impl_ptr& impl, completion<> h) { impl->close(std::move(h)); }
void connection::open_channel_(const impl_ptr& impl, completion<channel> h) {
    impl->open_channel(std::move(h));
}
void connection::wait_unblocked_(const impl_ptr& impl, completion<> h) {
    impl->wait_unblocked(std::move(h));
}

bool connection::is_open() const noexcept { return impl_->is_open(); }
bool connection::blocked() const noexcept { return impl_->blocked(); }
diagnostics connection::last_error() const { return impl_->last_error(); }
std::optional<connection_info> connection::info() const { return impl_->info(); }
connection_usage connection::usage() const noexcept { return impl_->usage(); }

}  // namespace tarry::amqp
