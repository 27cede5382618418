#!/usr/bin/python3
"""Celery 5.2 (Debian's python3-celery) in bench/compare_bench: runs a
Celery worker (bench/celery_eta_app.py) as a child process on a queue of
its own and publishes a scenario's jobs as Celery tasks with
apply_async(eta=...), the way a Celery user schedules a job for later.

    celery_eta_bench.py AMQP_URL QUEUE VARIANT PLAN_FILE

VARIANT: "defaults" or "prefetch1" (see celery_eta_app.py). PLAN_FILE: a
first line "prefill" or "live", then one line a job, "PHASE ID DELAY_S" in
publishing order (DELAY_S "-": due now, published without an eta). Each
phase is published after the one before it; a job is due DELAY_S after
its phase began. "prefill": every job is published before the worker
starts (a queue full of work, as in the throughput scenario); "live": the
worker is ready first.

Prints "phase K BEGAN" as phase K begins to be published (epoch seconds),
"ready" once the worker is ready, "published" once every job is
published, then the worker's "run JOB_ID START DUE" lines as its tasks
start. Runs until it is
terminated (SIGTERM); then stops the worker (warm shutdown, killed after
15 s) and exits. The queue is left for the caller to delete.
"""
import datetime
import os
import signal
import subprocess
import sys
import tempfile
import time

import kombu

url, queue, variant, plan_file = sys.argv[1:5]
here = os.path.dirname(os.path.abspath(__file__))
with open(plan_file) as f:
    mode = f.readline().strip()
    plan = []
    for line in f:
        phase, job_id, delay = line.split()
        plan.append((int(phase), job_id, None if delay == "-" else float(delay)))

out_path = tempfile.mkstemp(prefix="celery-eta-starts-")[1]
log = tempfile.TemporaryFile()
env = dict(os.environ, TARRY_CELERY_BROKER=url, TARRY_CELERY_QUEUE=queue, TARRY_CELERY_VARIANT=variant,
           TARRY_CELERY_OUT=out_path, PYTHONPATH=here)
os.environ.update(env)
sys.path.insert(0, here)
from celery_eta_app import job  # noqa: E402  (configured by the environment above)

worker = None


def stop(*_):
    raise SystemExit(0)


signal.signal(signal.SIGTERM, stop)


def publish():
    """Publishes the plan, phase by phase."""
    phase, began = None, 0.0
    for p, job_id, delay in plan:
        if p != phase:
            phase, began = p, time.time()
            print("phase %d %.6f" % (phase, began), flush=True)
        if delay is None:
            job.apply_async(args=(job_id, None))
            continue
        due = began + delay
        job.apply_async(args=(job_id, due), eta=datetime.datetime.fromtimestamp(due, datetime.timezone.utc))


def start_worker():
    return subprocess.Popen([sys.executable, "-m", "celery", "-A", "celery_eta_app", "worker", "--loglevel=WARNING"],
                            cwd=here, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def fail(why):
    log.seek(0)
    sys.stderr.write("celery_eta_bench.py: %s; the worker's log:\n%s\n" % (why, log.read().decode(errors="replace")[-4000:]))
    raise SystemExit(1)


try:
    # The queue as Celery declares its default queue (a direct exchange of
    # the same name), so that publishing before the worker starts keeps
    # the tasks.
    with kombu.Connection(url) as conn:
        kombu.Queue(queue, kombu.Exchange(queue, "direct"), routing_key=queue)(conn.default_channel).declare()
    if mode == "prefill":
        publish()
    worker = start_worker()
    with open(out_path) as starts:
        deadline = time.time() + 60
        while starts.readline().strip() != "ready":
            if worker.poll() is not None:
                fail("the worker exited")
            if time.time() > deadline:
                fail("the worker was not ready in 60 s")
            time.sleep(0.05)
        print("ready", flush=True)
        if mode != "prefill":
            publish()
        print("published", flush=True)
        pending = ""
        while True:
            chunk = starts.read()
            if chunk:
                pending += chunk
                lines = pending.split("\n")
                pending = lines.pop()
                for line in lines:
                    if line.startswith("run "):
                        print(line)
                sys.stdout.flush()
            elif worker.poll() is not None:
                fail("the worker exited")
            else:
                time.sleep(0.02)
finally:
    if worker is not None and worker.poll() is None:
        worker.terminate()
        try:
            worker.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
    os.unlink(out_path)
