// echo_worker --http as a process: its command line, a job published
// through the gateway that runs when due, a scrape that promtool accepts, a
// real Prometheus server scraping it, and the status page in headless
// Chromium (its numbers read from the DOM against /metrics).
#include "consumer_fixture.hpp"
#include "http_client.hpp"
#include "worker_process.hpp"

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

using namespace consumer_it;
using tarry_test::http_get;
using tarry_test::http_request;
namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

const std::string token = "a-token-from-a-file";

fs::path token_file() {
    const fs::path f = output_dir("http-token") / "token";
    std::ofstream(f) << token << "\n";  // the newline is not part of it
    return f;
}

/// An echo_worker serving HTTP on a free port, and that port.
struct http_worker {
    http_worker(const std::string& url, const std::string& queue, std::vector<std::string> extra = {})
        : guard(url, queue), w(url, queue, with_http(std::move(extra))) {
        REQUIRE_MESSAGE(w.wait_ready(), w.transcript());
        const std::string where = w.of("ready").front().field("http");
        const auto colon = where.rfind(':');
        REQUIRE_MESSAGE(colon != std::string::npos, w.of("ready").front().raw);
        at = {boost::asio::ip::make_address(where.substr(0, colon)),
              static_cast<std::uint16_t>(std::stoul(where.substr(colon + 1)))};
    }
    static std::vector<std::string> with_http(std::vector<std::string> extra) {
        extra.insert(extra.end(), {"--http", "127.0.0.1:0", "--http-token-file", token_file().string()});
        return extra;
    }
    std::string base() const { return "http://127.0.0.1:" + std::to_string(at.port()); }
    /// POSTs `body` to the gateway with the token.
    tarry_test::http_reply publish(const std::string& body) const {
        return http_request(at, boost::beast::http::verb::post, "/v1/queues/" + guard.o.queue + "/messages", body,
                            {{"Authorization", "Bearer " + token}});
    }

    queue_guard guard;
    worker_process w;
    boost::asio::ip::tcp::endpoint at;
};

/// A program the test needs from a Debian package (scripts/install-deps
/// installs it): its path, or empty after reporting the test skipped.
std::string needed_program(const std::string& name) {
    for (const char* dir : {"/usr/bin", "/usr/local/bin", "/bin"}) {
        const fs::path p = fs::path(dir) / name;
        if (fs::exists(p)) return p.string();
    }
    MESSAGE("SKIPPED: " << name << " is not installed (scripts/install-deps installs it)");
    ++tarry_test::runtime_skips();
    return {};
}

std::uint16_t free_port() {
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor a(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
    return a.local_endpoint().port();
}

/// Series value in a scrape, e.g. metric_value(text, "tarry_jobs_held{queue=\"q\"}").
std::optional<double> metric_value(const std::string& text, const std::string& series) {
    const auto at = text.find("\n" + series + " ");
    if (at == std::string::npos) return std::nullopt;
    return std::stod(text.substr(at + series.size() + 2));
}

}  // namespace

TEST_CASE("echo_worker --http: a job published through the gateway with delay 2 runs 2 s later") {
    TARRY_REQUIRE_BROKER(url);
    http_worker hw(url, unique_name("http-worker-delay"));
    const auto sent = sys::now();
    auto p = hw.publish(R"({"messages":[{"body":"hello","delay":2,"id":"gateway-job"}]})");
    REQUIRE_MESSAGE(p.status == 201, p.body);
    REQUIRE_MESSAGE(hw.w.wait_count("succeeded", 1, 10s), hw.w.transcript());
    const auto run = hw.w.of("run").front();
    CHECK(run.id() == "gateway-job");  // the gateway's id is the message_id
    CHECK(run.at() >= micros(sent + 2s));
    CHECK(run.at() < micros(sent + 4s));
    CHECK(run.at() >= run.due());
}

