"""Follow-up resolution: is a message a follow-up of the previous question of the same
conversation, and which question does it ask? (Issue 10 item 1: "en in Maaseik?", "and how is
it treated?", "et à Genk ?".) Pure, deterministic and offline: word lists and a few rules.

**Decision** (:func:`followup_decide`), in order; the first rule that applies names the result:

1. ``no_previous``: there is no previous question → not a follow-up.
2. ``too_long``: more than :data:`MAX_WORDS` words (6) → a question of its own. Follow-ups are
   elliptical fragments that lean on the previous turn (the phenomenon the conversational
   queries of TREC CAsT exhibit, Dalton, Xiong & Callan, "CAsT 2019: the Conversational
   Assistance Track overview"); six words is this module's choice, not a published constant: it
   keeps "en hoe wordt het behandeld?" and every labelled follow-up of the set below, and drops
   complete new questions.
3. ``not_a_question``: only greetings or thanks ("bedankt", "merci") → not a follow-up.
4. With a **continuation cue** at the start (:data:`CONJUNCTIONS` "en", "ook", "and", "et", … and
   :data:`FRAMES` "en wat met", "wat dan met", "what about", "how about", …; the listed
   "en in", "en voor", "and in", "et à", "et pour" are a conjunction followed by a preposition):
   ``new_question`` when a bare conjunction is followed by a complete question with a subject of its
   own ("en waar is de spoed?": a question word and a content word, no pronoun pointing back), else
   ``cue`` → a follow-up.
5. Without a cue: ``own_focus`` when the taxonomy resolved a condition, department or doctor in
   the message (the caller passes ``message_focus``); ``points_back`` → a follow-up when a
   pronoun points back to a thing ("doet het pijn?", "kan je eraan sterven?"); ``own_content`` when a content word is left
   (not a stop, question, pronoun, place, question-type, population or frame word): "wat zijn de
   bezoekuren?" is a new question; ``no_focus`` → a follow-up when something points back or adds
   to the previous question (a pronoun, a place, a question-type word such as "erfelijk",
   "behandeld", "symptoms", a population such as "kinderen", a frame such as "campus");
   ``nothing_to_resolve`` otherwise.

**Resolution** (:func:`followup_resolve`, for a follow-up; the message without its cue is the
*remainder*; the previous question's *focus* is its last run of content words, "kraamafdeling"
in "Wat zijn de bezoekuren van de kraamafdeling?"):

- ``place``: the remainder adds only a place (a campus or town of :data:`PLACES`) → it replaces
  the previous question's place, or is appended ("Waar is de dienst cardiologie in Maaseik?").
- ``pronoun``: a pronoun points back ("het", "dat", "die", "ze", "it", "that", "ça", "la" before a
  verb, "eraan") → the pronoun becomes the previous focus ("hoe wordt hartfalen behandeld?"); a
  French object pronoun before its verb is dropped and the focus follows the verb.
- ``new_focus``: the remainder is a noun phrase of its own ("en wat met astma?", "et pour
  l'eczéma ?") → it replaces the previous focus ("Hoe wordt astma behandeld?").
- ``aspect``: a question type or a practical attribute ("en de symptomen?", "en het
  telefoonnummer?") → the remainder + "van/of/de" + the previous focus (and place).
- ``append``: anything else (a population, a frame, a clause) → the previous question + the
  remainder ("Wat is epilepsie bij kinderen?").

Measured on ``data/understanding/followups.jsonl`` (hand-written, nl/en/fr, with negatives) by
``benchmarks/understanding.py``. Known limits: places outside :data:`PLACES` count as content
words; a replaced focus is the last run of content words, so "de ziekte van Crohn" → "de ziekte
van colitis"; the rules do not know whether a content word names a medical thing (the stage
adds the taxonomy's answer as ``message_focus``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.text import text_normalise

MAX_WORDS = 6

# The leading words that continue the previous question (folded: lower case, no accents).
CONJUNCTIONS = ("en ook", "and also", "et aussi", "en dan", "and then", "et puis", "en", "ook", "and", "also", "et")
FRAMES = (
    "wat dan met", "wat met", "hoe zit het met", "hoe zit dat met", "wat dan", "what about", "how about",
    "what of", "qu en est il de", "qu en est il pour", "quid de",
)  # fmt: skip

# Stop and function words of the three languages (articles, prepositions, auxiliaries, pronouns
# that name a person, negation, fillers); question words are listed separately.
_FUNCTION = frozenset(
    """de het een en van in is op te dat die dit deze voor met zijn er aan om ik mijn me je jij u uw we wij
    kan kun kunt kunnen moet moeten mag mogen niet ook als bij naar of dan door hij zij hem haar hun men
    wordt worden werd was waren ben bent heb hebt heeft hebben doe doet doen ga gaat gaan zal zullen zou al
    nog wel geen meer veel erg heel zo toch eens even dus maar want omdat nu hier over uit tot tegen na
    sinds zonder onder tussen per zelf ons onze jullie iets iemand alles elke mee graag eigenlijk
    a an and are as at be by can do does did for from i if in is my of on or the to with you your
    am was were been has have had me we our us he she him her his not no any some more much very so also
    then than into over after before under get should would could may might must there their one
    le la les l un une des du d et au aux dans pour par sur avec sans est sont etre ai avons ont c ce cet
    cette ces je j tu il elle on nous vous me m se s te t mon ma mes ton ta tes son sa ses notre votre
    leur leurs ne n pas plus y aussi tres bien peut peuvent puis faut fait faire chez entre vers""".split()
)
_QUESTION_WORDS = frozenset(
    """wat hoe waarom wanneer welke welk waar wie hoeveel what how why when which where who whom whose
    que quoi comment pourquoi quand quel quelle quels quelles ou combien qui qu""".split()
)
_GREETINGS = frozenset(
    """hallo dag hoi goedendag bedankt dank danku merci thanks thank hello hi hey bonjour salut ok oke okay
    super top beaucoup you wel je u well goed great prima parfait""".split()
)
# Question-type words (MedQuAD's 16 question types, Ben Abacha & Demner-Fushman 2019, in the
# region's languages), and verbs of a question about a thing ("hoe lang duurt", "kost het").
_ASPECTS = frozenset(
    """behandeld behandelen behandel behandeling behandelingen behandelt therapie genezen geneest
    geneesbaar symptomen symptoom klachten tekenen verschijnselen oorzaak oorzaken veroorzaakt ontstaat
    ontstaan erfelijk erfelijkheid vaak vastgesteld vaststellen diagnose onderzoek onderzoeken prognose
    vooruitzichten levensverwachting dodelijk gevaarlijk ernstig voorkomen preventie vermijden
    complicaties gevolgen bijwerkingen risico risicos besmettelijk duurt lang herken herkennen
    waarom normaal
    treated treat treatment treatments therapy cure cured curable symptoms symptom signs causes cause
    caused hereditary inherited genetic common diagnosed diagnosis diagnose tests test outlook
    prognosis deadly dangerous serious prevent prevented prevention complications risks risk side
    effects contagious last lasts long recognise recognize why normal
    traite traiter traitement traitements soigner soigne guerir symptomes symptome signes causes
    cause hereditaire genetique frequent diagnostique diagnostic pronostic grave dangereux prevenir
    prevention eviter complications risques effets secondaires contagieux dure duree reconnaitre
    pourquoi normal""".split()
)
# Practical attributes of a department, campus or procedure: a question of their own without a
# cue ("wat zijn de bezoekuren?"), an aspect of the previous focus with one ("en de bezoekuren?").
_ATTRIBUTES = frozenset(
    """bezoekuren bezoekuur openingsuren openingstijden telefoonnummer nummer telefoon parking parkeren
    adres route wachttijd wachttijden afspraak prijs kost kosten kostprijs terugbetaald terugbetaling
    visiting hours opening phone number telephone park address appointment waiting price cost costs
    reimbursed heures visite visites horaires telephone numero adresse garer rendez vous prix cout
    rembourse""".split()
)
# Who or when the question is about: appended to the previous question, never a focus of its own.
_MODIFIERS = frozenset(
    """kinderen kind kids baby babys zuigelingen jongeren tieners ouderen oudere bejaarden volwassenen
    zwangeren zwangere zwangerschap vrouwen mannen senioren acuut acute chronisch chronische
    children child infants infant babies teenagers adults adult elderly older people pregnancy
    pregnant women men chronic
    enfants enfant bebe bebes nourrissons adolescents adultes agees personnes femmes enceinte enceintes
    grossesse hommes aigu aigue chronique
    maandag dinsdag woensdag donderdag vrijdag zaterdag zondag weekend avond avonds nacht nachts
    monday tuesday wednesday thursday friday saturday sunday evening night
    lundi mardi mercredi jeudi vendredi samedi dimanche soir nuit""".split()
)
# Words that frame a routing question without being its subject.
_FRAMES_WORDS = frozenset(
    """dienst afdeling campus ziekenhuis zol dokter dokters arts artsen specialist specialisten
    raadpleging consultatie poli polikliniek terecht heen naartoe vind vinden
    department departments ward clinic hospital doctor doctors physician specialist specialists
    consultation find go
    service clinique hopital medecin medecins docteur specialiste trouve trouver aller dr prof""".split()
)
# The hospital's campuses (Sint-Jan and André Dumont in Genk, Maaseik, Lanaken: the campus names
# of data/understanding/README.md) and the region's towns, folded; "sint jan" as two words too.
PLACES = frozenset(
    text_normalise(place)
    for place in """genk maaseik lanaken hasselt bree waterschei sint-jan sint-barbara maasmechelen tongeren
    sint-truiden leuven brussel bruxelles brussels antwerpen anvers luik liège maastricht""".split()
)
_PLACE_BIGRAMS = frozenset({("andre", "dumont"), ("sint", "jan"), ("sint", "barbara"), ("sint", "truiden")})
# Pronouns that point back to a thing (not to a person: "hij", "she" and "il" are left alone).
_THING_PRONOUNS = frozenset("het dat dit die deze ze it this that they them ca cela ceci".split())
# Dutch pronominal adverbs ("kan je eraan sterven?": "aan" + the previous focus).
_PRONOMINAL_ADVERB = re.compile(r"^(er|daar|hier)(aan|van|over|door|mee|tegen|voor|bij|in|op|uit|na|om)$")
# A pronoun that points back even in a message with content words of its own ("doet het pijn?").
_STRONG_BACKREF = frozenset("het dat dit it this that ca cela".split())
_DETERMINER_BEFORE = frozenset({"content", "attribute", "modifier", "place", "frame"})
_PLACE_BACKREF = frozenset({"daar", "ginder", "là", "là-bas"})
_FR_OBJECT = frozenset({"le", "la", "les", "l"})
_FR_CLITICS = frozenset("t on il elle ils elles je tu nous vous ce".split())
_ELISIONS = frozenset("l d qu j n s c m t jusqu lorsqu".split())
_LINKER = {"nl": "van", "en": "of", "fr": "de"}
# Function words that make a remainder a clause rather than a noun phrase ("als hij niet meer
# ademt", "if he stops"): a clause is appended, never put in place of the previous focus.
_CLAUSE_WORDS = frozenset(
    """als hij zij ze niet geen meer is zijn wordt worden heb heeft kan moet ik je u we if he she not no
    is are can should i you we si il elle ne pas plus est sont peut""".split()
)
_LINKING = frozenset({"van", "of", "de", "du", "des", "der"})  # inside one focus: "ziekte van Crohn"
_PREPOSITION_FOR_MODIFIER = {"nl": "bij", "en": "in", "fr": "chez"}
_PREPOSITION_FOR_PLACE = {"nl": "in", "en": "in", "fr": "à"}

_TOKEN = re.compile(r"[^\W_]+(?:['-][^\W_]+)*'?", re.UNICODE)
_APOSTROPHES = re.compile(r"[’`´]")


@dataclass(frozen=True)
class _Token:
    text: str  # as typed
    core: str  # folded, elision prefix removed ("l'asthme" → "asthme")
    kind: str  # function, question, greeting, aspect, attribute, modifier, frame, place, pronoun, content


@dataclass(frozen=True)
class FollowUp:
    """The decision and the question to search.

    ``is_followup``: whether the message continues the previous question. ``resolved``: the
    question to search (the message itself when not a follow-up; never empty for a non-empty
    message). ``rule``: the decision rule that fired (see the module docstring: ``cue``,
    ``points_back``, ``no_focus``, ``no_previous``, ``too_long``, ``not_a_question``, ``new_question``,
    ``own_focus``, ``own_content``, ``nothing_to_resolve``). ``resolution``: how ``resolved``
    was written (``place``, ``pronoun``, ``new_focus``, ``aspect``, ``append``; "" when not a
    follow-up). ``cue``: the continuation cue matched (folded, e.g. ``"en in"``; "" without)."""

    is_followup: bool
    resolved: str
    rule: str
    resolution: str = ""
    cue: str = ""


def _fold(word: str) -> str:
    return text_normalise(word)


def _core(token: str) -> str:
    """Folded token without a French elision prefix ("l'asthme" → "asthme", "qu'est-ce" →
    "est ce"); a hyphenated verb with clitics keeps its verb ("soigne-t-on" → "soigne")."""
    text = _APOSTROPHES.sub("'", token.lower())
    head, sep, tail = text.partition("'")
    if sep and tail and _fold(head) in _ELISIONS:
        text = tail
    parts = [p for p in re.split(r"[-']", text) if p]
    if len(parts) > 1 and all(_fold(p) in _FR_CLITICS for p in parts[1:]):
        return _fold(parts[0])
    return _fold(text.rstrip("'"))


def _kind(core: str) -> str:
    if core in PLACES:
        return "place"
    words = core.split()
    if not words:
        return "function"
    if core in _QUESTION_WORDS or words[0] in _QUESTION_WORDS and all(w in _FUNCTION for w in words[1:]):
        return "question"
    for kind, vocabulary in (
        ("aspect", _ASPECTS),
        ("attribute", _ATTRIBUTES),
        ("modifier", _MODIFIERS),
        ("frame", _FRAMES_WORDS),
    ):
        if all(w in vocabulary for w in words):
            return kind
    if all(w in _FUNCTION or w in _QUESTION_WORDS for w in words):
        return "function"
    if all(w in _GREETINGS or w in _FUNCTION for w in words):
        return "greeting"
    return "content"


def _tokens(text: str) -> list[_Token]:
    """Words of ``text`` with their kind; place bigrams ("André Dumont", "Sint Jan") are one
    place; a thing pronoun directly before a content, attribute, modifier, place or frame word is
    a determiner ("het telefoonnummer"); a French "le/la/l'" before an aspect verb is a pronoun
    ("comment la traiter"); "là", "daar" point back to the previous place."""
    raw = _TOKEN.findall(_APOSTROPHES.sub("'", text))
    cores = [_core(t) for t in raw]
    kinds = [_kind(c) for c in cores]
    for i in range(len(raw) - 1):
        if (cores[i], cores[i + 1]) in _PLACE_BIGRAMS:
            kinds[i] = kinds[i + 1] = "place"
    for i, core in enumerate(cores):
        following = kinds[i + 1] if i + 1 < len(kinds) else ""
        if (
            core in _THING_PRONOUNS
            and following not in _DETERMINER_BEFORE
            or _PRONOMINAL_ADVERB.match(core)
            or raw[i].lower() in _PLACE_BACKREF
        ):
            kinds[i] = "pronoun"
        elif _fr_object_pronoun(raw[i], cores, kinds, i):
            kinds[i] = "object"
        elif raw[i].lower().endswith(("-il", "-elle")) and kinds[i] != "content":
            kinds[i] = "pronoun"
    return [_Token(text=t, core=c, kind=k) for t, c, k in zip(raw, cores, kinds, strict=True)]


def _fr_object_pronoun(token: str, cores: list[str], kinds: list[str], i: int) -> bool:
    """A French object pronoun before its verb: "la traiter", "le soigner", "l'éviter"."""
    lowered = _APOSTROPHES.sub("'", token.lower())
    if lowered.rstrip("'") in _FR_OBJECT and lowered[-1:] != "'":
        nxt = cores[i + 1] if i + 1 < len(cores) else ""
        return kinds[i + 1 : i + 2] == ["aspect"] and nxt.endswith(("er", "ir", "re"))
    head, sep, tail = lowered.partition("'")
    return bool(sep and tail and head == "l" and kinds[i] == "aspect" and cores[i].endswith(("er", "ir", "re")))


def _cue(tokens: list[_Token]) -> tuple[str, int, bool]:
    """``(cue, tokens it covers, bare conjunction)``: the longest conjunction and/or frame at the
    start ("en wat met" covers 3 tokens); ("", 0, False) without a cue."""
    folded = [t.core for t in tokens]
    covered, names, bare = 0, [], True
    for phrase in sorted(CONJUNCTIONS, key=lambda p: -len(p.split())):
        words = phrase.split()
        if folded[: len(words)] == words:
            covered, names = len(words), [phrase]
            break
    rest = folded[covered:]
    for phrase in sorted(FRAMES, key=lambda p: -len(p.split())):
        words = phrase.split()
        if rest[: len(words)] == words:
            covered += len(words)
            names.append(phrase)
            bare = False
            break
    if not names:
        return "", 0, False
    # The listed cues "en in", "en voor", "and in", "et à", "et pour": the preposition stays in
    # the remainder (it carries the place or the population), only the cue's name includes it.
    nxt = tokens[covered] if covered < len(tokens) else None
    name = " ".join(names)
    if nxt is not None and nxt.kind == "function" and nxt.core in {"in", "voor", "bij", "op", "a", "pour", "at", "for"}:
        name += f" {nxt.core}"
    return name, covered, bare


def _greeting_only(tokens: list[_Token]) -> bool:
    return (
        bool(tokens)
        and all(t.kind in ("greeting", "function") for t in tokens)
        and any(t.kind == "greeting" for t in tokens)
    )


def followup_decide(*, previous: str, message: str, message_focus: bool = False) -> tuple[bool, str, str]:
    """``(is_followup, rule, cue)`` for ``message`` after the ``previous`` question (the rules of
    the module docstring). ``message_focus``: the taxonomy resolved a condition, department or
    doctor in ``message`` (the stage asks :func:`taxonomy.resolver.text_resolve`; ``False``
    when unknown). Pure; never raises."""
    if not previous.strip():
        return False, "no_previous", ""
    tokens = _tokens(message)
    if len(tokens) > MAX_WORDS:
        return False, "too_long", ""
    if not tokens or _greeting_only(tokens):
        return False, "not_a_question", ""
    cue, covered, bare = _cue(tokens)
    if cue:
        rest = tokens[covered:]
        points_back = any(t.kind in ("pronoun", "object") for t in rest)
        asks = any(t.kind == "question" for t in rest)
        subject = any(t.kind in ("content", "attribute") for t in rest)
        if bare and asks and subject and not points_back:
            return False, "new_question", cue
        return True, "cue", cue
    if message_focus:
        return False, "own_focus", ""
    if any(t.kind == "pronoun" and (t.core in _STRONG_BACKREF or _PRONOMINAL_ADVERB.match(t.core)) for t in tokens):
        return True, "points_back", ""
    if any(t.kind in ("content", "attribute") for t in tokens):
        return False, "own_content", ""
    if any(t.kind in ("pronoun", "object", "place", "aspect", "modifier", "frame") for t in tokens):
        return True, "no_focus", ""
    return False, "nothing_to_resolve", ""


def _join(words: list[str]) -> str:
    """Words joined by spaces, none after an elision ("l'" + "asthme" → "l'asthme")."""
    text = ""
    for word in words:
        text += word if (not text or text.endswith("'")) else f" {word}"
    return text


def _texts(tokens: list[_Token]) -> list[str]:
    return [t.text for t in tokens]


def _unelided(word: str) -> str:
    """``word`` without a French elision prefix ("l'eczéma" → "eczéma")."""
    head, sep, tail = _APOSTROPHES.sub("'", word).partition("'")
    return tail if sep and tail and _fold(head) in _ELISIONS else word


def _last_run(tokens: list[_Token], kinds: tuple[str, ...] = ("content",)) -> tuple[int, int] | None:
    """``(start, end)`` (end exclusive) of the last run of ``kinds`` tokens, allowing one linking
    word ("van", "of", "de") between two of them ("ziekte van Crohn"); None when there is none."""
    end = None
    for i in range(len(tokens) - 1, -1, -1):
        if tokens[i].kind in kinds:
            end = i + 1
            break
    if end is None:
        return None
    start = end - 1
    while start > 0:
        if tokens[start - 1].kind in kinds:
            start -= 1
        elif start > 1 and tokens[start - 1].core in _LINKING and tokens[start - 2].kind in kinds:
            start -= 2
        else:
            break
    return start, end


def _focus(tokens: list[_Token]) -> str:
    """The previous question's focus: its last run of content words ("hartfalen", "kidney
    stones", "insuffisance cardiaque"), else its aspect or attribute words, else ""."""
    span = _last_run(tokens) or _last_run(tokens, ("attribute",)) or _last_run(tokens, ("frame",))
    if span is None:
        return ""
    words = _texts(tokens[span[0] : span[1]])
    words[0] = _unelided(words[0])  # "l'insuffisance cardiaque" → "insuffisance cardiaque"
    return " ".join(words)


