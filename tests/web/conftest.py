"""Browser fixtures: pytest-playwright on Debian's Chromium (``make browsers`` installs it; no
browser is ever downloaded), against pytest-django's live server on the real pipeline.

pytest-playwright's ``playwright`` and ``browser`` fixtures are session-scoped; here they are
module-scoped, because Playwright's sync API keeps an asyncio loop running in the test thread
while it is started, and Django refuses database access from a thread with a running loop
(``SynchronousOnlyOperation``). Stopping Playwright with the module keeps every later test's
database access allowed; inside the module the check is switched off (``DJANGO_ALLOW_ASYNC_UNSAFE``),
since no Django code runs in that loop.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from playwright.sync_api import Browser, BrowserType, Page, Playwright, Route, ViewportSize, expect, sync_playwright

from tests.conftest import CORPUS_SUBSETS, SLICE
from zolsearch.search.pipeline import SearchRequest
from zolsearch.search.services import search_answer

CHROMIUM = Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))
# Headless Debian Chromium as root in a container, and none of its own connections to Google's
# services (refused on a closed network, and never wanted from a test).
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# An answer runs the whole pipeline on a shared two-core machine: assertions wait up to two
# minutes for it. A bound for waiting, not a timing under test.
expect.set_options(timeout=120_000)
WARM_UP_QUESTION = "What is Aicardi syndrome?"
DESKTOP = ViewportSize(width=1280, height=900)
MOBILE = ViewportSize(width=390, height=844)
# Screenshots go to a temporary folder; SCREENSHOTS_DIR=docs/screenshots writes the committed ones.
SCREENSHOTS_DIR = os.environ.get("SCREENSHOTS_DIR", "")


@pytest.fixture(scope="module")
def _async_unsafe_allowed() -> Iterator[None]:
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    yield
    if previous is None:
        del os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"]
    else:
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture(scope="module")
def playwright(_async_unsafe_allowed: None) -> Iterator[Playwright]:
    with sync_playwright() as started:
        yield started


@pytest.fixture(scope="module")
def browser_type(playwright: Playwright) -> BrowserType:
    return playwright.chromium


@pytest.fixture(scope="module")
def browser_type_launch_args() -> dict[str, Any]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make browsers` (Debian's chromium package)")
    return {"executable_path": str(CHROMIUM), "args": CHROMIUM_ARGS, "headless": True}


@pytest.fixture(scope="module")
def launch_browser(browser_type_launch_args: dict[str, Any], browser_type: BrowserType) -> Callable[..., Browser]:
    def launch(**kwargs: Any) -> Browser:
        return browser_type.launch(**{**browser_type_launch_args, **kwargs})

    return launch


@pytest.fixture(scope="module")
def browser(launch_browser: Callable[..., Browser]) -> Iterator[Browser]:
    started = launch_browser()
    yield started
    started.close()


@pytest.fixture(scope="module")
def browser_context_args() -> dict[str, Any]:
    return {"viewport": DESKTOP, "locale": "nl-BE"}


@pytest.fixture
def site(live_server: Any, settings: Any) -> str:
    """The live server's address, with the session corpus (GARD, NINDS, CDC) in its database.

    Live-server tests are transactional and the database is flushed after each, so the corpus is
    ingested again (unchanged files: only rows, a few seconds). The gate has the seed's fixed
    threshold and the ranking is the fused order (the page is under test, not the calibration or
    the reranker model) and nothing is queued for judging.
    One question through the service first loads the models the pipeline trains or reads on
    first use (in this process, which the live server shares), outside the browser's waits.
    """
    settings.GATE_THRESHOLDS = {"use-multilingual-v3": 0.72}
    settings.RERANKER = ""
    settings.GATE_CALIBRATION_PATH = Path("/nonexistent/gate.json")
    settings.JUDGE_ON_ANSWER = False
    call_command("ingest", "medquad", str(SLICE), "--subsets", *CORPUS_SUBSETS, verbosity=0)
    search_answer(request=SearchRequest(question=WARM_UP_QUESTION))
    return str(live_server.url)


@pytest.fixture
def outside(page: Page) -> list[str]:
    """Requests that leave the live server: a citation link is answered with a stub page (the
    network is closed; the link's address is what is tested), anything else is aborted. Returns
    the list of requested outside addresses."""
    requested: list[str] = []

    def handle(route: Route) -> None:
        requested.append(route.request.url)
        if route.request.is_navigation_request():
            route.fulfill(status=200, content_type="text/html", body="<title>source</title><h1>source page</h1>")
        else:
            route.abort()

    page.context.route(re.compile(r"^(?!https?://(localhost|127\.0\.0\.1)[:/]).*"), handle)
    return requested


def screenshot(page: Page, name: str, tmp_path: Path) -> list[Path]:
    """Full-page screenshots of ``page`` at desktop and mobile width as ``patient-<name>-*.png``."""
    folder = Path(SCREENSHOTS_DIR) if SCREENSHOTS_DIR else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for label, size in (("desktop", DESKTOP), ("mobile", MOBILE)):
        page.set_viewport_size(size)
        path = folder / f"patient-{name}-{label}.png"
        page.screenshot(path=str(path), full_page=True)
        paths.append(path)
    page.set_viewport_size(DESKTOP)
    return paths