TEST_CASE("echo_worker --http: bad arguments exit 2 with a reason; a port in use exits 1") {
    TARRY_REQUIRE_BROKER(url);
    const std::string q = unique_name("http-worker-args");
    const auto run = [&](std::vector<std::string> extra) {
        std::vector<std::string> argv{echo_worker_path(), "--url", url, "--queue", q};
        argv.insert(argv.end(), extra.begin(), extra.end());
        return tarry_test::run_process(argv, 30s);
    };
    for (const auto& bad : std::vector<std::vector<std::string>>{
             {"--http", "127.0.0.1"},
             {"--http", "127.0.0.1:99999"},
             {"--http", ":80"},
             {"--http-token", "t"},
             {"--http", "127.0.0.1:0", "--http-token", "t", "--http-token-file", token_file().string()},
             {"--http", "127.0.0.1:0", "--http-token-file", "/nonexistent/token"},
             {"--http", "127.0.0.1:0", "--http-token", ""},
             {"--http", "localhost:0"}}) {
        const auto r = run(bad);
        CHECK_MESSAGE(r.exit_code == 2, bad.front() << " " << (bad.size() > 1 ? bad[1] : "") << ": " << r.err);
        CHECK(r.err.find("usage: echo_worker") != std::string::npos);
    }
    queue_guard guard(url, q);
    http_worker first(url, unique_name("http-worker-port"));
    const auto taken = run({"--http", "127.0.0.1:" + std::to_string(first.at.port())});
    CHECK(taken.exit_code == 1);
    CHECK_MESSAGE(taken.err.find(std::to_string(first.at.port())) != std::string::npos, taken.err);
}

TEST_CASE("echo_worker --http: promtool accepts a scrape") {
    TARRY_REQUIRE_BROKER(url);
    const auto promtool = needed_program("promtool");
    if (promtool.empty()) return;
    http_worker hw(url, unique_name("http-worker-promtool"), {"--max-attempts", "1"});
    // Something in every histogram and in a reason: one job that fails.
    auto p = hw.publish(R"({"messages":[{"body":"ok"},{"body":"no","headers":{"x-echo-fail":1}}]})");
    REQUIRE_MESSAGE(p.status == 201, p.body);
    REQUIRE(hw.w.wait_count("dead", 1, 10s));
    const auto scrape = http_get(hw.at, "/metrics");
    REQUIRE(scrape.status == 200);
    const fs::path file = output_dir("http-promtool") / "scrape.txt";
    std::ofstream(file) << scrape.body;
    const auto check = tarry_test::run_process({"/bin/sh", "-c", "\"$0\" check metrics < \"$1\"", promtool, file},
                                               30s);
    CHECK_MESSAGE(check.exit_code == 0, check.out << check.err);
    CHECK_MESSAGE(check.out.empty(), check.out);  // no lint problem either
    CHECK_MESSAGE(check.err.empty(), check.err);
    const std::string q = "queue=\"" + hw.guard.o.queue + "\"";
    CHECK(metric_value(scrape.body, "tarry_jobs_dead_lettered_total{" + q + ",reason=\"attempts-exhausted\"}") == 1);
}

TEST_CASE("echo_worker --http: a real Prometheus server scrapes it; its query API returns tarry_jobs_held") {
    TARRY_REQUIRE_BROKER(url);
    const auto prometheus = needed_program("prometheus");
    if (prometheus.empty()) return;
    http_worker hw(url, unique_name("http-worker-prometheus"));
    // Three jobs held (due in 10 minutes), so tarry_jobs_held is 3.
    auto p = hw.publish(R"({"messages":[{"body":"a","delay":600},{"body":"b","delay":600},{"body":"c","delay":600}]})");
    REQUIRE_MESSAGE(p.status == 201, p.body);
    const fs::path dir = output_dir("http-prometheus");
    const auto port = free_port();
    std::ofstream(dir / "prometheus.yml") << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                                             "scrape_configs:\n  - job_name: tarry\n    static_configs:\n"
                                             "      - targets: ['127.0.0.1:"
                                          << hw.at.port() << "']\n";
    tarry_test::child_process server({prometheus, "--config.file=" + (dir / "prometheus.yml").string(),
                                      "--storage.tsdb.path=" + (dir / "data").string(),
                                      "--web.listen-address=127.0.0.1:" + std::to_string(port)});
    const boost::asio::ip::tcp::endpoint api(boost::asio::ip::make_address("127.0.0.1"), port);
    std::optional<double> held;
    std::string last;
    for (int i = 0; i < 120 && !held; ++i) {
        std::this_thread::sleep_for(250ms);
        auto r = http_get(api, "/api/v1/query?query=tarry_jobs_held");
        last = r.status ? r.body : r.error;
        if (r.status != 200) continue;
        const auto doc = json::parse(r.body);
        for (const auto& s : doc.at("data").at("result").as_array()) {
            if (s.at("metric").at("queue").as_string() != hw.guard.o.queue) continue;
            held = std::stod(std::string(s.at("value").as_array().at(1).as_string()));
        }
    }
    REQUIRE_MESSAGE(held, "Prometheus never returned tarry_jobs_held; last answer: " << last);
    CHECK(*held == 3);
}