def _place_phrase(tokens: list[_Token]) -> list[_Token]:
    """The place words of ``tokens`` with the preposition (and "campus") before them."""
    idx = [i for i, t in enumerate(tokens) if t.kind == "place"]
    if not idx:
        return []
    start = idx[0]
    while (
        start > 0 and tokens[start - 1].kind in ("function", "frame") and tokens[start - 1].core not in _QUESTION_WORDS
    ):
        start -= 1
        if tokens[start].kind == "function":
            break
    return tokens[start : idx[-1] + 1]


def _end(previous: str, message: str) -> str:
    return "?" if previous.rstrip().endswith("?") or message.rstrip().endswith("?") else ""


def followup_resolve(*, previous: str, message: str, language: str, message_focus: bool = False) -> FollowUp:
    """Decide whether ``message`` follows up ``previous`` and write the question to search.

    ``previous``: the previous turn's question (its resolved question when it was a follow-up
    itself); "" when there is none. ``message``: the new message as typed. ``language``: ISO
    639-1 code choosing the linking word of an ``aspect`` resolution ("van", "of", "de"; others
    use English). ``message_focus``: see :func:`followup_decide`. Returns a :class:`FollowUp`
    whose ``resolved`` is ``message`` (stripped) when it is not a follow-up. Pure; never raises.
    """
    message = message.strip()
    is_followup, rule, cue = followup_decide(previous=previous, message=message, message_focus=message_focus)
    if not is_followup:
        return FollowUp(is_followup=False, resolved=message, rule=rule, cue=cue)
    tokens = _tokens(message)
    _, covered, _ = _cue(tokens)
    rest = tokens[covered:]
    prev = _tokens(previous)
    end = _end(previous, message)
    resolution, resolved = _resolution(rest=rest, prev=prev, language=language, message_focus=message_focus)
    resolved = " ".join(resolved.split())
    resolved = resolved[:1].upper() + resolved[1:]
    return FollowUp(
        is_followup=True, resolved=(resolved + end) if resolved else message, rule=rule, resolution=resolution, cue=cue
    )


