// The parts of worker_pool that do not depend on the item type.
#include "tarry/schedule/worker_pool.hpp"

namespace tarry {

std::string exception_text(const std::exception_ptr& e) {
    if (!e) return "no exception";
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& ex) {
        return ex.what();
    } catch (...) {
        return "unknown exception";
    }
}

}  // namespace tarry