TEST_CASE("echo_worker --http: the status page in headless Chromium shows the numbers of /metrics") {
    TARRY_REQUIRE_BROKER(url);
    const auto chromium = needed_program("chromium");
    if (chromium.empty()) return;
    http_worker hw(url, unique_name("http-worker-page"), {"--max-attempts", "1"});
    auto p = hw.publish(R"({"messages":[{"body":"a","delay":600},{"body":"b","delay":600},{"body":"now"},)"
                          R"({"body":"bad","id":"<b>dead</b>","headers":{"x-echo-fail":1}}]})");
    REQUIRE_MESSAGE(p.status == 201, p.body);
    REQUIRE(hw.w.wait_count("dead", 1, 10s));
    REQUIRE(hw.w.wait_count("succeeded", 1, 10s));
    const fs::path dir = output_dir("http-status-page");
    const std::vector<std::string> browser{chromium, "--headless", "--no-sandbox", "--disable-gpu",
                                           "--user-data-dir=" + (dir / "profile").string()};
    auto args = browser;
    args.push_back("--dump-dom");
    args.push_back(hw.base() + "/");
    const auto dom = tarry_test::run_process(args, 60s);
    REQUIRE_MESSAGE(dom.exit_code == 0, dom.err);
    const auto scrape = http_get(hw.at, "/metrics").body;
    const std::string q = "{queue=\"" + hw.guard.o.queue + "\"}";
    const auto attr = [&](const std::string& name) -> std::optional<double> {
        std::smatch m;
        if (!std::regex_search(dom.out, m, std::regex("data-" + name + "=\"([0-9.e+-]+)\""))) return std::nullopt;
        return std::stod(m[1]);
    };
    CHECK(attr("held") == metric_value(scrape, "tarry_jobs_held" + q));
    CHECK(attr("held") == 2);
    CHECK(attr("received") == metric_value(scrape, "tarry_jobs_received_total" + q));
    CHECK(attr("succeeded") == metric_value(scrape, "tarry_jobs_succeeded_total" + q));
    CHECK(attr("running") == metric_value(scrape, "tarry_jobs_running" + q));
    CHECK(attr("lateness-count") == metric_value(scrape, "tarry_start_lateness_seconds_count" + q));
    CHECK(attr("dead-lettered") == 1);
    // The dead letter's id is shown, escaped, not as markup.
    CHECK(dom.out.find("&lt;b&gt;dead&lt;/b&gt;") != std::string::npos);
    CHECK(dom.out.find("<b>dead</b>") == std::string::npos);
    args = browser;
    args.push_back("--screenshot=" + (dir / "status-page.png").string());
    args.push_back("--window-size=1200,900");
    args.push_back(hw.base() + "/");
    const auto shot = tarry_test::run_process(args, 60s);
    CHECK_MESSAGE(shot.exit_code == 0, shot.err);
    CHECK(fs::exists(dir / "status-page.png"));
    MESSAGE("status page screenshot: " << (dir / "status-page.png").string());
}
