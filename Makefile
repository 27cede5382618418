# The two commands of the README: `make demo` and `make test`.
# Both install what is missing (Debian packages, via scripts/install-deps),
# build with meson + ninja, and start their own private broker.
BUILD ?= build
MESON_FLAGS ?=
# `make install PREFIX=/opt/tarry` installs there; without PREFIX, into the
# build's prefix (meson's default: /usr/local).
PREFIX ?=

.PHONY: all deps build docs deb test-deb test test-rabbitmq4 test-cluster test-partitions test-long sanitize demo bench bench-scale-out bench-compare soak fuzz fuzz-long install clean

all: build

deps:
	@scripts/install-deps

$(BUILD)/build.ninja:
	meson setup $(BUILD) $(MESON_FLAGS)

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

# The API reference: doxygen (docs/api/Doxyfile) over include/tarry/ into
# $(BUILD)/docs/html/ (open index.html). Any warning fails it, an
# undocumented public class, function or option included. Needs no build;
# a few seconds. `make test` checks the same, and enum values too, which
# doxygen 1.9.4 does not warn about (test docs_api_reference).
docs: deps
	@rm -rf $(BUILD)/docs/html && mkdir -p $(BUILD)/docs
	@{ cat docs/api/Doxyfile; echo 'OUTPUT_DIRECTORY = $(BUILD)/docs'; } | doxygen -
	@echo "tarry: API reference in $(BUILD)/docs/html/index.html"

# Debian 12 packages (scripts/make-deb): libtarry0.2, libtarry-dev,
# tarry-tools, tarry-examples, built by dpkg-buildpackage from a copy of the
# tree into $(BUILD)/deb/, then checked by lintian (no error). A few
# minutes on 2 cores; needs no build of ours.
deb: deps
	@scripts/install-deps --deb
	@scripts/make-deb $(BUILD)/deb

# The packages as a user gets them (scripts/test-deb): built as by `deb`,
# then every file under /usr, the versions, no RUNPATH, and tests/install's
# program built with pkg-config and CMake against the packages unpacked
# into an empty root, run against a private broker. Ends with
# `N passed, N failed`; .ci/run runs it. At most 10 minutes on 2 cores.
test-deb: deps
	@scripts/install-deps --deb
	@scripts/with-broker scripts/test-deb $(BUILD)/deb

# Every test program (unit, integration, interop, the layer checks, the
# out-of-tree builds against an install, fuzz-corpus replay, and the
# scheduling core under ThreadSanitizer); ends with `N passed, N failed`.
test: build
	@scripts/run-tests $(BUILD)

# The same tests on RabbitMQ 4.0.5 (Debian 13's package) beside the
# system's 3.10: scripts/install-deps --rabbitmq 4.0 makes the Debian 13 root
# it runs from once (debootstrap into /var/cache/tarry/rabbitmq-4.0, 1 to 9
# minutes as fast as the mirror; reused after), then scripts/run-tests
# --rabbitmq 4.0 builds what the meson suites `integration`, `interop` and
# `cluster` need and runs the first two against a private 4.0 node and
# `cluster` on three 4.0 nodes, every 4.0 node with each deprecated feature
# denied (TARRY_TEST_RABBITMQ=4.0); ends with `N passed, N failed`. At most
# 20 minutes on 2 cores, the root included, once `build` is done. .ci/run
# runs it after `test`.
test-rabbitmq4: deps $(BUILD)/build.ninja
	@scripts/install-deps --rabbitmq 4.0
	@scripts/run-tests --rabbitmq 4.0 $(BUILD)

# On three real nodes (scripts/cluster), so not part of `test`: the script
# itself (start, kill, restart, stop; about a minute), its --netns cluster
# (nodes in network namespaces: partition, heal, pause, resume; about a
# minute; skipped without root), then meson suite `cluster` but the netns
# test just run: the cluster fault suite (a node leading the work queue
# killed mid-load with 10 000 jobs; a few minutes; TARRY_CLUSTER_JOBS=N for
# another load) and the scale-out benchmark's smoke round.
test-cluster: build
	@tests/cluster/cluster_script_test.sh
	@tests/cluster/netns_script_test.sh || [ $$? = 77 ]
	@meson test -C $(BUILD) --suite cluster --no-suite netns --print-errorlogs

# Partitions on three nodes in network namespaces (scripts/cluster --netns,
# root and iproute2): meson suite `partitions`, two echo_workers holding
# 10 000 jobs (TARRY_PARTITION_JOBS=N for another load) through four faults
# (the leader cut off 20 s, a worker's node cut off from everything 25 s,
# that node paused 30 s, the leader cut off 4 s), and the broker fact they
# rest on; about 12 minutes. TARRY_TEST_RABBITMQ=4.0 runs them on 4.0.5.
# Its short variant (the worker's node cut off, 2 000 jobs) is in suite
# `cluster`.
test-partitions: build
	@meson test -C $(BUILD) --suite partitions --print-errorlogs

# The worker fault tests at full load (a worker killed holding 10 000 jobs
# with 1 000 parked, ...) on a private broker; `test` runs them at a tenth.
test-long: build
	@TARRY_FAULT_JOBS=10000 scripts/with-broker meson test -C $(BUILD) integration_worker_faults integration_consumer_schedule integration_consumer_recovery integration_consumer_control --print-errorlogs

