// The one main() shared by every doctest program of tarry. Cases that skip
// themselves at run time (TARRY_REQUIRE_BROKER and the like, which doctest
// would count as passed) are counted here and printed after doctest's
// summary ("[tarry] skipped at run time: K"; scripts/test-summary moves
// them from passed to skipped); a program that skipped some and failed
// nothing exits 77, which meson reports as SKIP.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

namespace tarry_test {
int& runtime_skips() {
    static int n = 0;
    return n;
}
}  // namespace tarry_test

int main(int argc, char** argv) {
    doctest::Context context(argc, argv);
    const int result = context.run();
    if (context.shouldExit()) return result;
    const int skipped = tarry_test::runtime_skips();
    if (skipped == 0) return result;
    std::printf("[tarry] skipped at run time: %d\n", skipped);
    return result != 0 ? result : 77;
}
