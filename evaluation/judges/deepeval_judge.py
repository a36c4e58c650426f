"""DeepEval judge: ``FaithfulnessMetric`` and ``AnswerRelevancyMetric`` (DeepEval 4.3.1) scored by
a pinned chat model on any OpenAI-compatible endpoint (``JUDGE_MODEL`` at ``JUDGE_BASE_URL``).

Sources: https://deepeval.com/docs/metrics-faithfulness,
https://deepeval.com/docs/metrics-answer-relevancy and
https://deepeval.com/guides/guides-using-custom-llms (a ``DeepEvalBaseLLM`` whose ``generate``
returns an instance of the pydantic schema the metric passes in).

DeepEval is imported below only after its environment is fixed: no telemetry, no Confident AI
tracing, no update check against PyPI, no ``.env`` / legacy ``.deepeval`` key file read from the
working directory, and its cache folder (``.deepeval`` in the working directory by default, a
module constant read at import) and home folder outside the project.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import threading
from typing import Any, cast

os.environ.update(
    {
        "DEEPEVAL_TELEMETRY_OPT_OUT": "YES",
        "CONFIDENT_TRACING_ENABLED": "NO",
        "DEEPEVAL_UPDATE_WARNING_OPT_IN": "0",
        "DEEPEVAL_DISABLE_DOTENV": "1",
        "DEEPEVAL_DISABLE_LEGACY_KEYFILE": "1",
    }
)
os.environ.setdefault("DEEPEVAL_CACHE_FOLDER", os.path.join(tempfile.gettempdir(), "zolsearch-deepeval"))
os.environ.setdefault("DEEPEVAL_HOME", os.path.join(tempfile.gettempdir(), "zolsearch-deepeval"))

import openai
from deepeval.metrics import AnswerRelevancyMetric, FaithfulnessMetric
from deepeval.metrics.base_metric import YES_NO_BORDERLINE
from deepeval.metrics.utils.qag import normalize_qag_verdict
from deepeval.models import DeepEvalBaseLLM
from deepeval.test_case import LLMTestCase
from django.conf import settings
from pydantic import BaseModel, ValidationError
from tenacity import retry, retry_if_exception, stop_after_attempt, wait_random_exponential

from core.providers.llm import openai_error_transient
from evaluation.judges.base import JudgeInput, JudgeUnavailable, JudgeVerdict, context_truncate

# Unsupported claims count against faithfulness. DeepEval's default lets "borderline" verdicts
# (claims the context neither backs nor contradicts) pass, so an invented phone number or
# opening hour would score 1.0; for a hospital answer an unsupported claim is the failure we
# measure (DeepEval docs: ``penalize_ambiguous_claims``).
PENALIZE_UNSUPPORTED_CLAIMS = True
# DeepEval's pass/fail threshold; it does not change the scores we store, only ``metric.success``.
THRESHOLD = 0.5


class InvalidJudgeOutput(Exception):
    """The judge model answered, but not with JSON matching the schema DeepEval asked for."""


def _retryable(exc: BaseException) -> bool:
    return isinstance(exc, InvalidJudgeOutput) or openai_error_transient(exc)


def _normalize_verdicts(data: Any) -> Any:
    # DeepEval's own loose-JSON path accepts "Yes" or "No, because ..." (normalize_qag_verdict);
    # apply the same coercion before strict validation so a capitalised verdict is not a retry.
    if isinstance(data, dict) and isinstance(data.get("verdicts"), list):
        for item in data["verdicts"]:
            if isinstance(item, dict) and "verdict" in item:
                normalized = normalize_qag_verdict(item["verdict"], YES_NO_BORDERLINE)
                if normalized is not None:
                    item["verdict"] = normalized.value
    return data


def judge_output_parse[S: BaseModel](text: str | None, schema: type[S]) -> S:
    """The first ``{`` to the last ``}`` of ``text`` (models wrap JSON in prose or code fences),
    validated against ``schema``. Raises :class:`InvalidJudgeOutput` when there is no JSON
    object, it does not parse, or it does not match the schema."""
    text = text or ""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise InvalidJudgeOutput(f"no JSON object in the reply: {text[:120]!r}")
    try:
        data = json.loads(text[start : end + 1])
    except json.JSONDecodeError as exc:
        raise InvalidJudgeOutput(f"invalid JSON: {exc}") from exc
    try:
        return schema.model_validate(_normalize_verdicts(data))
    except ValidationError as exc:
        raise InvalidJudgeOutput(f"JSON does not match {schema.__name__}: {exc.error_count()} error(s)") from exc


class OpenAICompatibleJudgeLLM(DeepEvalBaseLLM):
    """DeepEval's model interface over an OpenAI-compatible chat endpoint.

    ``generate(prompt, schema)`` sends the prompt as one user message to the pinned ``model`` at
    temperature 0 (``response_format={"type": "json_object"}`` when a schema is given) and returns
    an instance of ``schema`` (or the reply text when DeepEval passes no schema). Each call makes
    at most ``1 + max_retries`` HTTP requests: invalid JSON, a schema mismatch, timeouts,
    connection errors, 429 and 5xx are retried with exponential backoff and full jitter (≤ 0.5,
    1, 2, 4, 8 s); other API errors (401, 400, 404) are not. Raises :class:`JudgeUnavailable`
    when a call cannot produce a valid reply. ``attempts``: HTTP requests made by this instance
    (thread-safe; ``a_generate`` runs ``generate`` in a worker thread).
    """

    def __init__(self, *, client: openai.OpenAI, model: str, max_retries: int) -> None:
        self._client = client
        # Kept apart from DeepEval's ``self.name``, which passes through its model-name parser.
        self._model = model
        self._max_retries = max_retries
        self._lock = threading.Lock()
        self.attempts = 0
        super().__init__(model)

    def load_model(self, *args: Any, **kwargs: Any) -> openai.OpenAI:  # type: ignore[override]
        return self._client

    def get_model_name(self, *args: Any, **kwargs: Any) -> str:
        return self._model

    # DeepEval declares generate(*args, **kwargs) -> str yet calls it with schema= and expects the
    # schema instance back (its custom-model docs): the override is the documented one.
    def generate(self, prompt: str, schema: type[BaseModel] | None = None) -> BaseModel | str:  # type: ignore[override]
        @retry(
            retry=retry_if_exception(_retryable),
            wait=wait_random_exponential(multiplier=0.5, max=8),
            stop=stop_after_attempt(self._max_retries + 1),
            reraise=True,
        )
        def attempt() -> BaseModel | str:
            with self._lock:
                self.attempts += 1
            extra: dict[str, Any] = {"response_format": {"type": "json_object"}} if schema else {}
            response = self._client.chat.completions.create(
                model=self._model,
                messages=[{"role": "user", "content": prompt}],
                temperature=0,
                **extra,
            )
            text = response.choices[0].message.content if response.choices else None
            if schema is not None:
                return judge_output_parse(text, schema)
            if not text:
                raise InvalidJudgeOutput("empty completion")
            return text

        try:
            return attempt()
        except (openai.OpenAIError, InvalidJudgeOutput) as exc:
            raise JudgeUnavailable(f"judge {self._model}: {type(exc).__name__}: {exc}") from exc

    async def a_generate(self, prompt: str, schema: type[BaseModel] | None = None) -> BaseModel | str:  # type: ignore[override]
        return await asyncio.to_thread(self.generate, prompt, schema)


class DeepEvalJudge:
    """Faithfulness and answer relevancy by DeepEval's metrics, through a pinned judge model.

    ``judge(item)`` builds an ``LLMTestCase`` (input: the question; actual_output: the answer;
    retrieval_context: ``item.context_with_tags()``, authoritative taxonomy lines first, cut to
    ``context_tokens`` estimated tokens) and runs ``FaithfulnessMetric`` then
    ``AnswerRelevancyMetric`` synchronously (``async_mode=False``: no event loop, safe in a
    Celery worker or a Django request). Seven model calls when nothing is retried: truths,
    claims, verdicts, reason; statements, verdicts, reason.

    Verdict: ``faithfulness`` = claims the context supports / claims (unsupported
    "borderline" claims fail, see :data:`PENALIZE_UNSUPPORTED_CLAIMS`; 1.0 when the answer makes
    no claim); ``relevancy`` = relevant or borderline statements / statements; both in [0, 1].
    ``reasons``: DeepEval's reason per metric. ``evidence``: one dict per claim
    (``{"metric": "faithfulness", "claim", "verdict", "reason"}``) and per statement
    (``{"metric": "relevancy", "statement", "verdict", "reason"}``), verdict in
    {"yes", "no", "borderline"}. ``attempts``: HTTP requests made, retries included. An empty
    answer is not sent: both scores ``None``, ``attempts`` 0.

    Constructor: ``timeout_s`` per HTTP request (seconds), ``max_retries`` per model call (≥ 0),
    ``context_tokens`` the context budget (≥ 1, tokens as :func:`core.text.tokens_estimate`
    counts them: words and punctuation marks). Raises ``ValueError`` for an empty model or base
    URL or out-of-range numbers. :meth:`judge` raises :class:`JudgeUnavailable` when a model
    call fails after its retries.
    """

    def __init__(
        self,
        *,
        model: str,
        base_url: str,
        api_key: str = "not-needed",
        timeout_s: float = 60.0,
        max_retries: int = 3,
        context_tokens: int = 3000,
    ) -> None:
        if not model or not base_url:
            raise ValueError("the DeepEval judge needs a model name and a base URL")
        if timeout_s <= 0 or max_retries < 0 or context_tokens < 1:
            raise ValueError("timeout_s must be > 0, max_retries >= 0 and context_tokens >= 1")
        self.model = model
        self.key = f"deepeval:{model}"
        self.max_retries = max_retries
        self.context_tokens = context_tokens
        # The client's own retries are off: tenacity in OpenAICompatibleJudgeLLM owns the policy
        # and counts the attempts. The client is thread-safe and keeps its connection pool.
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=0)

    @classmethod
    def from_settings(cls) -> DeepEvalJudge:
        """The judge configured by ``JUDGE_MODEL``, ``JUDGE_BASE_URL``, ``JUDGE_API_KEY``,
        ``JUDGE_TIMEOUT_S``, ``JUDGE_MAX_RETRIES`` and ``JUDGE_CONTEXT_TOKENS``."""
        return cls(
            model=settings.JUDGE_MODEL,
            base_url=settings.JUDGE_BASE_URL,
            api_key=settings.JUDGE_API_KEY,
            timeout_s=settings.JUDGE_TIMEOUT_S,
            max_retries=settings.JUDGE_MAX_RETRIES,
            context_tokens=settings.JUDGE_CONTEXT_TOKENS,
        )

    def judge(self, item: JudgeInput) -> JudgeVerdict:
        """Score ``item`` (see the class docstring). Raises :class:`JudgeUnavailable`."""
        context, truncated, tokens = context_truncate(item.context_with_tags(), budget_tokens=self.context_tokens)
        if not item.answer.strip():
            return JudgeVerdict(
                faithfulness=None,
                relevancy=None,
                reasons={"error": "empty answer: nothing to judge"},
                truncated=truncated,
                context_tokens=tokens,
                attempts=0,
            )
        # One adapter and fresh metrics per call: metrics keep their results on the instance,
        # and the adapter counts this call's attempts, so a shared judge is safe across threads.
        llm = OpenAICompatibleJudgeLLM(client=self._client, model=self.model, max_retries=self.max_retries)
        options: dict[str, Any] = {
            "model": llm,
            "threshold": THRESHOLD,
            "eval_mode": "llm",  # never route decisions to TypeSafe's hosted model (DEEPEVAL_EVAL_MODE)
            "include_reason": True,
            "async_mode": False,
            "strict_mode": False,  # strict mode clamps scores to 0 or 1
            "verbose_mode": False,
        }
        faithfulness = FaithfulnessMetric(penalize_ambiguous_claims=PENALIZE_UNSUPPORTED_CLAIMS, **options)
        relevancy = AnswerRelevancyMetric(**options)
        case = LLMTestCase(input=item.question, actual_output=item.answer, retrieval_context=list[Any](context))
        faithfulness.measure(case, _show_indicator=False)
        relevancy.measure(case, _show_indicator=False)
        return JudgeVerdict(
            faithfulness=float(cast(float, faithfulness.score)),
            relevancy=float(cast(float, relevancy.score)),
            evidence=_evidence("faithfulness", "claim", faithfulness.claims, faithfulness.verdicts)
            + _evidence("relevancy", "statement", relevancy.statements, relevancy.verdicts),
            reasons={"faithfulness": faithfulness.reason or "", "relevancy": relevancy.reason or ""},
            truncated=truncated,
            context_tokens=tokens,
            attempts=llm.attempts,
        )


def _evidence(metric: str, kind: str, items: list[Any], verdicts: list[Any]) -> list[dict[str, Any]]:
    # DeepEval asks for one verdict per item but does not enforce it; pair by position and keep
    # a verdict without an item rather than dropping what the judge said.
    return [
        {
            "metric": metric,
            kind: str(items[i]) if i < len(items) else None,
            "verdict": str(verdict.verdict),
            "reason": verdict.reason,
        }
        for i, verdict in enumerate(verdicts)
    ]
