// A delay cascade of a benchmark's own on the broker: declared before the
// run, deleted with its destinations' delivery queues afterwards (shared by
// cascade_bench and compare_bench).
#pragma once

#include "consumer_bench_support.hpp"

#include "tarry/parking/delay_cascade.hpp"

#include <string>
#include <vector>

namespace cbench {

/// Declares every queue, exchange and binding of `c`; dies on failure.
void declare_cascade(endpoint& e, const tarry::parking::delay_cascade& c);
/// Deletes `c`'s queues and exchanges and the delivery queues of the
/// destination queues `destinations` (default exchange).
void delete_cascade(endpoint& e, const tarry::parking::delay_cascade& c, const std::vector<std::string>& destinations);

}  // namespace cbench
