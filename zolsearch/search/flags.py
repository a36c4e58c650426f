"""The catalogue of pipeline flags and thresholds evaluators set as rows (issue 11).

Every :class:`~zolsearch.search.config.PipelineConfig` field is either a flag here (grouped, with
a sentence an evaluator can read) or listed in :data:`NOT_FLAGS` with the reason; a test keeps
the two complete, so a new field forces the decision. Rows live in
:class:`~zolsearch.search.models.PipelineFlag`; reads in ``selectors``, writes in ``services``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FlagSpec:
    """One flag: its ``PipelineConfig`` field ``name``, the stage ``group`` it belongs to (admin
    filter), a one-sentence ``description``, and whether its value is on one embedding model's
    scale (``per_model``: rows may name the model)."""

    name: str
    group: str
    description: str
    per_model: bool = False


_SPECS = (
    FlagSpec("red_flags_enabled", "safety", "Route emergency, poisoning, suicide and out-of-hours messages to 112, 070 245 245, 1813/106 or 1733 before any search."),
    FlagSpec("red_flag_model_enabled", "safety", "Second red-flag detector (a classifier over the question's vector) for phrasings the rules miss."),
    FlagSpec("red_flag_model_threshold", "safety", "Probability (0–1) from which the red-flag classifier routes."),
    FlagSpec("input_guard_enabled", "safety", "Refuse requests for individual medical advice, harmful requests and prompt injections."),
    FlagSpec("output_guard_enabled", "safety", "Refuse drafts that address the asker with a dose or a diagnosis."),
    FlagSpec("guard_threshold", "safety", "Probability (0–1) from which the offline guard classifier refuses."),
    FlagSpec("guard_fail_open", "safety", "When the guard service fails: answer (true) or refuse (false)."),
    FlagSpec("understanding_enabled", "understanding", "Classify intent and question type before retrieval."),
    FlagSpec("understanding_intent_min", "understanding", "Minimum classifier probability (0–1) for its intent to be used."),
    FlagSpec("reduced_query_enabled", "understanding", "Search long messages with their reduced query (focus, type and content words)."),
    FlagSpec("qtype_question_sentence", "understanding", "For a message of several sentences, read the question type from its question sentence when the classifier is at least as sure of it there."),
    FlagSpec("qtype_cues", "understanding", 'For a Dutch question, take the question type its question sentence asks by a fixed phrasing ("waardoor krijg je", "hoe wordt … vastgesteld", "wat helpt er tegen").'),
    FlagSpec("intent_question_sentence", "understanding", "For a message of several sentences, read the intent from its question sentence when the classifier is at least as sure of it there."),
    FlagSpec("snomed_expansion_enabled", "understanding", "Also search the name and SNOMED CT names of a taxonomy entity the question names by an alias or synonym."),
    FlagSpec("snomed_expansion_terms", "understanding", "How many SNOMED CT names to add at most."),
    FlagSpec("glossary_enabled", "understanding", "Also search an English or French question about a practical topic (visiting, parking, interpreters, invoices …) with the Dutch words of the hospital's pages."),
    FlagSpec("glossary_min_authority", "understanding", "Share (0–1) of the question's intent on routing intents from which the glossary translates it."),
    FlagSpec("medical_translation_enabled", "understanding", 'Also search a Dutch medical question in English ("galwegkanker" → "bile duct cancer") and link its condition from the English.'),
    FlagSpec("medical_translation_max_authority", "understanding", "Highest share (0–1) of the question's intent on routing intents at which a Dutch question is translated."),
    FlagSpec("medical_translation_qtype_min", "understanding", "Least confidence (0–1) of a Dutch question's MedQuAD question type (symptoms, treatment, …) at which it is translated whatever its routing share; 1 switches this off."),
    FlagSpec("medical_translation_pages_lack", "understanding", 'Also search a Dutch question in English whatever its routing share when it names a condition none of the hospital\'s own pages mention ("Wat is galgangatresie bij baby\'s?"), unless it asks for a department, a doctor or a practical errand.'),
    FlagSpec("medical_translation_pages_about", "understanding", 'For the check above, count only the words of the titles and headings of the hospital\'s pages (what they are about): a condition a page mentions in passing ("take out your dentures") is still searched in English.'),
    FlagSpec("reduced_query_keeps_focus", "understanding", "When a long message is searched by its question sentence, also search the condition or topic the message named in its story."),
    FlagSpec("childhood_focus", "understanding", 'Search a question about a child ("ons zoontje van 9", "my son (6)") on the pages about the condition in children where the general medical pages have them ("Childhood Hodgkin Lymphoma").'),
    FlagSpec("adult_focus", "understanding", 'Search a question about an adult ("my husband, he is 58", "mijn vader") on the cancer pages for adults where the general medical pages have them ("Adult Soft Tissue Sarcoma").'),
    FlagSpec("department_intent_needs_question", "understanding", 'Take a department named only in the story around the question ("vastgesteld op de spoed. Welke behandelingen zijn er?") as no department search, unless the message asks where to go.'),
    FlagSpec("combined_focus_enabled", "understanding", 'Take a topic about two conditions ("High Blood Pressure and Kidney Disease") as the focus when the question names both.'),
    FlagSpec("focus_expansion_enabled", "understanding", 'Also search the name pages use for a condition the question names another way (a synonym, or "leukemie" → Leukemia).'),
    FlagSpec("qtype_expansion_enabled", "understanding", 'Also search a Dutch question about a condition of the general medical pages with the English words those pages title its question type with ("onderzoek naar nierziekte" → "research clinical trials").'),
    FlagSpec("spelling_correction_languages", "understanding", 'Languages whose misspelled medical words are corrected before searching ("aneurism" → "aneurysm", "aambijen" → "aambeien"; comma separated; English and Dutch).'),
    FlagSpec("spelling_page_words", "understanding", 'Also correct a Dutch question\'s misspelled everyday words to the words of the hospital\'s own pages, at one letter ("faktuur" → "factuur", "ombusdienst" → "ombudsdienst"), and search them too.'),
    FlagSpec("qtype_match_needs_topic", "reranking", "Count a page's question type (treatment, symptoms, …) for the reranker only when the page is about what the question names."),
    FlagSpec("foci_title_variants", "reranking", 'Take a general medical page to be about the names its title holds too ("Tuberculosis (TB)" is about tuberculosis) when matching it to what the question names.'),
    FlagSpec("foci_equivalents", "reranking", 'Take a general medical page to be about the name another site gives the same condition too (Cancer.gov\'s "Chronic Myelogenous Leukemia" is GARD\'s "chronic myeloid leukemia") when matching it to what the question names.'),
    FlagSpec("named_hospital_first", "reranking", "When a question names a hospital with a page among the candidates, put that hospital's pages before other hospitals' own pages."),
    FlagSpec("followup_enabled", "understanding", 'Resolve a short follow-up ("en in Maaseik?") against the previous question of the same conversation.'),
    FlagSpec("followup_max_age_s", "understanding", "Oldest previous turn (seconds) a follow-up is resolved against."),
    FlagSpec("dense_enabled", "retrieval", "Dense (vector) retrieval."),
    FlagSpec("lexical_enabled", "retrieval", "Lexical (BM25) retrieval."),
    FlagSpec("dense_candidates", "retrieval", "Hits taken from dense retrieval."),
    FlagSpec("lexical_candidates", "retrieval", "Hits taken from BM25."),
    FlagSpec("rrf_k", "retrieval", "Reciprocal Rank Fusion constant (60 in Cormack et al. 2009)."),
    FlagSpec("top_k", "retrieval", "Candidates kept after fusion or reranking."),
    FlagSpec("hnsw_ef_search", "retrieval", "pgvector hnsw.ef_search (search breadth of the vector index)."),
    FlagSpec("language_boost", "retrieval", "Extra weight for passages in the question's language (0: off)."),
    FlagSpec("lexical_stopword_languages", "retrieval", 'Languages whose function words ("moet", "mijn", "voor") BM25 leaves out of the question (comma separated).'),
    FlagSpec("source_authority_enabled", "source authority", "Weigh sources by the priority editors gave them."),
    FlagSpec("source_authority_weight", "source authority", "Strength of the source priority in fusion."),
    FlagSpec("source_authority_intents", "source authority", "Intents whose questions get the source priority (comma separated)."),
    FlagSpec(
        "reranker",
        "reranking",
        "Reranker: features-lr (offline), cross-encoder (the local model folder), http:<model>, or empty for the fused order.",
    ),
    FlagSpec("rerank_depth", "reranking", "Fused candidates handed to the reranker."),
    FlagSpec("think_harder_candidates", "reranking", "Hits per retriever when thinking harder."),
    FlagSpec("think_harder_top_k", "reranking", "Candidates kept when thinking harder."),
    FlagSpec("rerank_languages", "reranking", "Languages the reranker serves (comma separated; empty: from its calibration)."),
    FlagSpec("keyword_rescue_enabled", "keyword rescue", "Search question terms that no candidate contains on their own."),
    FlagSpec("keyword_rescue_min_chars", "keyword rescue", "Minimum length of a rescued term (characters)."),
    FlagSpec("keyword_rescue_max_chunks", "keyword rescue", "Passages keyword rescue may add."),
    FlagSpec("focus_rescue_max_chunks", "focus rescue", 'Passages of the linked condition that answer the question\'s type ("What is ALS?" on each site) that may join the candidates when no retriever found them; 0 switches this off.'),
    FlagSpec("focus_rescue_min_words", "focus rescue", "Least number of words the question must name its condition by for those passages to be added (a one-word condition is often a word of the story)."),
    FlagSpec("focus_rescue_short_any", "focus rescue", 'Hold that minimum for long messages only (a story around the question): a short question names its condition itself, in one word or more ("aanhoudende hoest onderzoek").'),
    FlagSpec("focus_rescue_below_score", "focus rescue", "Reranker score (0–1) under which no passage looks like an answer: then the linked condition's passages join whatever the length of its name, and all are ranked again (0 switches this off)."),
    FlagSpec("crag_enabled", "CRAG", "Corrective retrieval: retrieve again or refuse when the reranker is not confident."),
    FlagSpec("crag_upper", "CRAG", "Confidence (0–1) from which retrieval is correct (empty: the reranker's calibration)."),
    FlagSpec("crag_lower", "CRAG", "Confidence (0–1) under which retrieval is incorrect (empty: the reranker's calibration)."),
    FlagSpec("crag_bypass_languages", "CRAG", "Languages CRAG skips (comma separated)."),
    FlagSpec("crag_bypass_own_pages", "CRAG", "CRAG skips a question whose best-ranked page is one of the hospital's own."),
    FlagSpec("crag_bypass_min_words", "CRAG", "CRAG skips a message of at least this many words (0: none)."),
    FlagSpec("crag_bypass_graph_facts", "CRAG", "CRAG skips a question the taxonomy graph pinned facts for (a condition, treatment or department it resolves)."),
    FlagSpec("filco_enabled", "FILCO", "Drop answer-passage sentences unrelated to the question."),
    FlagSpec("filco_threshold", "FILCO", "Sentence–question cosine under which a sentence is dropped."),
    FlagSpec("filco_max_removed", "FILCO", "Largest share (0–1) of a passage's sentences FILCO may drop."),
    FlagSpec("filco_min_kept", "FILCO", "Sentences always kept per passage."),
    FlagSpec("filco_min_words", "FILCO", "Questions shorter than this many words skip FILCO."),
    FlagSpec("filco_bypass_languages", "FILCO", "Languages FILCO skips (comma separated)."),
    FlagSpec("semantic_cache_enabled", "semantic cache", "Serve a stored answer to a question that means the same."),
    FlagSpec("semantic_cache_min_cosine", "semantic cache", "Cosine from which two questions count as the same."),
    FlagSpec("generator", "answer", "Answer writer: extractive (offline) or llm (needs LLM_BASE_URL and LLM_MODEL)."),
    FlagSpec("answer_chunks", "answer", "Passages the answer is written from."),
    FlagSpec("answer_max_sentences", "answer", "Longest answer, in sentences."),
    FlagSpec("answer_type_weight", "answer", 'How much it counts, when the answer\'s sentences are chosen, that a sentence states the kind of fact asked for (a duration for "hoelang", a time for "tot hoe laat", a price, a number of people, a phone number); 0 leaves it out.'),
    FlagSpec("answer_same_site", "answer", "When a question names a hospital and that hospital's own page is among the passages the answer is written from, leave other hospitals' pages out of the answer."),
    FlagSpec("answer_same_focus", "answer", "Answer a question about a named condition only from pages about that condition, when one was found."),
    FlagSpec("gate_enabled", "gate", "Check every draft against its context before serving it."),
    FlagSpec("gate_focus_check", "gate", "Refuse a draft about another condition (or another question about it) than the one asked, when a page that answers it was found."),
    FlagSpec("gate_site_check", "gate", "Refuse a draft taken from other hospitals' pages when the question names a hospital whose page was found."),
    FlagSpec("gate_term_check", "gate", "Refuse a draft in the question's language that shares no word with the question but stop words, modal verbs and 'ziekenhuis'."),
    FlagSpec("gate_term_check_across", "gate", "With gate_term_check on: also refuse a draft from pages in another language (a Dutch question, English pages) that shares no word with the question or its translation."),
    FlagSpec("gate_threshold", "gate", "Gate score (cosine) a draft needs; per embedding model.", per_model=True),
    FlagSpec("gate_thresholds_by_language", "gate", 'Gate thresholds per language as JSON, e.g. {"nl": 0.6}; per embedding model.', per_model=True),
    FlagSpec("gate_context_weights_by_language", "gate", 'Weight of the context alignment in the gate score per language, calibrated with its threshold, e.g. {"nl": 0.3}; per embedding model.', per_model=True),
)  # fmt: skip

FLAGS: dict[str, FlagSpec] = {spec.name: spec for spec in _SPECS}

# PipelineConfig fields that are not flags, and why.
NOT_FLAGS: dict[str, str] = {
    "embedding_model": "the operator's EMBEDDING_MODEL setting: the index is built with it",
    "llm_model": "the operator's LLM_MODEL setting, bound to LLM_BASE_URL",
    "understanding_llm_model": "the operator's UNDERSTANDING_LLM_MODEL setting, bound to LLM_BASE_URL",
    "guard_model": "the operator's GUARD_MODEL setting, bound to GUARD_BASE_URL",
    "source_priorities": "editors set each source's priority on the source's own row",
}