def _resolution(*, rest: list[_Token], prev: list[_Token], language: str, message_focus: bool) -> tuple[str, str]:
    """``(resolution, resolved question without its final "?")`` for the remainder ``rest`` of a
    follow-up after the previous question's tokens ``prev`` (the cases of the module docstring)."""
    base = _join(_texts(prev))
    if not rest:
        return "append", base
    kinds = {t.kind for t in rest}
    focus = _focus(prev)
    if "place" in kinds and kinds <= {"place", "function", "frame"}:
        return "place", _with_place(rest=rest, prev=prev, base=base, language=language)
    if kinds & {"pronoun", "object"} and focus:
        return "pronoun", _with_pronoun(rest=rest, prev=prev, focus=focus)
    noun_phrase = all(t.kind in ("content", "function", "place", "modifier", "frame") for t in rest) and not any(
        t.kind == "function" and t.core in _CLAUSE_WORDS for t in rest
    )
    old = _last_run(prev)
    if noun_phrase and ("content" in kinds or message_focus) and old is not None:
        new = _last_run(rest, ("content", "modifier")) or (0, len(rest))
        words = _texts(rest[new[0] : new[1]])
        words[0] = _unelided(words[0])
        return "new_focus", _join(_texts(prev[: old[0]]) + words + _texts(prev[old[1] :]))
    if kinds & {"aspect", "attribute"} and focus:
        parts = [_join(_texts(rest)), _LINKER.get(language, "of"), focus, _join(_texts(_place_phrase(prev)))]
        return "aspect", " ".join(p for p in parts if p)
    if rest[0].kind == "modifier":  # "what about children?" → "… of asthma in children"
        return "append", f"{base} {_PREPOSITION_FOR_MODIFIER.get(language, 'in')} {_join(_texts(rest))}"
    return "append", f"{base} {_join(_texts(rest))}"


