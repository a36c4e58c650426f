"""Every sentence the pipeline writes itself, in the answer's language.

Dutch, English and French are complete; for any other language a message is the Dutch text
followed by the English one, except the emergency line, which also exists in Turkish and Arabic
(issue 9). The Belgian numbers come from :data:`zolsearch.search.contract.RED_FLAG_NUMBERS`;
they are facts, not style: 112 emergency, 1733 huisarts van wacht, 070 245 245 Antigifcentrum,
1813 Zelfmoordlijn, 106 Tele-Onthaal.
"""

from __future__ import annotations

from django.conf import settings

from zolsearch.search.contract import RED_FLAG_NUMBERS, TELE_ONTHAAL, RedFlagCategory, RefusalReason

FULL_LANGUAGES = ("nl", "en", "fr")

_FALLBACK = {
    "nl": "Ik kan deze vraag niet betrouwbaar beantwoorden met de informatie van het ziekenhuis. "
    "Voor hulp kan u terecht bij het onthaal van het ziekenhuis (tel. {phone}) of op {url}.",
    "en": "I cannot answer this question reliably from the hospital's information. "
    "For help, please contact the hospital's reception desk (tel. {phone}) or visit {url}.",
    "fr": "Je ne peux pas répondre de manière fiable à cette question avec les informations de "
    "l'hôpital. Pour de l'aide, contactez l'accueil de l'hôpital (tél. {phone}) ou consultez {url}.",
}

_REFUSAL = {
    RefusalReason.MEDICAL_ADVICE: {
        "nl": "Ik kan geen persoonlijk medisch advies geven: geen diagnose, geen dosis en geen uitleg "
        "van uw eigen resultaten. Bespreek dit met uw huisarts of behandelend arts. Buiten de "
        "kantooruren bereikt u de huisarts van wacht via 1733; bij levensgevaar belt u 112.",
        "en": "I cannot give personal medical advice: no diagnosis, no dose and no reading of your own "
        "results. Please discuss this with your GP or treating doctor. Out of hours, the GP on call "
        "(huisarts van wacht) is reachable on 1733; in a life-threatening situation call 112.",
        "fr": "Je ne peux pas donner d'avis médical personnel : ni diagnostic, ni dose, ni "
        "interprétation de vos propres résultats. Parlez-en à votre médecin généraliste ou à votre "
        "médecin traitant. En dehors des heures d'ouverture, le médecin de garde est joignable au "
        "1733 ; en cas de danger de mort, appelez le 112.",
    },
    RefusalReason.HARMFUL: {
        "nl": "Bij deze vraag kan ik niet helpen: ze vraagt om iets dat patiënten kan schaden of "
        "tegen de medische deontologie ingaat. Voor vragen over zorg in het ziekenhuis kan u "
        "terecht bij het onthaal (tel. {phone}) of op {url}.",
        "en": "I cannot help with this request: it asks for something that could harm patients or "
        "goes against medical ethics. For questions about care in the hospital, please contact the "
        "reception desk (tel. {phone}) or visit {url}.",
        "fr": "Je ne peux pas aider avec cette demande : elle demande quelque chose qui pourrait nuire "
        "aux patients ou qui va à l'encontre de l'éthique médicale. Pour vos questions sur les soins "
        "à l'hôpital, contactez l'accueil (tél. {phone}) ou consultez {url}.",
    },
    RefusalReason.OUT_OF_SCOPE: {
        "nl": "Deze zoekfunctie beantwoordt vragen over gezondheid en over het ziekenhuis. Voor andere "
        "vragen kan ik niet helpen. Het onthaal van het ziekenhuis helpt u verder (tel. {phone}, {url}).",
        "en": "This search answers questions about health and about the hospital; I cannot help with "
        "other requests. The hospital's reception desk can help you further (tel. {phone}, {url}).",
        "fr": "Cette recherche répond aux questions sur la santé et sur l'hôpital ; je ne peux pas "
        "aider pour d'autres demandes. L'accueil de l'hôpital peut vous aider (tél. {phone}, {url}).",
    },
}
_REFUSAL[RefusalReason.PROMPT_INJECTION] = _REFUSAL[RefusalReason.OUT_OF_SCOPE]
_REFUSAL[RefusalReason.UNSAFE_OUTPUT] = _REFUSAL[RefusalReason.MEDICAL_ADVICE]
_REFUSAL[RefusalReason.GUARD_UNAVAILABLE] = {
    "nl": "Ik kan deze vraag nu niet veilig beantwoorden. Probeer het later opnieuw of neem contact "
    "op met het onthaal van het ziekenhuis (tel. {phone}, {url}). Bij levensgevaar: bel 112.",
    "en": "I cannot answer this question safely right now. Please try again later or contact the "
    "hospital's reception desk (tel. {phone}, {url}). In a life-threatening situation call 112.",
    "fr": "Je ne peux pas répondre à cette question en toute sécurité pour le moment. Réessayez plus "
    "tard ou contactez l'accueil de l'hôpital (tél. {phone}, {url}). En cas de danger de mort, appelez le 112.",
}

