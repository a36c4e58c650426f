"""The pipeline's stages, one module each; :mod:`zolsearch.search.pipeline` orders them."""
