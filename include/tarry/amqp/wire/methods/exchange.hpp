// Methods of class exchange (40): declare, delete, exchange-to-exchange
// bindings (RabbitMQ extension, in the 0-9-1-rabbit spec).
//
// Plain values (see methods.hpp for the codec). Copyable; no shared state.
#pragma once

#include "tarry/amqp/wire/method_field.hpp"

namespace tarry::amqp::wire {

/// exchange.declare (client → server): create the exchange, or with passive
/// only check that it exists. A redeclare with other settings fails (406).
struct exchange_declare {
    /// Its identity, for the codec (method_field.hpp): class id, method
    /// id, the spec's name, and whether content (header and body frames)
    /// follows it.
    ///@{
    static constexpr std::uint16_t class_id = 40, method_id = 10;
    static constexpr std::string_view name = "exchange.declare";
    static constexpr bool has_content = false;
    ///@}
    std::uint16_t reserved_1 = 0;  ///< "ticket" in 0-8
    std::string exchange{};  ///< the exchange's name
    std::string type = "direct";  ///< direct, fanout, topic, headers, or a plugin's type
    bool passive = false;  ///< only check that it exists (404 when it does not)
    bool durable = false;  ///< survives a broker restart
    bool auto_delete = false;  ///< deleted when its last binding goes
    bool internal = false;  ///< not publishable by clients, only bindable
    bool no_wait = false;  ///< no declare-ok in reply
    field_table arguments{};  ///< optional arguments (alternate-exchange, ...)

    /// Its arguments in the spec's order, for the codec (method_field.hpp).
    static constexpr auto fields() {
        using enum wire_type;
        using S = exchange_declare;
        return std::tuple{field<short_>("reserved-1", &S::reserved_1),
                          field<shortstr>("exchange", &S::exchange),
                          field<shortstr>("type", &S::type),
                          field<bit>("passive", &S::passive),
                          field<bit>("durable", &S::durable),
                          field<bit>("auto-delete", &S::auto_delete),
                          field<bit>("internal", &S::internal),
                          field<bit>("no-wait", &S::no_wait),
                          field<table>("arguments", &S::arguments)};
    }
    /// Equal when every argument is.
    friend bool operator==(const exchange_declare&, const exchange_declare&) = default;
};

/// exchange.declare-ok (server → client).
using exchange_declare_ok = detail::method_without_arguments<40, 11, "exchange.declare-ok">;

/// exchange.delete (client → server).
struct exchange_delete {
    /// Its identity, for the codec (method_field.hpp): class id, method
    /// id, the spec's name, and whether content (header and body frames)
    /// follows it.
    ///@{
    static constexpr std::uint16_t class_id = 40, method_id = 20;
    static constexpr std::string_view name = "exchange.delete";
    static constexpr bool has_content = false;
    ///@}
    std::uint16_t reserved_1 = 0;  ///< "ticket" in 0-8
    std::string exchange{};  ///< the exchange's name
    bool if_unused = false;  ///< only if nothing is bound to it
    bool no_wait = false;  ///< no delete-ok in reply

    /// Its arguments in the spec's order, for the codec (method_field.hpp).
    static constexpr auto fields() {
        using enum wire_type;
        using S = exchange_delete;
        return std::tuple{field<short_>("reserved-1", &S::reserved_1),
                          field<shortstr>("exchange", &S::exchange),
                          field<bit>("if-unused", &S::if_unused),
                          field<bit>("no-wait", &S::no_wait)};
    }
    /// Equal when every argument is.
    friend bool operator==(const exchange_delete&, const exchange_delete&) = default;
};

/// exchange.delete-ok (server → client).
using exchange_delete_ok = detail::method_without_arguments<40, 21, "exchange.delete-ok">;

namespace detail {

/// exchange.bind and exchange.unbind: route from `source` to `destination`
/// by routing_key (and arguments, for headers exchanges).
template <std::uint16_t MethodId, fixed_string Name>
struct exchange_binding_method {
    static constexpr std::uint16_t class_id = 40, method_id = MethodId;
    static constexpr std::string_view name = Name.view();
    static constexpr bool has_content = false;
    std::uint16_t reserved_1 = 0;  ///< "ticket" in 0-8
    std::string destination{};
    std::string source{};
    std::string routing_key{};
    bool no_wait = false;
    field_table arguments{};

    static constexpr auto fields() {
        using enum wire_type;
        using S = exchange_binding_method;
        return std::tuple{field<short_>("reserved-1", &S::reserved_1),
                          field<shortstr>("destination", &S::destination),
                          field<shortstr>("source", &S::source),
                          field<shortstr>("routing-key", &S::routing_key),
                          field<bit>("no-wait", &S::no_wait),
                          field<table>("arguments", &S::arguments)};
    }
    friend bool operator==(const exchange_binding_method&,
                           const exchange_binding_method&) = default;
};

}  // namespace detail

/// exchange.bind (client → server): bind exchange to exchange: route from
/// `source` to `destination` by routing_key (and arguments, for headers
/// exchanges).
using exchange_bind = detail::exchange_binding_method<30, "exchange.bind">;
/// exchange.bind-ok (server → client).
using exchange_bind_ok = detail::method_without_arguments<40, 31, "exchange.bind-ok">;
/// exchange.unbind (client → server): remove a binding exchange.bind made
/// (the same source, destination, routing_key and arguments).
using exchange_unbind = detail::exchange_binding_method<40, "exchange.unbind">;
/// exchange.unbind-ok (server → client). Its id is 51, not 41.
using exchange_unbind_ok = detail::method_without_arguments<40, 51, "exchange.unbind-ok">;

}  // namespace tarry::amqp::wire
