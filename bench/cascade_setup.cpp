// A benchmark's delay cascade, declared and deleted (see cascade_setup.hpp).
#include "cascade_setup.hpp"

#include "tarry/parking/cascade_declaration.hpp"

#include <boost/asio/use_future.hpp>

namespace cbench {

using boost::asio::use_future;

void declare_cascade(endpoint& e, const tarry::parking::delay_cascade& c) {
    check(tarry::parking::async_declare_cascade(e.conn.get_executor(), e.ch, c, use_future).get(),
          "declaring the cascade");
}

void delete_cascade(endpoint& e, const tarry::parking::delay_cascade& c, const std::vector<std::string>& destinations) {
    auto ch = e.open_channel();
    const auto t = c.topology();
    for (const auto& q : t.queues) ch.async_delete_queue(q.name, {}, use_future).wait();
    for (const auto& d : destinations) ch.async_delete_queue(c.delivery({"", d}).queues.front().name, {}, use_future).wait();
    for (const auto& x : t.exchanges) ch.async_delete_exchange(x.name, {}, use_future).wait();
}

}  // namespace cbench
