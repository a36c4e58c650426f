"""Search over HTTP under load, as ``make run`` serves it, beside its floor (issue 13 item 2).

What it does, in order, on a database folder of its own (``.data/bench-load-<corpus>/``: the
embedded PostgreSQL, the Celery broker, the Prometheus files and the admin password file):

1. **Corpus, one ingestion run after another**, each a ``manage.py`` process: ``demo_setup`` (the
   bundled MedQuAD slice, the SAMPLE hospital, the SNOMED CT subset), with ``--corpus full`` the
   whole MedQuAD (``../shared/data/medquad``, about 25 minutes on 2 cores), the RIVM Corona FAQ
   (xlsx) and the 100 hospital-nl pages (jsonl). Re-running without ``--fresh`` reuses the folder
   (unchanged documents are skipped and write nothing).
2. **BM25 after each run**: the segment count of ``chunk_bm25_idx`` and the rows in its mutable
   segment (``paradedb.index_info``) and the time of ``selectors.chunks_lexical_search`` on
   ``--bm25-questions`` questions of the mix, once as served (one process) and once with
   ``parallel=True`` (PostgreSQL may start parallel workers), interleaved per question; plus
   EXPLAIN ANALYZE of one query each way (whether a Gather node is planned, execution time).
3. **The floor**: the same embedding calls and database statements a request makes, without
   Django. Each of ``--floor-questions`` questions is first answered in process by
   ``search_answer`` (semantic cache off, in autocommit as a web worker answers; the answers are
   deleted afterwards and never announced to the judge) while every SQL
   statement with its parameters and every text given to the embedding model is recorded. Then
   the recording is replayed: the texts go straight to the model (its in-process cache
   bypassed) and the statements through a bare psycopg connection (in a transaction rolled back
   afterwards), timed per question and per part (embedding; dense = the HNSW statements; BM25 =
   the pg_search statements; other SQL). Replayed serially (latency floor) and from 8 threads
   with a connection each (throughput floor at 8 concurrent clients).
4. **HTTP under load**: ``manage.py serve`` (gunicorn with ``WEB_WORKERS`` x ``WEB_THREADS``, the
   Celery worker at nice 19 and beat, exactly as ``make run``) on a free loopback port, warmed
   up, then locust headless (``benchmarks/locustfile.py``) phase after phase, each bounded by
   ``--run-time`` seconds and ``--max-requests`` requests: closed-loop with each of ``--users``
   (every user asks its next question as soon as its answer is back), then 8 users paced to
   ``--paced-rps`` requests per second in all, once per arrival model of ``--paced-arrivals``
   (``poisson``: exponential gaps, independent clients; ``cadence``: locust's fixed gaps, which
   leave the users' requests in bursts; ``benchmarks/locustfile.py``), all with the semantic
   cache off (flag row
   ``semantic_cache_enabled``) so that every request runs the whole pipeline; then 8 closed-loop
   users with the cache on over ``--cache-distinct`` questions asked again and again (popular
   questions). Per phase: p50/p95/p99 latency measured by the client, requests/s, errors, the
   answers' outcomes and cache hits, how bursty the starts were
   (:func:`benchmarks.arrivals.arrival_pattern`),
   p50/p95 of every stage in the answers' ``timings_ms``, and
   the CPU seconds each process of serve's tree and PostgreSQL used (psutil; how evenly the
   gunicorn workers shared the load, and the web tier's CPU per request).
5. **Soak** (``--soak SECONDS``; ``make bench`` passes 300): 8 closed-loop users with the cache
   off, while the resident memory (RSS) of every process ``serve`` started and of the
   PostgreSQL server is sampled with psutil every 10 s: start, end, max and the least-squares
   slope (MB per minute, over the whole soak and over its second half), and the errors.

The question mix: the golden sets in ``data/golden`` that a patient might ask (MedQuAD held-out
originals and English/Dutch paraphrases and noisy rewrites, the MedQuAD dev set, the CI slice
set, RIVM, the SAMPLE hospital, must-answer; red flags and harmful requests are left out because
they stop early and would flatter the figures), shuffled with a fixed seed. Questions are taken
in turn by all users across the phases, so a text is sent again only once all have been sent
(the share of repeats is reported: the gunicorn workers' embedding cache serves a repeat's query
vector). Loopback is exempt from the patient rate limit in the local profile
(``RATE_LIMIT_EXEMPT_IPS``); a 429 would count as an error.

The load generator runs on the same 2 cores as the server (locust with geventhttpclient, one
process) and takes its share of them; the machine's load average is recorded per phase.

Run (results in ``docs/bench-results/load-<corpus>.json``)::

    .venv/bin/python -m benchmarks.load                 # slice + RIVM + hospital-nl, no soak
    .venv/bin/python -m benchmarks.load --fresh --soak 300
    .venv/bin/python -m benchmarks.load --corpus full   # + the whole MedQuAD (~25 min the first time)
    .venv/bin/python -m benchmarks.load --fresh --skip-http --bm25-mutable-segment-rows 0  # experiment
    .venv/bin/python -m benchmarks.load --report docs/bench-results/load-default.json   # the tables

An experiment (``--bm25-mutable-segment-rows``) uses a folder and a results file of its own.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.arrivals import arrival_pattern
from benchmarks.common import BASE_DIR, MEDQUAD, percentile, results_write

SHARED_DATA = BASE_DIR.parent / "shared" / "data"
RIVM_XLSX = SHARED_DATA / "rivm" / "Corona_FAQ.xlsx"
HOSPITAL_JSONL = SHARED_DATA / "hospital-nl" / "pages.jsonl"
LOCUSTFILE = Path(__file__).resolve().parent / "locustfile.py"
# Golden sets a patient might ask (module docstring); red-flags and medsafetybench are left out.
QUESTION_SETS = (
    "medquad-heldout",
    "medquad-heldout-para-en",
    "medquad-heldout-para-nl",
    "medquad-heldout-noisy",
    "medquad-dev",
    "ci-slice",
    "rivm-faq",
    "sample-hospital",
    "must-answer",
)
SEED = 13
RSS_SAMPLE_S = 10.0
POSTGRES_USS = "postgres (all processes, USS)"
BM25_INDEX = "chunk_bm25_idx"


# --- question mix ---------------------------------------------------------------------------


def questions_load(*, seed: int = SEED, extend_to: int = 20000) -> list[dict[str, str]]:
    """The shuffled question mix: ``[{"question", "language", "set"}]``, distinct texts.

    First the golden sets of :data:`QUESTION_SETS`; then, up to ``extend_to`` questions in all,
    more made the way those sets were made (``evaluation.golden.builders.medquad``: the
    MedQuAD dev split's original questions and their English and Dutch paraphrases, set
    ``medquad-builder``), so that no text needs to be sent twice in a run: a repeated text
    would find its query vector and its answer's vector in the worker's embedding cache.
    """
    from evaluation.golden.builders.medquad import medquad_golden, medquad_paraphrased

    seen: set[str] = set()
    questions = []

    def add(text: str, language: str, name: str) -> None:
        text = text.strip()
        if text and text not in seen:
            seen.add(text)
            questions.append({"question": text, "language": language, "set": name})

    for name in QUESTION_SETS:
        for line in (BASE_DIR / "data" / "golden" / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                add(str(row["question"]), str(row.get("language") or "en"), name)
    if MEDQUAD.is_dir():
        items = medquad_golden(path=MEDQUAD, split="dev", limit=None, seed=seed)
        built = [
            (item.question, item.language)
            for variant in (
                items,
                medquad_paraphrased(items=items, language="en"),
                medquad_paraphrased(items=items, language="nl"),
            )
            for item in variant
        ]
        random.Random(seed).shuffle(built)
        for text, language in built:
            if len(questions) >= extend_to:
                break
            add(text, language, "medquad-builder")
    random.Random(seed).shuffle(questions)
    return questions


# --- environment ----------------------------------------------------------------------------


@dataclass
class Bench:
    """Where this benchmark keeps its data, and the environment of every process it starts."""

    folder: Path

    @property
    def pgdata(self) -> Path:
        return self.folder / "postgres"

    @property
    def runs(self) -> Path:
        return self.folder / "runs"

    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "zolsearch.settings",
            "EMBEDDED_PGDATA": str(self.pgdata),
            "CELERY_BROKER_DIR": str(self.folder / "broker"),
            "PROMETHEUS_MULTIPROC_DIR": str(self.folder / "prometheus"),
            "ADMIN_PASSWORD_FILE": str(self.folder / "admin-password.txt"),
            # A gunicorn worker gets cores ÷ workers encoder threads (zolsearch/gunicorn_conf.py);
            # this process and its ingestion runs get the same one thread per process.
            "EMBEDDING_THREADS": os.environ.get("EMBEDDING_THREADS", "1"),
            "PYTHONUNBUFFERED": "1",
        }


def machine_load() -> dict[str, Any]:
    """Load averages over 1, 5 and 15 minutes (runnable processes; this machine has 2 cores)."""
    one, five, fifteen = os.getloadavg()
    return {"load_1m": round(one, 2), "load_5m": round(five, 2), "load_15m": round(fifteen, 2)}


def django_setup(bench: Bench) -> None:
    """Point this process's Django at the benchmark's folder, migrate, keep the connection (so
    the embedded PostgreSQL stays up between the ingestion processes)."""
    os.environ.update(bench.env())
    sys.path.insert(0, str(BASE_DIR))
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    connection.ensure_connection()


# --- 1 and 2: ingestion runs and BM25 ------------------------------------------------------


def ingestion_steps(corpus: str) -> list[tuple[str, list[str]]]:
    """``(label, manage.py arguments)`` of the ingestion runs, in order."""
    steps = [("medquad-slice (demo_setup)", ["demo_setup"])]
    if corpus == "full":
        steps.append(("medquad-full", ["ingest", "medquad", str(MEDQUAD)]))
    steps += [
        ("rivm", ["ingest", "rivm", str(RIVM_XLSX)]),
        ("hospital-nl", ["ingest", "jsonl", str(HOSPITAL_JSONL), "--source", "hospital-nl"]),
    ]
    return steps


def ingestion_run(bench: Bench, args: list[str]) -> float:
    """Run ``manage.py <args>`` with the benchmark's environment; wall seconds. Raises
    ``CalledProcessError`` when it fails."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "manage.py", *args, "--verbosity", "0"], cwd=BASE_DIR, env=bench.env(), check=True)
    return time.perf_counter() - started


