"""The bottom layer every app shares: text (normalisation, stemming, sentence splitting),
language detection, model providers (embeddings, LLM) and Prometheus metrics.

Nothing here imports an app (ingestion, taxonomy, the search pipeline, evaluation) or the
project wiring (``zolsearch``); ``make lint`` checks it with an import-linter layers contract.
"""
