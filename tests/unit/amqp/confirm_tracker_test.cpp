// Publisher-confirm bookkeeping: single, multiple, out of order, drain.
#include "detail/confirm_tracker.hpp"

#include <doctest/doctest.h>

#include <ostream>  // doctest prints std::error_code with it

using tarry::amqp::detail::confirm_tracker;
using tarry::amqp::detail::op_id;

TEST_CASE("sequence numbers count from 1; multiple settles everything up to the tag") {
    confirm_tracker t;
    for (op_id op = 11; op <= 15; ++op) t.add(op);
    CHECK(t.last_sequence() == 5);
    std::vector<op_id> done;
    CHECK(t.settle(3, true, done));
    CHECK(done == std::vector<op_id>{11, 12, 13});
    CHECK(t.unconfirmed() == 2);
    done.clear();
    CHECK(t.settle(5, false, done));
    CHECK(done == std::vector<op_id>{15});
    done.clear();
    CHECK(t.settle(5, true, done));  // 4 only: 5 is settled already
    CHECK(done == std::vector<op_id>{14});
    CHECK(t.unconfirmed() == 0);
}

TEST_CASE("out-of-order single confirms; repeats are ignored; unknown tags refused") {
    confirm_tracker t;
    t.add(1);
    t.add(2);
    t.add(0);  // nobody waits
    t.add(4);
    std::vector<op_id> done;
    CHECK(t.settle(2, false, done));
    CHECK(t.settle(2, false, done));
    CHECK(t.settle(3, false, done));
    CHECK(done == std::vector<op_id>{2});
    CHECK(t.unconfirmed() == 2);
    CHECK_FALSE(t.settle(9, false, done));
    CHECK_FALSE(t.settle(0, true, done));
    CHECK(t.drain() == std::vector<op_id>{1, 4});
    CHECK(t.unconfirmed() == 0);
    done.clear();
    CHECK(t.settle(1, true, done));  // already drained: ignored
    CHECK(done.empty());
}