def index_facts() -> dict[str, int]:
    """Segments of the BM25 index, rows in its mutable segment (pg_search keeps rows written in
    small batches there until ``mutable_segment_rows`` accumulate) and chunks in the table."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*), coalesce(sum(num_docs) FILTER (WHERE mutable), 0) "
            f"FROM paradedb.index_info('{BM25_INDEX}')"
        )
        segments, mutable_rows = cursor.fetchone()
        cursor.execute("SELECT count(*) FROM ingestion_chunk")
        chunks = int(cursor.fetchone()[0])
    return {"segments": int(segments), "mutable_rows": int(mutable_rows), "chunks": chunks}


def bm25_mutable_segment_rows_set(rows: int) -> None:
    """``ALTER INDEX chunk_bm25_idx SET (mutable_segment_rows = rows)`` on the benchmark's
    database, then VACUUM so rows already in the mutable segment move to an immutable one. An
    experiment: migration ingestion 0008 sets 0 (the fix this benchmark found); a positive value
    brings back the mutable segment to compare."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f"ALTER INDEX {BM25_INDEX} SET (mutable_segment_rows = {int(rows)})")
        cursor.execute("VACUUM ingestion_chunk")


@functools.lru_cache(maxsize=16)
def _served_stopwords(language: str) -> frozenset[str]:
    """The words the default configuration's BM25 leaves out of a question in ``language``
    (:func:`zolsearch.search.stages.retrieval.lexical_stopwords`), so the statement timed is the
    one served; read once per language (the default configuration reads the flag rows)."""
    from zolsearch.search.config import pipeline_config_default
    from zolsearch.search.stages.retrieval import lexical_stopwords

    return lexical_stopwords(language, pipeline_config_default())


