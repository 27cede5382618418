// What the fragments of README.md and docs/*.md take as given
// (check_examples.py): the public headers they use, and the names they
// speak of without declaring them. Declarations only: a fragment is
// compiled, never linked.
#pragma once

#include "tarry/amqp/connection.hpp"
#include "tarry/amqp/connection_config.hpp"
#include "tarry/amqp/message.hpp"
#include "tarry/amqp/url.hpp"
#include "tarry/consumer/async_job_handler.hpp"
#include "tarry/consumer/consumer.hpp"
#include "tarry/parking/delay_cascade.hpp"
#include "tarry/publisher/publisher.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <string>
#include <system_error>

using namespace std::chrono_literals;

extern boost::asio::io_context io;                  // the caller's io_context
extern tarry::amqp::connection_config config;       // where the broker is
extern tarry::amqp::connection conn;                // an open connection
extern tarry::subscription_options options;         // a consumer's options
extern tarry::job_handler handler;                  // a job handler
extern tarry::amqp::message msg;                    // a job's message
inline const auto callback = [](std::error_code) {};  // a completion handler