# The nemesis (not in `test`, not in CI; docs/reliability.md, "The nemesis
# run"): three nodes in network namespaces (scripts/cluster --netns; root),
# 4 echo_workers and a steady load of delayed jobs, cancels, reschedules
# and periodic schedules under a random fault every 10 to 30 s (a worker or
# a node killed, a node cut off or paused, a worker's connection cut or its
# clock stepped with libfaketime) for NEMESIS_MINUTES (default 30), then
# tests/nemesis/nemesis_check judges the run directory,
# $(BUILD)/nemesis-run; a minute or two more than NEMESIS_MINUTES.
# TARRY_TEST_RABBITMQ=4.0 runs it on 4.0.5. Builds only what it runs. Its
# 3-minute variant is meson suite `nemesis`.
NEMESIS_MINUTES ?= 30
.PHONY: test-nemesis
test-nemesis: $(BUILD)/build.ninja
	@scripts/install-deps $(if $(filter 4.0,$(TARRY_TEST_RABBITMQ)),--rabbitmq 4.0)
	ninja -C $(BUILD) tests/nemesis/nemesis_run tests/nemesis/nemesis_check samples/echo_worker
	@TARRY_SOURCE_ROOT=$(CURDIR) TARRY_BUILD_ROOT=$(abspath $(BUILD)) $(BUILD)/tests/nemesis/nemesis_run --minutes $(NEMESIS_MINUTES) --out $(BUILD)/nemesis-run

# The tests under the sanitizers, in build dirs of their own: ASan + UBSan
# over the whole suite but the cluster's ($(BUILD)-asan), then ThreadSanitizer
# over the scheduling core and the consumer ($(BUILD)-tsan; suites `tsan`
# and `tsan-consumer`); ends with `N passed, N failed`. Too long for `test`
# (see docs/reliability.md, "Sanitizers").
sanitize: deps
	@scripts/sanitize $(BUILD)

# The sample worker against a private broker, with a timeline as it happens.
# Builds only what the demo needs (the library and the demo program).
demo: deps $(BUILD)/build.ninja
	ninja -C $(BUILD) samples/scheduled_jobs_demo
	@scripts/demo $(BUILD)

# Benchmarks (not run in CI); figures go to bench/RESULTS.md.
bench: build
	@scripts/run-bench $(BUILD)

# The soak (not in `test`, not in CI; scripts/soak): one echo_worker for an
# hour at a steady 500 jobs/s of mixed delays and retries on a private
# broker; its RSS and the lateness p99 per minute, judged flat or not, with
# a CSV and a plot. Builds only the worker, the publisher and the report.
# SOAK_ARGS='--minutes 3 --sample-s 10' for a short run.
SOAK_ARGS ?=
soak: deps $(BUILD)/build.ninja
	ninja -C $(BUILD) samples/echo_worker bench/soak_publish bench/soak_report
	@scripts/soak --build $(BUILD) $(SOAK_ARGS)

# Scale-out on a three-node cluster of its own (scripts/cluster, about 30 s
# to boot): T and L with 1, 2 and 4 samples/echo_worker processes on a
# quorum queue beside a raw consume+ack loop, 5 rounds (about 6 minutes);
# figures go to bench/RESULTS.md. SCALE_OUT_FLAGS=--smoke for one short
# round. Builds only what it runs.
SCALE_OUT_FLAGS ?=
bench-scale-out: deps $(BUILD)/build.ninja
	ninja -C $(BUILD) bench/scale_out_bench samples/echo_worker
	@TARRY_SOURCE_ROOT=$(CURDIR) TARRY_BUILD_ROOT=$(abspath $(BUILD)) $(BUILD)/bench/scale_out_bench $(SCALE_OUT_FLAGS)

# tarry against what users pick instead, in one run on a private broker
# (not in `test`, not in CI): L, H and T against a naive pika consumer
# sleeping until due, Celery ETA tasks (defaults, and prefetch multiplier 1
# with late acks), the delay cascade alone, and in T the raw loop and
# rabbitmq-c; Markdown tables, lateness CDFs and throughput bars into
# bench/plots/compare-*.svg (about 10 minutes on 2 cores; figures go to
# bench/RESULTS.md). BENCH_COMPARE_FLAGS=--smoke for a two-minute check
# (no plots written). Builds only what it runs.
BENCH_COMPARE_FLAGS ?=
bench-compare: deps $(BUILD)/build.ninja
	ninja -C $(BUILD) bench/compare_bench bench/rabbitmq_c_consume
	@TARRY_SOURCE_ROOT=$(CURDIR) scripts/with-broker $(BUILD)/bench/compare_bench $(BENCH_COMPARE_FLAGS)

# A bounded libFuzzer run (about 60 s per target) with clang.
fuzz: deps
	@scripts/fuzz 60

# The long runs (not in `test`, not in CI; scripts/fuzz-long): 10^8
# executions of the schedule contract's and the consumer core's targets,
# UBSan build, one process per core (about 2.5 hours on two idle cores);
# figures go to bench/RESULTS.md. FUZZ_LONG_ARGS='1000000 consumer_core'
# for another count or target.
FUZZ_LONG_ARGS ?=
fuzz-long: deps
	@scripts/fuzz-long $(FUZZ_LONG_ARGS)

# The library, its headers, tarry.pc, the CMake package and the `tarry` tool.
install: build
	$(if $(PREFIX),meson configure $(BUILD) --prefix $(abspath $(PREFIX)))
	meson install -C $(BUILD)

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-tsan $(BUILD)-fuzz $(BUILD)-fuzz-ub