def bm25_explain(question: str, language: str, *, parallel: bool, limit: int) -> dict[str, Any]:
    """EXPLAIN ANALYZE of the BM25 statement the selector runs for ``question``: whether a Gather
    (parallel workers) is planned, workers launched, planning and execution time (ms)."""
    from django.db import connection, transaction

    from zolsearch.search import selectors

    recorded: list[tuple[str, Any]] = []

    def record(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        if "pdb.score" in sql:
            recorded.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        selectors.chunks_lexical_search(
            query=question, language=language, limit=limit, parallel=parallel, stopwords=_served_stopwords(language)
        )
    if not recorded:
        return {}
    sql, params = recorded[0]
    # The SELECT itself, without the SET LOCAL sent in the same message (set here instead).
    sql = next(statement for statement in sql.split("; ") if "pdb.score" in statement)
    with transaction.atomic(), connection.cursor() as cursor:
        if not parallel:
            cursor.execute("SET LOCAL max_parallel_workers_per_gather = 0")
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
        plan = cursor.fetchone()[0]
    plan = plan[0] if isinstance(plan, list) else json.loads(plan)[0]
    text = json.dumps(plan)
    return {
        "gather": '"Gather' in text,
        "workers_launched": sum(int(n) for n in _values(plan, "Workers Launched")),
        "planning_ms": round(float(plan.get("Planning Time", 0.0)), 3),
        "execution_ms": round(float(plan.get("Execution Time", 0.0)), 3),
    }


def _values(node: Any, key: str) -> Iterable[Any]:
    if isinstance(node, dict):
        for k, v in node.items():
            if k == key:
                yield v
            else:
                yield from _values(v, key)
    elif isinstance(node, list):
        for item in node:
            yield from _values(item, key)


def bm25_measure(questions: list[dict[str, str]], *, limit: int) -> dict[str, Any]:
    """Time ``chunks_lexical_search`` (ms, in process, through Django's cursor) over
    ``questions``, without the stop words the default configuration leaves out, as served (one process) and with parallel workers allowed, alternating which
    goes first per question; 5 warm-up queries each way first."""
    from zolsearch.search import selectors

    def timed(q: dict[str, str], parallel: bool) -> float:
        stopwords = _served_stopwords(q["language"])
        started = time.perf_counter()
        selectors.chunks_lexical_search(
            query=q["question"], language=q["language"], limit=limit, parallel=parallel, stopwords=stopwords
        )
        return (time.perf_counter() - started) * 1000

    for q in questions[:5]:
        timed(q, False)
        timed(q, True)
    times: dict[str, list[float]] = {"single": [], "parallel": []}
    for i, q in enumerate(questions):
        order = (False, True) if i % 2 == 0 else (True, False)
        for parallel in order:
            times["parallel" if parallel else "single"].append(timed(q, parallel))
    probe = questions[0]
    return {
        **index_facts(),
        **machine_load(),
        "n": len(questions),
        **{
            mode: {
                "p50": round(percentile(values, 50), 2),
                "p95": round(percentile(values, 95), 2),
                "p99": round(percentile(values, 99), 2),
                "explain": bm25_explain(probe["question"], probe["language"], parallel=mode == "parallel", limit=limit),
            }
            for mode, values in times.items()
        },
    }


# --- 3: the floor ---------------------------------------------------------------------------


@dataclass
class Recording:
    """What answering one question asked of the database and the embedding model."""

    question: str
    statements: list[tuple[str, Any]] = field(default_factory=list)
    embeddings: list[tuple[str, list[str]]] = field(default_factory=list)  # ("query"|"passage", texts)
    timings_ms: dict[str, float] = field(default_factory=dict)  # the pipeline's, in process
    outcome: str = ""


def floor_record(questions: list[dict[str, str]]) -> list[Recording]:
    """Answer each question in process (semantic cache off) in autocommit, as a web worker does
    (the statements a live request sends differ inside a transaction), recording every SQL
    statement with its parameters and every text embedded; the answers are deleted afterwards
    and never announced to the judge."""
    from django.db import connection

    from core.providers.embeddings import embedding_provider_get
    from evaluation.apps import _answer_stored as judge_receiver
    from zolsearch.search.config import pipeline_config_default
    from zolsearch.search.models import Answer
    from zolsearch.search.pipeline import SearchRequest
    from zolsearch.search.services import answer_stored, search_answer

    config = pipeline_config_default().with_overrides(semantic_cache_enabled=False)
    provider = embedding_provider_get(config.embedding_model)
    current: Recording | None = None

    def record_sql(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        if current is not None:
            current.statements.append((sql, params))
        return execute(sql, params, many, context)

    def recording(kind: str, method: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def embed(texts: Any) -> Any:
            if current is not None:
                current.embeddings.append((kind, list(texts)))
            return method(texts)

        return embed

    stored: list[int] = []

    def answer(question: str) -> str:
        state, row = search_answer(request=SearchRequest(question=question), config=config)
        stored.append(row.pk)
        if current is not None:
            current.timings_ms = dict(state.timings_ms)
        return str(state.outcome)

    recordings = []
    answer_stored.disconnect(judge_receiver, dispatch_uid="evaluation.judge_answer")
    try:
        for q in questions[:3]:  # warm-up: the classifiers train on their first use
            answer(q["question"])
        setattr(provider, "embed_queries", recording("query", provider.embed_queries))  # noqa: B010
        setattr(provider, "embed_passages", recording("passage", provider.embed_passages))  # noqa: B010
        with connection.execute_wrapper(record_sql):
            for q in questions:
                current = Recording(question=q["question"])
                current.outcome = answer(q["question"])
                recordings.append(current)
    finally:
        current = None
        for name in ("embed_queries", "embed_passages"):
            if name in vars(provider):
                delattr(provider, name)
        answer_stored.connect(judge_receiver, dispatch_uid="evaluation.judge_answer")
        Answer.objects.filter(pk__in=stored).delete()
    return recordings


def _part(sql: str) -> str:
    if "<=>" in sql or "hnsw." in sql:
        return "dense"
    if "pdb.score" in sql or "max_parallel_workers_per_gather" in sql:
        return "bm25"
    return "other_sql"


def floor_replay(recording: Recording, raw: Any, provider: Any) -> dict[str, float]:
    """Replay ``recording`` without Django: the embeddings straight from the model, the
    statements on the psycopg connection ``raw`` in a transaction rolled back. Per part, ms."""
    parts: dict[str, float] = defaultdict(float)
    started = time.perf_counter()
    for kind, texts in recording.embeddings:
        t0 = time.perf_counter()
        (provider._embed_queries if kind == "query" else provider._embed_passages)(texts)
        parts["embedding"] += (time.perf_counter() - t0) * 1000
    with raw.transaction(force_rollback=True), raw.cursor() as cursor:
        for sql, params in recording.statements:
            t0 = time.perf_counter()
            cursor.execute(sql, params)
            while True:  # every result of a message (the retrievers send SET LOCAL with the query)
                if cursor.description is not None:
                    cursor.fetchall()
                if not cursor.nextset():
                    break
            parts[_part(sql)] += (time.perf_counter() - t0) * 1000
    parts["total"] = (time.perf_counter() - started) * 1000
    return dict(parts)


def _summary(values: list[float]) -> dict[str, float]:
    return {
        "p50": round(percentile(values, 50), 2),
        "p95": round(percentile(values, 95), 2),
        "p99": round(percentile(values, 99), 2),
        "mean": round(sum(values) / len(values), 2) if values else float("nan"),
    }


def _by_stage(timings: Iterable[dict[str, float]]) -> dict[str, list[float]]:
    stages: dict[str, list[float]] = defaultdict(list)
    for row in timings:
        for stage, ms in row.items():
            stages[stage].append(float(ms))
    return stages


def floor_measure(questions: list[dict[str, str]], *, threads: int) -> dict[str, Any]:
    """Record, then replay serially (latency per question) and from ``threads`` threads with a
    connection each (requests/s at that concurrency)."""
    from django.db import connection

    from core.providers.embeddings import embedding_provider_get

    recordings = floor_record(questions)
    provider = embedding_provider_get()
    connection.ensure_connection()
    raw = connection.connection
    for recording in recordings[:5]:
        floor_replay(recording, raw, provider)
    serial: dict[str, list[float]] = defaultdict(list)
    for recording in recordings:
        for part, ms in floor_replay(recording, raw, provider).items():
            serial[part].append(ms)

    params = connection.get_connection_params()
    raws = [connection.get_new_connection(params) for _ in range(threads)]
    for conn in raws:
        conn.autocommit = True
    local = threading.local()
    pool_index = iter(range(threads))
    lock = threading.Lock()

    def replay(recording: Recording) -> float:
        if not hasattr(local, "raw"):
            with lock:
                local.raw = raws[next(pool_index)]
        return floor_replay(recording, local.raw, provider)["total"]

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        concurrent = list(pool.map(replay, recordings))
    wall = time.perf_counter() - started
    for conn in raws:
        conn.close()
    statements = [len(r.statements) for r in recordings]
    return {
        "questions": len(recordings),
        "outcomes": dict(Counter(r.outcome for r in recordings)),
        "statements_per_question": {"mean": round(sum(statements) / len(statements), 1), "max": max(statements)},
        "embedding_calls_per_question": round(sum(len(r.embeddings) for r in recordings) / len(recordings), 2),
        "embedded_texts_per_question": _summary([float(sum(len(t) for _, t in r.embeddings)) for r in recordings]),
        "embedded_chars_per_question": _summary(
            [float(sum(len(x) for _, t in r.embeddings for x in t)) for r in recordings]
        ),
        "in_process_stage_ms": {
            stage: {"p50": round(percentile(v, 50), 2), "p95": round(percentile(v, 95), 2)}
            for stage, v in sorted(_by_stage(r.timings_ms for r in recordings).items())
        },
        "serial_ms": {part: _summary(values) for part, values in serial.items()},
        f"threads_{threads}": {"requests_per_s": round(len(recordings) / wall, 1), "latency_ms": _summary(concurrent)},
        **machine_load(),
    }


# --- 4 and 5: serve, locust, memory ---------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Serve:
    """``manage.py serve`` on the benchmark's folder, stopped with SIGTERM (its own shutdown)."""

    def __init__(self, bench: Bench, port: int) -> None:
        self.bench, self.port = bench, port
        self.log = (bench.runs / "serve.log").open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--addrport", f"127.0.0.1:{port}"],
            cwd=BASE_DIR,
            env=bench.env(),
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait(self, timeout_s: float = 600.0) -> float:
        """Seconds until a search answers 200 (both gunicorn workers may still be warming up).
        Raises ``RuntimeError`` when serve exits or the timeout passes."""
        started = time.monotonic()
        body = json.dumps({"question": "What are the symptoms of diabetes?"}).encode()
        while time.monotonic() - started < timeout_s:
            if self.process.poll() is not None:
                raise RuntimeError(f"serve exited with {self.process.returncode}; see {self.log.name}")
            request = urllib.request.Request(
                f"{self.base_url}/api/v1/search", data=body, headers={"Content-Type": "application/json"}
            )
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    if response.status == 200:
                        return time.monotonic() - started
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(2)
        raise RuntimeError(f"serve did not answer within {timeout_s:.0f} s")

    def stop(self) -> float | None:
        """SIGTERM, wait up to 30 s; seconds until serve exited (None: it had exited before)."""
        if self.process.poll() is not None:
            return None
        started = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        self.log.close()
        return round(time.monotonic() - started, 2)


def _role(process: Any) -> str:
    """What a process of serve's tree is, for the memory report."""
    cmdline = " ".join(process.cmdline())
    if "gunicorn" in cmdline:
        parent = process.parent()
        return (
            "gunicorn worker" if parent is not None and "gunicorn" in " ".join(parent.cmdline()) else "gunicorn master"
        )
    if "celery" in cmdline and " beat" in cmdline:
        return "celery beat"
    if "celery" in cmdline:
        parent = process.parent()
        pool = parent is not None and "celery" in " ".join(parent.cmdline())
        return "celery pool process" if pool else "celery worker"
    if "manage.py serve" in cmdline:
        return "serve"
    return process.name()


def postgres_pids(pgdata: Path) -> list[int]:
    """The postmaster (first line of ``postmaster.pid``) and its children."""
    import psutil

    try:
        postmaster = psutil.Process(int((pgdata / "postmaster.pid").read_text().split()[0]))
        return [postmaster.pid, *(p.pid for p in postmaster.children())]
    except (OSError, ValueError, IndexError, psutil.Error):
        return []


def cpu_seconds(serve_pid: int, pgdata: Path) -> dict[str, float]:
    """CPU seconds (user + system) used so far by each process of serve's tree (``"role pid"``)
    and by PostgreSQL (``"postgres"``: the postmaster, its live processes, and the processes it
    has reaped, whose time the kernel adds to the postmaster's ``children_*`` times)."""
    import psutil

    used: dict[str, float] = {}
    try:
        serve = psutil.Process(serve_pid)
        tree = [serve, *serve.children(recursive=True)]
    except psutil.Error:
        tree = []
    for process in tree:
        try:
            times = process.cpu_times()
            used[f"{_role(process)} {process.pid}"] = times.user + times.system
        except psutil.Error:
            continue
    used["postgres"] = 0.0
    pids = postgres_pids(pgdata)
    for pid in pids:
        try:
            times = psutil.Process(pid).cpu_times()
            used["postgres"] += times.user + times.system
            if pid == pids[0]:  # the postmaster: its exited backends and parallel workers
                used["postgres"] += times.children_user + times.children_system
        except psutil.Error:
            continue
    return used


def cpu_used(before: dict[str, float], after: dict[str, float], requests: int) -> dict[str, Any]:
    """CPU seconds per process between two :func:`cpu_seconds` samples (processes present in
    both), and the web workers' CPU per request (ms): how the gunicorn workers shared the load."""
    used = {key: round(after[key] - before[key], 1) for key in after if key in before}
    workers = {key: value for key, value in used.items() if key.startswith("gunicorn worker")}
    return {
        "seconds": used,
        "web_workers_s": sorted(workers.values(), reverse=True),
        "web_ms_per_request": round(1000 * sum(workers.values()) / requests, 1) if requests else None,
    }


class MemorySampler(threading.Thread):
    """RSS (MB) of serve and every process below it, and the summed unique set size of
    PostgreSQL's processes, every ``interval_s`` seconds."""

    def __init__(self, serve_pid: int, pgdata: Path, interval_s: float = RSS_SAMPLE_S) -> None:
        super().__init__(daemon=True)
        self.serve_pid, self.pgdata, self.interval_s = serve_pid, pgdata, interval_s
        self.samples: list[dict[str, Any]] = []  # {"t": s since start, "rss_mb": {"role pid": MB}}
        self.finished = threading.Event()

    def sample(self, t: float) -> None:
        import psutil

        rss: dict[str, float] = {}
        try:
            serve = psutil.Process(self.serve_pid)
            tree = [serve, *serve.children(recursive=True)]
        except psutil.Error:
            tree = []
        for process in tree:
            try:
                rss[f"{_role(process)} {process.pid}"] = process.memory_info().rss / 2**20
            except psutil.Error:
                continue
        # PostgreSQL's backends share its buffers: the sum of their RSS counts them once per
        # backend and moves as backends touch pages; the unique set size (memory no other process
        # shares) of each, summed, is what PostgreSQL itself holds beyond shared_buffers.
        postgres_total = 0.0
        for pid in postgres_pids(self.pgdata):
            try:
                postgres_total += psutil.Process(pid).memory_full_info().uss / 2**20
            except psutil.Error:
                continue
        rss[POSTGRES_USS] = postgres_total
        self.samples.append({"t": round(t, 1), "rss_mb": {k: round(v, 1) for k, v in rss.items()}})

    def run(self) -> None:
        started = time.monotonic()
        while True:
            self.sample(time.monotonic() - started)
            if self.finished.wait(self.interval_s):
                self.sample(time.monotonic() - started)
                return


def slope_mb_per_min(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of ``(seconds, MB)`` points, MB per minute (0 for fewer than 2)."""
    if len(points) < 2:
        return 0.0
    n = len(points)
    mean_t = sum(t for t, _ in points) / n
    mean_v = sum(v for _, v in points) / n
    var = sum((t - mean_t) ** 2 for t, _ in points)
    if var == 0:
        return 0.0
    return sum((t - mean_t) * (v - mean_v) for t, v in points) / var * 60


def memory_summary(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """Per process (and in all): start, end, max RSS (MB), slope over the whole and the second half."""
    keys = sorted({k for s in samples for k in s["rss_mb"]})
    series = {k: [(s["t"], s["rss_mb"][k]) for s in samples if k in s["rss_mb"]] for k in keys}
    series["all (serve's tree RSS + postgres USS)"] = [(s["t"], sum(s["rss_mb"].values())) for s in samples]
    half = samples[-1]["t"] / 2 if samples else 0
    return {
        key: {
            "start": round(points[0][1], 1),
            "end": round(points[-1][1], 1),
            "max": round(max(v for _, v in points), 1),
            "slope_mb_per_min": round(slope_mb_per_min(points), 2),
            "slope_second_half_mb_per_min": round(slope_mb_per_min([p for p in points if p[0] >= half]), 2),
            "samples": len(points),
        }
        for key, points in series.items()
        if points
    }


def cache_flag_set(enabled: bool | None) -> None:
    """The live ``semantic_cache_enabled`` flag (None: back to the default); every request reads
    the flag rows, so serve's workers follow at once."""
    from zolsearch.search.services import pipeline_flag_set

    pipeline_flag_set(
        name="semantic_cache_enabled",
        value=enabled,
        changed_by="benchmarks.load",
        reason="load benchmark: semantic cache "
        + ("back to the default" if enabled is None else "on" if enabled else "off"),
    )


@dataclass
class Phase:
    name: str
    users: int
    run_time_s: int
    max_requests: int
    total_rps: float = 0.0  # 0: closed loop
    arrivals: str = "poisson"  # paced phases: "poisson" or "cadence" (benchmarks/locustfile.py)
    cache: bool = False
    questions_file: Path | None = None


def locust_run(
    bench: Bench, serve: Serve, phase: Phase, *, questions_file: Path, offset: int
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Run one locust phase (headless, bounded in time and count): its per-request records and
    locust's own count of requests and failures (a cross-check)."""
    records = bench.runs / f"{phase.name}.jsonl"
    records.unlink(missing_ok=True)
    env = {
        **bench.env(),
        "LOAD_QUESTIONS": str(phase.questions_file or questions_file),
        "LOAD_RECORDS": str(records),
        "LOAD_OFFSET": str(offset),
        "LOAD_MAX_REQUESTS": str(phase.max_requests),
        "LOAD_TOTAL_RPS": str(phase.total_rps),
        "LOAD_USERS": str(phase.users),
        "LOAD_ARRIVALS": phase.arrivals,
    }
    command = [
        sys.executable,
        "-m",
        "locust",
        *("-f", str(LOCUSTFILE), "--headless", "--only-summary", "--loglevel", "WARNING"),
        *("-u", str(phase.users), "-r", str(phase.users), "-t", f"{phase.run_time_s}s"),
        *("--host", serve.base_url, "--stop-timeout", "10", "--exit-code-on-error", "0"),
        *("--json-file", str(bench.runs / f"{phase.name}.locust")),
    ]
    with (bench.runs / f"{phase.name}.locust.log").open("wb") as log:
        subprocess.run(
            command, cwd=BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT, timeout=phase.run_time_s + 120
        )
    counted = {"requests": 0, "failures": 0}
    summary = bench.runs / f"{phase.name}.locust.json"
    if summary.exists():
        for row in json.loads(summary.read_text() or "[]"):
            counted["requests"] += int(row.get("num_requests", 0))
            counted["failures"] += int(row.get("num_failures", 0))
    if not records.exists():
        return [], counted
    return [json.loads(line) for line in records.read_text().splitlines() if line.strip()], counted


def phase_summary(phase: Phase, records: list[dict[str, Any]], *, sent_before: set[int]) -> dict[str, Any]:
    """Latency, throughput, errors, outcomes and per-stage times of one phase."""
    ok = [r for r in records if r.get("error") is None]
    errors = [r for r in records if r.get("error") is not None]
    latencies = [r["ms"] for r in records if "ms" in r]
    ends = [r["t"] + r.get("ms", 0) / 1000 for r in records]
    window = max(ends) - min(r["t"] for r in records) if records else 0.0
    stages: dict[str, list[float]] = defaultdict(list)
    for r in ok:
        for stage, ms in (r.get("timings_ms") or {}).items():
            stages[stage].append(float(ms))
    return {
        "users": phase.users,
        "mode": (
            f"paced to {phase.total_rps:g} requests/s in all, {phase.arrivals} arrivals"
            if phase.total_rps
            else "closed loop"
        ),
        "semantic_cache": "on" if phase.cache else "off",
        "requests": len(records),
        "errors": len(errors),
        "error_kinds": dict(Counter(str(r["error"])[:60] for r in errors)),
        "requests_per_s": round(len(records) / window, 1) if window > 0 else 0.0,
        "latency_ms": _summary(latencies) if latencies else {},
        "outcomes": dict(Counter(r.get("outcome") for r in ok)),
        "cache_hits": sum(1 for r in ok if r.get("cache_hit")),
        "repeated_texts": sum(1 for r in records if r["qi"] in sent_before),
        "arrivals": arrival_pattern(records),
        "stage_ms": {
            stage: {"p50": round(percentile(v, 50), 2), "p95": round(percentile(v, 95), 2), "n": len(v)}
            for stage, v in sorted(stages.items())
        },
        **machine_load(),
    }


def print_phase(name: str, row: dict[str, Any]) -> None:
    lat = row.get("latency_ms") or {}
    lexical = row["stage_ms"].get("lexical", {})
    print(
        f"{name:24s} n {row['requests']:5d}  err {row['errors']:3d}  {row['requests_per_s']:5.1f}/s  "
        f"p50 {lat.get('p50', float('nan')):7.1f}  p95 {lat.get('p95', float('nan')):7.1f}  "
        f"p99 {lat.get('p99', float('nan')):7.1f} ms  BM25 p95 {lexical.get('p95', float('nan')):6.1f} ms  "
        f"web workers' CPU s {_cpu(row.get('cpu'))}  load {row['load_1m']}",
        flush=True,
    )


# --- report ---------------------------------------------------------------------------------


def _ms(row: dict[str, Any] | None, key: str) -> str:
    value = (row or {}).get(key)
    return "—" if value is None or value != value else f"{value:.1f}"


def _arrivals(arrivals: dict[str, Any] | None) -> str:
    if not arrivals:
        return "—"
    return f"{arrivals['gap_cv']}, {arrivals['in_flight_at_start_mean']}"


def _cpu(cpu: dict[str, Any] | None) -> str:
    if not cpu:
        return "—"
    return " / ".join(f"{s:.1f}" for s in cpu["web_workers_s"]) + f" ({cpu['web_ms_per_request']})"


def markdown_report(results: dict[str, Any]) -> str:
    """The tables of docs/BENCHMARKS.md from a results JSON (``--report PATH`` prints them)."""
    lines = [
        "| ingestion run | s | segments | mutable rows | chunks | BM25 p50 / p95 ms, one process "
        "| parallel allowed | Gather planned (one / parallel) | load 1 min |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in results.get("ingestion", []):
        m = row["bm25_ms"]
        lines.append(
            f"| {row['run']} | {row['seconds']} | {m['segments']} | {m.get('mutable_rows', '—')} | {m['chunks']} "
            f"| {_ms(m['single'], 'p50')} / {_ms(m['single'], 'p95')} "
            f"| {_ms(m['parallel'], 'p50')} / {_ms(m['parallel'], 'p95')} "
            f"| {m['single']['explain'].get('gather')} / {m['parallel']['explain'].get('gather')} | {m['load_1m']} |"
        )
    floor = results.get("floor") or {}
    serial = floor.get("serial_ms", {})
    threads = floor.get("threads_8", {})
    lines += ["", "| floor (no Django), per question | p50 ms | p95 ms |", "| --- | --- | --- |"]
    for part in ("embedding", "dense", "bm25", "other_sql", "total"):
        if part in serial:
            lines.append(f"| {part} | {_ms(serial[part], 'p50')} | {_ms(serial[part], 'p95')} |")
    if threads:
        lines.append(
            f"| total, 8 threads ({threads['requests_per_s']} requests/s) "
            f"| {_ms(threads['latency_ms'], 'p50')} | {_ms(threads['latency_ms'], 'p95')} |"
        )
    phases = dict(results.get("phases") or {})
    if results.get("soak"):
        phases["soak"] = results["soak"]
    if phases:
        lines += [
            "",
            "| phase | cache | requests | errors | requests/s | p50 ms | p95 ms | p99 ms | BM25 stage p95 ms "
            "| dense p95 | gate p95 | filco p95 | pipeline total p95 | web workers' CPU s (ms per request) "
            "| load 1 min | starts: gap CV, in flight at start (mean) |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for name, row in phases.items():
            st, lat = row.get("stage_ms", {}), row.get("latency_ms", {})
            lines.append(
                f"| {name} ({row['mode']}, {row['users']} users) | {row['semantic_cache']} | {row['requests']} "
                f"| {row['errors']} | {row['requests_per_s']} | {_ms(lat, 'p50')} | {_ms(lat, 'p95')} "
                f"| {_ms(lat, 'p99')} | {_ms(st.get('lexical'), 'p95')} | {_ms(st.get('dense'), 'p95')} "
                f"| {_ms(st.get('gate'), 'p95')} | {_ms(st.get('filco'), 'p95')} | {_ms(st.get('total'), 'p95')} "
                f"| {_cpu(row.get('cpu'))} | {row['load_1m']} | {_arrivals(row.get('arrivals'))} |"
            )
    memory = (results.get("soak") or {}).get("memory_mb")
    if memory:
        lines += [
            "",
            "| soak RSS (MB) | start | end | max | slope MB/min | second half MB/min |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for key, row in memory.items():
            lines.append(
                f"| {key} | {row['start']} | {row['end']} | {row['max']} | {row['slope_mb_per_min']} "
                f"| {row['slope_second_half_mb_per_min']} |"
            )
    return "\n".join(lines)


# --- main -----------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpus",
        choices=("default", "full"),
        default="default",
        help="default: MedQuAD slice + RIVM + hospital-nl; full: + the whole MedQuAD (~25 min).",
    )
    parser.add_argument("--fresh", action="store_true", help="Delete the benchmark's folder first.")
    parser.add_argument("--users", default="1,4,8", help="Closed-loop phases: users per phase.")
    parser.add_argument("--run-time", type=int, default=40, help="Seconds per phase (bound in time).")
    parser.add_argument("--max-requests", type=int, default=2000, help="Requests per phase (bound in count).")
    parser.add_argument("--paced-rps", type=float, default=30.0, help="8 users paced to this rate (0: skip).")
    parser.add_argument(
        "--paced-arrivals",
        default="poisson,cadence",
        help="Paced phases, one per arrival model: poisson (exponential gaps: independent clients) "
        "and/or cadence (locust's constant_throughput; bursts) (benchmarks/locustfile.py).",
    )
    parser.add_argument(
        "--cache-distinct", type=int, default=200, help="Distinct questions of the cache-on phase (0: skip the phase)."
    )
    parser.add_argument("--soak", type=int, default=0, help="Soak seconds (0: none; make bench: 300).")
    parser.add_argument("--bm25-questions", type=int, default=200)
    parser.add_argument("--floor-questions", type=int, default=200)
    parser.add_argument("--skip-http", action="store_true", help="Only the corpus, BM25 and the floor.")
    parser.add_argument(
        "--bm25-mutable-segment-rows",
        type=int,
        default=None,
        help="Experiment: ALTER INDEX chunk_bm25_idx SET (mutable_segment_rows = N) before the ingestion runs "
        "(default: the index as the migrations made it, 0 since migration ingestion 0008).",
    )
    parser.add_argument("--report", type=Path, help="Only print the tables of a results JSON.")
    args = parser.parse_args()
    args.paced_arrivals = [a.strip() for a in args.paced_arrivals.split(",") if a.strip()]
    unknown = set(args.paced_arrivals) - {"poisson", "cadence"}
    if unknown:
        parser.error(f"--paced-arrivals: unknown arrival models {sorted(unknown)} (poisson, cadence)")
    if args.report:
        print(markdown_report(json.loads(args.report.read_text())))
        return

    # An experiment gets a folder and a results file of its own.
    name = f"load-{args.corpus}" + (
        "" if args.bm25_mutable_segment_rows is None else f"-mutable-segment-rows-{args.bm25_mutable_segment_rows}"
    )
    bench = Bench(BASE_DIR / ".data" / f"bench-{name}")
    if args.fresh and bench.folder.exists():
        shutil.rmtree(bench.folder)
    bench.runs.mkdir(parents=True, exist_ok=True)
    started_load = machine_load()
    print(f"load average at start: {started_load}", flush=True)
    django_setup(bench)
    from django.conf import settings

    questions = questions_load()
    limit = settings.SEARCH_CANDIDATES
    results: dict[str, Any] = {
        "corpus": args.corpus,
        "folder": str(bench.folder.relative_to(BASE_DIR)),
        "questions": {
            "distinct": len(questions),
            "sets": dict(Counter(q["set"] for q in questions)),
            "languages": dict(Counter(q["language"] for q in questions)),
        },
        "load_at_start": started_load,
        "web": {"workers": settings.WEB_WORKERS, "threads": settings.WEB_THREADS},
        "ingestion": [],
        "bm25_mutable_segment_rows": args.bm25_mutable_segment_rows,
    }
    if args.bm25_mutable_segment_rows is not None:
        bm25_mutable_segment_rows_set(args.bm25_mutable_segment_rows)

    print("== ingestion runs, BM25 after each", flush=True)
    bm25_set = questions[: args.bm25_questions]
    for label, command in ingestion_steps(args.corpus):
        seconds = ingestion_run(bench, command)
        m = bm25_measure(bm25_set, limit=limit)
        results["ingestion"].append({"run": label, "seconds": round(seconds, 1), "bm25_ms": m})
        print(
            f"{label:28s} {seconds:6.1f} s  segments {m['segments']:3d} (mutable rows {m['mutable_rows']:4d})  "
            f"chunks {m['chunks']:6d}  "
            f"BM25 p50/p95 one process {m['single']['p50']:.1f}/{m['single']['p95']:.1f} ms, "
            f"parallel {m['parallel']['p50']:.1f}/{m['parallel']['p95']:.1f} ms "
            f"(Gather: {m['single']['explain'].get('gather')}/{m['parallel']['explain'].get('gather')})  "
            f"load {m['load_1m']}",
            flush=True,
        )

    print("== floor (same embedding and SQL, no Django)", flush=True)
    results["floor"] = floor_measure(questions[: args.floor_questions], threads=8)
    serial = results["floor"]["serial_ms"]
    print(
        "floor serial p50/p95 ms: "
        + ", ".join(f"{k} {v['p50']:.1f}/{v['p95']:.1f}" for k, v in serial.items())
        + f"; 8 threads: {results['floor']['threads_8']['requests_per_s']} requests/s",
        flush=True,
    )

    if not args.skip_http:
        results.update(http_measure(bench, args, questions))

    results["load_at_end"] = machine_load()
    path = results_write(name, results)
    print(f"wrote {path}\n", flush=True)
    print(markdown_report(json.loads(path.read_text())), flush=True)


def http_measure(bench: Bench, args: argparse.Namespace, questions: list[dict[str, str]]) -> dict[str, Any]:
    """Phases 4 and 5 (module docstring) against a ``serve`` of its own; always stops it and
    puts the cache flag back to its default."""
    from django.db import connection

    questions_file = bench.runs / "questions.json"
    questions_file.write_text(json.dumps(questions, ensure_ascii=False))
    popular_file = bench.runs / "questions-popular.json"
    popular_file.write_text(json.dumps(questions[: max(1, args.cache_distinct)], ensure_ascii=False))
    users = [int(u) for u in args.users.split(",") if u.strip()]
    phases = [Phase(f"closed-{u}u", u, args.run_time, args.max_requests) for u in users]
    if args.paced_rps > 0:
        for arrivals in args.paced_arrivals:  # parsed and checked in main()
            # "paced-…" keeps its name (cadence arrivals) so that earlier results files compare.
            name = f"{'paced' if arrivals == 'cadence' else arrivals}-8u-{args.paced_rps:g}rps"
            phases.append(Phase(name, 8, args.run_time, args.max_requests, args.paced_rps, arrivals=arrivals))
    if args.cache_distinct > 0:
        phases.append(
            Phase("closed-8u-cache-on", 8, args.run_time, args.max_requests, cache=True, questions_file=popular_file)
        )
    out: dict[str, Any] = {"phases": {}}
    connection.close()  # serve's processes open their own; this one reconnects for the flag rows
    serve = Serve(bench, free_port())
    try:
        out["serve_ready_s"] = round(serve.wait(), 1)
        print(f"== serve answers on {serve.base_url} after {out['serve_ready_s']} s; warming up", flush=True)
        cache_flag_set(False)
        warm = Phase("warm-up", 8, 15, 400)
        locust_run(bench, serve, warm, questions_file=questions_file, offset=len(questions) - 400)
        offset = 0
        sent: set[int] = set()
        for phase in phases:
            cache_flag_set(phase.cache)
            cpu_before = cpu_seconds(serve.process.pid, bench.pgdata)
            records, counted = locust_run(
                bench, serve, phase, questions_file=questions_file, offset=0 if phase.cache else offset
            )
            row = phase_summary(phase, records, sent_before=set() if phase.cache else sent)
            row["cpu"] = cpu_used(cpu_before, cpu_seconds(serve.process.pid, bench.pgdata), len(records))
            row["locust_counted"] = counted
            out["phases"][phase.name] = row
            print_phase(phase.name, row)
            if not phase.cache:
                offset += len(records)
                sent.update(r["qi"] for r in records)
        if args.soak > 0:
            cache_flag_set(False)
            soak = Phase("soak", 8, args.soak, args.soak * 100)
            sampler = MemorySampler(serve.process.pid, bench.pgdata)
            cpu_before = cpu_seconds(serve.process.pid, bench.pgdata)
            sampler.start()
            records, counted = locust_run(bench, serve, soak, questions_file=questions_file, offset=offset)
            sampler.finished.set()
            sampler.join()
            row = phase_summary(soak, records, sent_before=sent)
            row["cpu"] = cpu_used(cpu_before, cpu_seconds(serve.process.pid, bench.pgdata), len(records))
            row["locust_counted"] = counted
            row["memory_mb"] = memory_summary(sampler.samples)
            row["memory_samples"] = sampler.samples
            out["soak"] = row
            print_phase("soak", row)
            total = row["memory_mb"]["all (serve's tree RSS + postgres USS)"]
            print(
                f"soak memory, all processes: start {total['start']} MB, end {total['end']} MB, max {total['max']} MB, "
                f"slope {total['slope_mb_per_min']} MB/min (second half {total['slope_second_half_mb_per_min']})",
                flush=True,
            )
    finally:
        try:
            cache_flag_set(None)
        finally:
            out["serve_stop_s"] = serve.stop()
    return out


if __name__ == "__main__":
    main()