_RED_FLAG = {
    RedFlagCategory.EMERGENCY: {
        "nl": "Dit kan levensbedreigend zijn. Bel nu 112.",
        "en": "This may be life-threatening. Call 112 now.",
        "fr": "Cela peut mettre la vie en danger. Appelez le 112 maintenant.",
        "tr": "Bu hayati tehlike oluşturabilir. Hemen 112'yi arayın.",
        "ar": "قد يكون هذا خطرًا على الحياة. اتصل الآن بالرقم 112.",
        "de": "Das kann lebensbedrohlich sein. Rufen Sie jetzt 112 an.",
    },
    RedFlagCategory.URGENT: {
        "nl": "Dit lijkt dringend, maar niet levensbedreigend. Buiten de kantooruren bereikt u de "
        "huisarts van wacht (wachtpost) via 1733. Wordt het erger of is er levensgevaar: bel 112.",
        "en": "This sounds urgent but not life-threatening. Out of hours, call the GP on call "
        "(huisarts van wacht, wachtpost) on 1733. If it gets worse or life is in danger: call 112.",
        "fr": "Cela semble urgent mais sans danger de mort. En dehors des heures d'ouverture, appelez "
        "le médecin de garde au 1733. Si cela s'aggrave ou en cas de danger de mort : appelez le 112.",
    },
    RedFlagCategory.POISON: {
        "nl": "Bel meteen het Antigifcentrum: 070 245 245 (dag en nacht). Is de persoon suf, "
        "bewusteloos of heeft hij moeite met ademen: bel 112.",
        "en": "Call the Poison Centre (Antigifcentrum) now: 070 245 245 (day and night). If the person "
        "is drowsy, unconscious or has trouble breathing: call 112.",
        "fr": "Appelez immédiatement le Centre Antipoisons : 070 245 245 (jour et nuit). Si la personne "
        "est somnolente, inconsciente ou respire difficilement : appelez le 112.",
    },
    RedFlagCategory.SUICIDE: {
        "nl": "Je staat er niet alleen voor. Praat erover met de Zelfmoordlijn: bel 1813 (gratis, dag "
        "en nacht). Wil je gewoon met iemand praten: Tele-Onthaal, 106. Ben je in acuut gevaar: bel 112.",
        "en": "You are not alone. Talk to the Zelfmoordlijn (suicide prevention line): call 1813 "
        "(free, day and night). To talk to someone: Tele-Onthaal, 106. If you are in immediate "
        "danger: call 112.",
        "fr": "Vous n'êtes pas seul(e). Parlez-en à la Zelfmoordlijn (ligne de prévention du suicide) : "
        "appelez le 1813 (gratuit, jour et nuit). Pour parler à quelqu'un : Tele-Onthaal, 106. En "
        "cas de danger immédiat : appelez le 112.",
    },
}