def _with_place(*, rest: list[_Token], prev: list[_Token], base: str, language: str) -> str:
    """The previous question with its place replaced by the remainder's, or the remainder's
    place phrase appended ("in Maaseik"; a bare place gets the language's "in"/"à")."""
    places = _texts([t for t in rest if t.kind == "place"])
    old = [i for i, t in enumerate(prev) if t.kind == "place"]
    if old:
        return _join(_texts(prev[: old[0]]) + places + _texts(prev[old[-1] + 1 :]))
    phrase = _texts(rest) if rest[0].kind == "function" else [_PREPOSITION_FOR_PLACE.get(language, "in"), *places]
    return f"{base} {_join(phrase)}"


def _with_pronoun(*, rest: list[_Token], prev: list[_Token], focus: str) -> str:
    """The remainder with its pronoun replaced by the previous ``focus``: in place ("hoe wordt
    hartfalen behandeld"), after the verb for a French object pronoun ("comment traiter
    insuffisance cardiaque"), first for an inversion ("goutte est héréditaire"), with the
    preposition of a pronominal adverb ("aan longembolie") or with the place for "daar"."""
    words: list[str] = []
    appended = prepended = False
    for t in rest:
        adverb = _PRONOMINAL_ADVERB.match(t.core) if t.kind == "pronoun" else None
        if t.kind == "pronoun" and t.text.lower() in _PLACE_BACKREF:
            words += [focus, *_texts(_place_phrase(prev))]
        elif t.kind == "pronoun" and t.text.lower().endswith(("-il", "-elle")):
            words.append(t.text.rsplit("-", 1)[0].removesuffix("-t"))
            prepended = True
        elif adverb is not None:
            words += [adverb.group(2), focus]
        elif t.kind == "pronoun":
            words.append(focus)
        elif t.kind == "object":
            verb = _unelided(t.text)  # "l'éviter" → "éviter"; a plain "la"/"le" is dropped
            if verb != t.text:
                words.append(verb)
            appended = True
        else:
            words.append(t.text)
    if appended:
        words.append(focus)
    elif prepended:
        words.insert(0, focus)
    return _join(words)
