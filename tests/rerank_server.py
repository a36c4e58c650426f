"""A real local HTTP server speaking the rerank API protocols, for tests.

No cross-encoder can be installed here, so the HTTP reranker is tested against this server over
real sockets: ``POST /rerank`` in the Cohere/Jina shape (``{model, query, documents, top_n}`` →
``{"results": [{"index", "relevance_score"}]}``, best first) or the TEI shape (``{query, texts}``
→ ``[{"index", "score"}]``). Its score is the share of the query's words found in the document,
so the order depends on the input as with a real model. ``fault`` = ``"http500"`` or
``"wrong_shape"`` makes every reply fail that way; ``stop()`` closes the socket.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_WORD = re.compile(r"\w+")


def overlap(query: str, text: str) -> float:
    """Share of the query's distinct words that occur in ``text`` (case-folded), in [0, 1]."""
    q = set(_WORD.findall(query.lower()))
    return len(q & set(_WORD.findall(text.lower()))) / len(q) if q else 0.0


class RerankServer:
    """``/rerank`` on 127.0.0.1 at a random port; ``requests``: every body received."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.fault: str | None = None
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.rerank = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> RerankServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - BaseHTTPRequestHandler's name
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        server: RerankServer = self.server.rerank  # type: ignore[attr-defined]
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        server.requests.append(body)
        if self.path != "/rerank" or server.fault == "http500":
            self._send(500 if self.path == "/rerank" else 404, {"error": "fault"})
            return
        texts = body.get("documents") or body.get("texts") or []
        scored = sorted(((overlap(body["query"], t), n) for n, t in enumerate(texts)), key=lambda p: (-p[0], p[1]))
        if server.fault == "wrong_shape":
            self._send(200, {"unexpected": True})
        elif "documents" in body:
            top = scored[: int(body.get("top_n") or len(texts))]
            self._send(
                200, {"model": body.get("model"), "results": [{"index": n, "relevance_score": s} for s, n in top]}
            )
        else:
            self._send(200, [{"index": n, "score": s} for s, n in scored])

    def _send(self, status: int, payload: object) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
