// Runs inputs through a fuzz target without libFuzzer, so that the committed
// corpus (and every crash reproducer added to it) is an ordinary test.
//
//   fuzz_replay_<target> [--exclude=PREFIX]... PATH...
//
// Each PATH is a file or a directory whose regular files (not recursive)
// are run in name order, except those of a directory whose names start with
// an excluded PREFIX (meson passes --exclude=crash-: known violations not
// fixed yet, kept beside the corpus; each is named on stderr). A broken
// property aborts, naming the input that was running; otherwise prints how
// many inputs ran. Exits 1 when no input was found (an empty or missing
// corpus is an error, not a pass).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

namespace fs = std::filesystem;

bool run_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
        return false;
    }
    // Exactly the input's size (like libFuzzer's copy), so that a read past
    // the end is caught when the replay is built with AddressSanitizer.
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    std::vector<std::uint8_t> data(ec ? 0 : static_cast<std::size_t>(size));
    if (ec || !in.read(reinterpret_cast<char*>(data.data()),
                       static_cast<std::streamsize>(data.size()))) {
        std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
        return false;
    }
    // Printed before running so that an abort names its input.
    std::fprintf(stderr, "replay: %s (%zu bytes)\n", path.c_str(), data.size());
    LLVMFuzzerTestOneInput(data.data(), data.size());
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    std::size_t ran = 0;
    std::size_t excluded = 0;
    bool ok = true;
    std::vector<std::string> prefixes;
    const std::string exclude = "--exclude=";
    for (int i = 1; i < argc; ++i)
        if (std::string(argv[i]).starts_with(exclude)) prefixes.push_back(std::string(argv[i]).substr(exclude.size()));
    const auto is_excluded = [&](const fs::path& p) {
        const std::string name = p.filename().string();
        return std::any_of(prefixes.begin(), prefixes.end(),
                           [&](const std::string& x) { return name.starts_with(x); });
    };
    auto run = [&](const fs::path& p) {
        if (run_file(p))
            ++ran;
        else
            ok = false;
    };
    for (int i = 1; i < argc; ++i) {
        if (std::string(argv[i]).starts_with(exclude)) continue;
        const fs::path arg(argv[i]);
        std::error_code ec;
        if (fs::is_directory(arg, ec)) {
            std::vector<fs::path> files;
            for (const auto& e : fs::directory_iterator(arg, ec))
                if (e.is_regular_file()) files.push_back(e.path());
            if (ec) {
                std::fprintf(stderr, "replay: cannot list %s: %s\n", argv[i],
                             ec.message().c_str());
                ok = false;
            }
            std::sort(files.begin(), files.end());
            for (const auto& f : files) {
                if (is_excluded(f)) {
                    std::fprintf(stderr, "replay: %s excluded (a known violation, not fixed yet)\n", f.c_str());
                    ++excluded;
                    continue;
                }
                run(f);
            }
        } else if (fs::is_regular_file(arg, ec)) {
            run(arg);
        } else {
            std::fprintf(stderr, "replay: no such file or directory: %s\n", argv[i]);
            ok = false;
        }
    }
    std::printf("replayed %zu inputs", ran);
    if (excluded > 0) std::printf(" (%zu excluded as known violations)", excluded);
    std::printf("\n");
    if (ran == 0) std::fprintf(stderr, "replay: no inputs found\n");
    return ok && ran > 0 ? 0 : 1;
}
