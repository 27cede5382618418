// Methods of class tx (90): standard transactions. tarry uses publisher
// confirms instead; these are here so that every method of the spec decodes.
//
// Plain values (see methods.hpp for the codec). None has arguments.
#pragma once

#include "tarry/amqp/wire/method_field.hpp"

namespace tarry::amqp::wire {

/// tx.select (client → server): make the channel transactional.
using tx_select = detail::method_without_arguments<90, 10, "tx.select">;
/// tx.select-ok (server → client).
using tx_select_ok = detail::method_without_arguments<90, 11, "tx.select-ok">;
/// tx.commit (client → server).
using tx_commit = detail::method_without_arguments<90, 20, "tx.commit">;
/// tx.commit-ok (server → client).
using tx_commit_ok = detail::method_without_arguments<90, 21, "tx.commit-ok">;
/// tx.rollback (client → server).
using tx_rollback = detail::method_without_arguments<90, 30, "tx.rollback">;
/// tx.rollback-ok (server → client).
using tx_rollback_ok = detail::method_without_arguments<90, 31, "tx.rollback-ok">;

}  // namespace tarry::amqp::wire