_EMERGENCY_NOTICE = {
    "nl": "Bij acute klachten: bel 112.",
    "en": "In an emergency: call 112.",
    "fr": "En cas d'urgence : appelez le 112.",
    "tr": "Acil durumda: 112'yi arayın.",
    "ar": "في حالة الطوارئ: اتصل بالرقم 112.",
}

_DISCLOSURE = {
    "nl": "Dit antwoord is automatisch samengesteld (AI) uit informatie van het ziekenhuis. Het is "
    "geen persoonlijk medisch advies.",
    "en": "This answer was put together automatically (AI) from the hospital's information. It is "
    "not personal medical advice.",
    "fr": "Cette réponse a été composée automatiquement (IA) à partir des informations de l'hôpital. "
    "Ce n'est pas un avis médical personnel.",
}

# Sentences generation writes from the graph's structured facts (taxonomy.selectors.RoutingFact).
_FACTS = {
    "nl": {
        "condition": "Voor {topic} kan u terecht bij: {places}.",
        "department": "{places}.",
        "doctor": "{doctor} werkt bij {places}.",
        "doctors": "artsen: {names}",
        "phone": "tel. {phone}",
        "source": "Gegevens van het ziekenhuis (taxonomie)",
    },
    "en": {
        "condition": "For {topic} you can go to: {places}.",
        "department": "{places}.",
        "doctor": "{doctor} works at {places}.",
        "doctors": "doctors: {names}",
        "phone": "tel. {phone}",
        "source": "Hospital data (taxonomy)",
    },
    "fr": {
        "condition": "Pour {topic}, vous pouvez vous adresser à : {places}.",
        "department": "{places}.",
        "doctor": "{doctor} travaille à {places}.",
        "doctors": "médecins : {names}",
        "phone": "tél. {phone}",
        "source": "Données de l'hôpital (taxonomie)",
    },
}


def _localised(texts: dict[str, str], language: str) -> str:
    """``texts[language]``; for a language without its own text, Dutch then English."""
    if language in texts:
        return texts[language]
    return f"{texts['nl']} / {texts['en']}"


def _contact(text: str) -> str:
    return text.format(phone=settings.SEARCH_FALLBACK_PHONE, url=settings.SEARCH_FALLBACK_URL)


def fallback_message(language: str) -> str:
    """The honest "I don't know, here is who can help" message in ``language``."""
    return _contact(_localised(_FALLBACK, language))


def refusal_message(reason: str, language: str) -> str:
    """The refusal for ``reason`` (a :class:`RefusalReason` value) in ``language``, with a route
    to a human. Raises ``KeyError`` for an unknown reason."""
    return _contact(_localised(_REFUSAL[RefusalReason(reason)], language))


def red_flag_message(category: str, language: str) -> str:
    """The routing-only reply of a red flag (``category``: a :class:`RedFlagCategory` value) in
    ``language``; it names the category's number (:data:`RED_FLAG_NUMBERS`)."""
    text = _localised(_RED_FLAG[RedFlagCategory(category)], language)
    assert RED_FLAG_NUMBERS[category] in text and (category != RedFlagCategory.SUICIDE or TELE_ONTHAAL in text)
    return text


def emergency_notice(language: str) -> str:
    """The one-line 112 notice that precedes answers to informational questions about an
    emergency condition ("wat zijn de symptomen van een beroerte?")."""
    return _localised(_EMERGENCY_NOTICE, language)


def disclosure_line(language: str) -> str:
    """The standing AI disclosure (EU AI Act art. 50) in ``language``."""
    return _localised(_DISCLOSURE, language)


def fact_templates(language: str) -> dict[str, str]:
    """Sentence templates for graph facts in ``language`` (Dutch for a language without its own)."""
    return _FACTS.get(language, _FACTS["nl"])
