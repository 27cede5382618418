// What the core asks about run claims (docs/periodic.md, "Run claims"):
// which copy of a periodic occurrence runs. The driver answers from the
// consumer's run_claims (run_claims.hpp), which the control-stream reader
// fills; tests answer from a plain map. The core asks when it admits an
// occurrence and when one that a worker could not release yet is looked
// at again; workers ask before running one (consumer_workers.hpp).
#pragma once

#include <string_view>

namespace tarry::detail {

enum class claim_verdict {
    runs,     ///< no claim needed (not an occurrence, or claims not in force), or this copy won
    lost,     ///< another copy's claim came first: this one is acked without running
    unknown,  ///< no claim of the occurrence was read yet: it waits
};

class claim_oracle {
public:
    /// Whether claims decide at all: the queue's control stream exists and
    /// is read (until then every copy runs).
    virtual bool in_force() const noexcept = 0;
    /// The verdict for copy `copy` of occurrence `occurrence_id`.
    virtual claim_verdict verdict(std::string_view occurrence_id, std::string_view copy) const = 0;

protected:
    ~claim_oracle() = default;
};

}  // namespace tarry::detail
