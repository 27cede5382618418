// Which reply answers which synchronous request (see the header).
#include "rpc_table.hpp"

namespace tarry::amqp::detail {
namespace {

template <class Reply>
reply_spec reply_of() noexcept {
    return {Reply::class_id, Reply::method_id, 0};
}

template <class Request>
bool waits(const Request& r) noexcept {
    if constexpr (requires { r.no_wait; }) {
        return !r.no_wait;
    } else if constexpr (requires { r.nowait; }) {
        return !r.nowait;
    } else {
        return true;
    }
}

}  // namespace

std::optional<reply_spec> expected_reply(const wire::method& request) noexcept {
    using namespace wire;
    return std::visit(
        [](const auto& m) -> std::optional<reply_spec> {
            using M = std::decay_t<decltype(m)>;
            if (!waits(m)) return std::nullopt;
            if constexpr (std::is_same_v<M, channel_open>) return reply_of<channel_open_ok>();
            else if constexpr (std::is_same_v<M, channel_flow>) return reply_of<channel_flow_ok>();
            else if constexpr (std::is_same_v<M, channel_close>) return reply_of<channel_close_ok>();
            else if constexpr (std::is_same_v<M, exchange_declare>) return reply_of<exchange_declare_ok>();
            else if constexpr (std::is_same_v<M, exchange_delete>) return reply_of<exchange_delete_ok>();
            else if constexpr (std::is_same_v<M, exchange_bind>) return reply_of<exchange_bind_ok>();
            else if constexpr (std::is_same_v<M, exchange_unbind>) return reply_of<exchange_unbind_ok>();
            else if constexpr (std::is_same_v<M, queue_declare>) return reply_of<queue_declare_ok>();
            else if constexpr (std::is_same_v<M, queue_bind>) return reply_of<queue_bind_ok>();
            else if constexpr (std::is_same_v<M, queue_purge>) return reply_of<queue_purge_ok>();
            else if constexpr (std::is_same_v<M, queue_delete>) return reply_of<queue_delete_ok>();
            else if constexpr (std::is_same_v<M, queue_unbind>) return reply_of<queue_unbind_ok>();
            else if constexpr (std::is_same_v<M, basic_qos>) return reply_of<basic_qos_ok>();
            else if constexpr (std::is_same_v<M, basic_consume>) return reply_of<basic_consume_ok>();
            else if constexpr (std::is_same_v<M, basic_cancel>) return reply_of<basic_cancel_ok>();
            else if constexpr (std::is_same_v<M, basic_get>)
                return reply_spec{basic_get_ok::class_id, basic_get_ok::method_id,
                                  basic_get_empty::method_id};
            else if constexpr (std::is_same_v<M, basic_recover>) return reply_of<basic_recover_ok>();
            else if constexpr (std::is_same_v<M, confirm_select>) return reply_of<confirm_select_ok>();
            else if constexpr (std::is_same_v<M, tx_select>) return reply_of<tx_select_ok>();
            else if constexpr (std::is_same_v<M, tx_commit>) return reply_of<tx_commit_ok>();
            else if constexpr (std::is_same_v<M, tx_rollback>) return reply_of<tx_rollback_ok>();
            else return std::nullopt;
        },
        request);
}

}  // namespace tarry::amqp::detail
