"""The Celery application bench/celery_eta_bench.py starts a worker of:
one task, `tarry_bench.job(job_id, due)`, which appends
"run JOB_ID START DUE" (epoch seconds; DUE "-" for a job due now) to a
file as it starts, and "ready" once the worker is ready. Nothing else is
configured, so the worker runs with Celery's defaults (prefork pool, one
process a core, worker_prefetch_multiplier 4, acks before the task runs)
unless the variant says otherwise.

Read from the environment:
  TARRY_CELERY_BROKER   the broker's AMQP URL
  TARRY_CELERY_QUEUE    the queue tasks go to and the worker consumes
  TARRY_CELERY_VARIANT  "defaults", or "prefetch1": the usual workaround for
                        long tasks and ETA tasks, worker_prefetch_multiplier
                        = 1 with task_acks_late = True
  TARRY_CELERY_OUT      the file the starts are appended to
"""
import os
import time

from celery import Celery
from celery.signals import worker_ready

app = Celery("celery_eta_app", broker=os.environ["TARRY_CELERY_BROKER"])
app.conf.task_default_queue = os.environ["TARRY_CELERY_QUEUE"]
if os.environ.get("TARRY_CELERY_VARIANT") == "prefetch1":
    app.conf.worker_prefetch_multiplier = 1
    app.conf.task_acks_late = True

_out = None


def _record(line):
    # One write() of a short line to a file opened with O_APPEND: the pool's
    # processes never interleave their lines.
    global _out
    if _out is None:
        _out = os.open(os.environ["TARRY_CELERY_OUT"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.write(_out, line.encode())


@app.task(name="tarry_bench.job")
def job(job_id, due):
    start = time.time()
    _record("run %s %.6f %s\n" % (job_id, start, "-" if due is None else "%.6f" % due))


@worker_ready.connect
def _on_ready(**_):
    _record("ready\n")
