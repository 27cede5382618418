// Cleanups on SIGINT and SIGTERM (see cleanup_on_signal.hpp).
#include "cleanup_on_signal.hpp"

#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

#include <pthread.h>

namespace cbench::on_signal {

namespace {

std::mutex mu;
std::condition_variable cv;
std::map<std::size_t, std::function<void()>> cleanups;
std::size_t next_key = 0;
int deferring = 0;

void wait_and_clean(sigset_t set) {
    int sig = 0;
    if (sigwait(&set, &sig) != 0) return;
    std::fprintf(stderr, "signal %d: stopping what this benchmark started\n", sig);
    std::unique_lock lock(mu);
    cv.wait(lock, [] { return deferring == 0; });
    for (auto it = cleanups.rbegin(); it != cleanups.rend(); ++it) it->second();
    std::_Exit(128 + sig);
}

}  // namespace

void install() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    std::thread(wait_and_clean, set).detach();
}

std::size_t add(std::function<void()> cleanup) {
    std::lock_guard lock(mu);
    cleanups.emplace(next_key, std::move(cleanup));
    return next_key++;
}

void forget(std::size_t key) {
    std::lock_guard lock(mu);
    cleanups.erase(key);
}

deferred::deferred() {
    std::lock_guard lock(mu);
    ++deferring;
}

deferred::~deferred() {
    std::lock_guard lock(mu);
    if (--deferring == 0) cv.notify_all();
}

}  // namespace cbench::on_signal
