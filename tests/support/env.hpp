// Test helpers: the environment meson and scripts/with-broker set up.
//   TARRY_SOURCE_ROOT, TARRY_BUILD_ROOT  (meson's test_env)
//   TARRY_TEST_AMQP_URL, TARRY_TEST_BROKER_DIR  (scripts/with-broker)
//   TARRY_TEST_RABBITMQ  (the broker version: 3.10, the default, or 4.0)
#pragma once

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace tarry_test {

/// Cases that skipped themselves so far (counted by the macros below;
/// defined with the test programs' main(), which reports them).
int& runtime_skips();

/// The variable's value, or nothing when unset or empty.
inline std::optional<std::string> env(const char* name) {
    const char* v = std::getenv(name);
    if (!v || !*v) return std::nullopt;
    return std::string(v);
}

/// The source tree (for scripts and python peers); "." when unset.
inline std::string source_root() { return env("TARRY_SOURCE_ROOT").value_or("."); }

/// `--rabbitmq V` for scripts/broker and scripts/cluster start, from
/// TARRY_TEST_RABBITMQ (as scripts/with-broker passes it); nothing when it
/// is unset, which is the scripts' default, 3.10.
inline std::vector<std::string> rabbitmq_version_args() {
    if (auto v = env("TARRY_TEST_RABBITMQ")) return {"--rabbitmq", *v};
    return {};
}

/// The shared private broker of this test run, if any.
inline std::optional<std::string> amqp_url() { return env("TARRY_TEST_AMQP_URL"); }
inline std::optional<std::string> broker_dir() { return env("TARRY_TEST_BROKER_DIR"); }

}  // namespace tarry_test

/// Skips the current doctest case, loudly, when no broker was given.
/// Usage: first line of a test case:  TARRY_REQUIRE_BROKER(url);
#define TARRY_REQUIRE_BROKER(url_var)                                                         \
    const auto url_var##_opt = ::tarry_test::amqp_url();                                      \
    if (!url_var##_opt) {                                                                     \
        MESSAGE("SKIPPED: TARRY_TEST_AMQP_URL is not set (run under scripts/with-broker)");   \
        ++::tarry_test::runtime_skips();                                                      \
        return;                                                                               \
    }                                                                                         \
    const std::string url_var = *url_var##_opt

/// Skips the current doctest case, loudly, when the run's broker cannot be
/// driven with rabbitmqctl (no node directory given).
/// Usage:  TARRY_REQUIRE_BROKER_DIR(dir);  then *dir is the node directory.
#define TARRY_REQUIRE_BROKER_DIR(dir_var)                          \
    const auto dir_var = ::tarry_test::broker_dir();               \
    if (!dir_var) {                                                \
        MESSAGE("SKIPPED: TARRY_TEST_BROKER_DIR is not set");      \
        ++::tarry_test::runtime_skips();                           \
        return;                                                    \
    }                                                              \
    static_assert(true, "")
