"""Red flags: messages that must be routed to a phone number before any search (issue 9).

Rules, not a model: every pattern is a phrase a person in trouble writes, in Dutch (also
colloquial Flemish and common misspellings), English and French, with the emergency line in
Turkish and Arabic too. Text and patterns are folded the same way (lower case, accents and
Arabic hamza removed, :func:`fold`), so "ademhalingsproblemen" and "kan nie ademe" match the
same families. Categories, most severe first: suicide (1813) → emergency (112) → poison
(070 245 245) → urgent out of hours (1733).

Hard negatives: a question about a condition ("wat zijn de symptomen van een beroerte?"), a
past event ("vorig jaar had ik een hartinfarct") or a hypothetical ("wat moet je doen als
iemand een epileptische aanval krijgt?") is not routed; when it is about an emergency condition
it gets the one-line 112 notice (``notice_only``). A person cue in the present ("mijn vader",
"ik", "nu") overrides the informational cue, never the history or hypothetical cue unless "now"
is said. Precision and recall per category and language are measured on
``data/safety/red-flags.jsonl`` (``benchmarks/safety.py``, ``docs/EVALUATION.md``).

Cost: about 40 compiled regular expressions over at most 1,000 characters, well under 1 ms.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from zolsearch.search.contract import RED_FLAG_NUMBERS, RedFlagCategory


def fold(text: str) -> str:
    """Lower case, NFKD with combining marks dropped (é → e, ğ → g, أ → ا), whitespace runs → one
    space. Punctuation is kept (patterns may use it)."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return " ".join("".join(ch for ch in decomposed if not unicodedata.combining(ch)).split())


@dataclass(frozen=True)
class RedFlagHit:
    """A routed message: ``category`` with its ``number``, the ``rule`` that fired (for review),
    or ``notice_only`` for an informational question about an emergency condition."""

    category: RedFlagCategory
    number: str
    rule: str
    notice_only: bool = False


def _rx(*alternatives: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{fold(a)})" for a in alternatives))


# --- cues -----------------------------------------------------------------------------------
PERSON = _rx(
    r"\b(ik|mij|me|mijn|mijne|m'n|mn|'k|k|wij|we|ons|onze|hij|zij|ze|hem|haar|zijn|u|uw|je|jij)\b",
    r"\b(i|i'm|im|my|me|we|our|he|she|him|her|his)\b",
    r"\b(je|j'ai|moi|mon|ma|mes|il|elle|nous|notre)\b",
    r"\b(ben|benim|annem|babam|esim|cocugum|oglum|kızım|kizim)\b",
    r"(انا|أنا|ابي|أبي|امي|أمي|زوجي|زوجتي|ابني|ابنتي|طفلي)",
)
NOW = _rx(
    r"\b(nu|net|juist|momenteel|op dit moment|sinds (een|1|2|3|enkele|een paar) (minuten|min|uur|kwartier)|plots|plotseling|ineens|opeens|help)\b",
    r"\b(now|right now|just|currently|at the moment|suddenly|help)\b",
    r"\b(maintenant|en ce moment|tout de suite|soudain|soudainement|a l'instant|au secours|aidez)\b",
    r"\b(simdi|su an|hemen|yardim)\b",
    r"(الآن|حالا|ساعدوني)",
)
INFORMATIONAL = _rx(
    r"\bwat (zijn|is) (de |het )?(symptomen|tekenen|signalen|verschijnselen|kenmerken|oorzaken|oorzaak|gevolgen|risico|risicofactoren|behandeling|verschil)",
    r"\bhoe (herken|herkent|merk|ontstaat|ontstaan|wordt|worden|behandel|voorkom|vaak|lang|groot)",
    r"\bwat (is|betekent) (een|het|de)? ?\w+\b\??$",
    r"\bwelke (symptomen|tekenen|behandeling|behandelingen|onderzoeken|medicatie|revalidatie)",
    r"\b(symptomen|tekenen|signalen|verschijnselen|kenmerken) van\b",
    r"\bwhat (are|is) (the |a |an )?(symptoms|signs|warning signs|causes|cause|risk|treatment|difference)",
    r"\bhow (do you|can you|to|can i|do i|is|are) (recogni[sz]e|spot|tell|know|treated|diagnosed|prevent)",
    r"\b(symptoms|signs|warning signs) of\b",
    r"\bquels? (sont|est) (les |le )?(symptomes|signes|causes|traitements?)",
    r"\bcomment (reconnaitre|reconnait|soigner|traiter|prevenir|se manifeste)",
    r"\b(symptomes|signes) d",
    r"\b(belirtileri|belirtisi) nelerdir\b",
    r"\bhoe (kan|moet) (ik|je|men) (iemand|een \w+|mijn \w+)\b.{0,40}\b(helpen|steunen|bijstaan)",
    r"\bhow (can|do|should) (i|you|we) (support|help) (a|my|someone|somebody)",
    r"\bcomment (aider|soutenir) (une personne|quelqu'un|un proche|mon|ma)",
    r"(ما هي اعراض|ما هي علامات|ما اعراض)",
)
HISTORY = _rx(
    r"\b(vorig|vorige|verleden|afgelopen) (jaar|maand|week|zomer|winter)\b",
    r"\b\d+ (jaar|maanden|weken) geleden\b",
    r"\b(in|sinds) (19|20)\d\d\b",
    r"\bvroeger\b",
    r"\b(last|past) (year|month|week|summer|winter)\b",
    r"\b\d+ (years|months|weeks) ago\b",
    r"\b(had|suffered) (a|an) .{0,30}\b(in|last|ago)\b",
    r"\bin the past\b",
    r"\bafter (my|his|her) .{0,20}(heart attack|stroke|seizure)",
    r"\bna (mijn|zijn|haar) .{0,20}(hartaanval|hartinfarct|beroerte|herseninfarct|operatie)",
    r"\b(l'an dernier|l'annee derniere|l'annee passee|il y a \d+ (ans|mois|semaines))\b",
    r"\bapres (mon|son|sa) .{0,20}(infarctus|avc|crise)",
)
HYPOTHETICAL = _rx(
    r"\b(stel dat|wat als|wat moet je doen (als|bij)|wat doe je (als|bij)|hoe reageer je|als iemand|indien iemand|wat moet men doen)\b",
    r"\bals .{0,30}\booit\b",
    r"\b(what if|if someone|if somebody|what should you do if|what to do if|what do you do if|how should you react|in case someone|if a person)\b",
    r"\b(et si|que faire si|que faut-il faire si|si quelqu'un|si une personne)\b",
)
# Conditions an informational question may name (they get the one-line 112 notice).
EMERGENCY_CONDITIONS = _rx(
    r"\b(hartaanval|hartinfarct|hart aanval|beroerte|herseninfarct|hersenbloeding|cva|tia|anafylax\w*|anafylactische|epileptische aanval|epilepsie|reanimatie|reanimeren|hartstilstand|bewusteloos\w*|flauwvallen|shock|longembolie|hersenvliesontsteking|meningitis|sepsis|bloedvergiftiging|verstikking|verslikken|brandwonde\w*)\b",
    r"\b(heart attack|stroke|cardiac arrest|anaphyla\w*|seizure|epilep\w*|cpr|unconscious\w*|pulmonary embolism|meningitis|sepsis|choking)\b",
    r"\b(crise cardiaque|infarctus|avc|accident vasculaire|arret cardiaque|anaphyla\w*|crise d'epilepsie|epilepsie|convulsion\w*|embolie|meningite|septicemie|etouffement)\b",
    r"\b(kalp krizi|inme|felc)\b",
    r"(نوبة قلبية|سكتة دماغية|جلطة)",
)

# --- categories (pattern name, regex) --------------------------------------------------------
_NEG = r"(niet|nie|ni|geen|not|can't|cannot|cant|can not|won't|isn't|ne|n'|plus|pas)"
SUICIDE = [
    (
        "suicide-nl",
        _rx(
            r"\b(zelfmoord|zelfdoding|suicide|suicidaal)\b.{0,60}\b(plegen|denk|gedachten|wil|van plan|overweeg|doen)\b",
            r"\b(ik|hij|zij|ze|mijn \w+) (wil|wilt|wou|zou) .{0,25}\b(dood|sterven|niet meer leven|er niet meer zijn|niet meer wakker worden|er een einde aan maken)\b",
            r"\b(mezelf|mijzelf|mij|zichzelf|hemzelf|haarzelf) .{0,25}\b(van kant (te )?maken|van het leven (te )?beroven|iets (aan te doen|aandoen)|dood (te )?maken|op (te )?hangen|ophangen|verdrinken|snijden|pijn (te )?doen)\b",
            r"\been einde (aan|maken aan) (mijn|zijn|haar|m'n) leven\b",
            r"\b(een )?einde aan maken\b",
            r"\bzie het (niet|nie|ni) meer zitten\b",
            r"\b(er )?(niet|nie|ni) meer (wil|wilt|willen|wou) (zijn|leven)\b",
            r"\b(niet|nie|ni) meer wakker (wil|wilt|willen|wou) worden\b",
            r"\b(zelfmoordgedacht\w*|zelfdodingsgedacht\w*|suicidale gedachten|doodsgedachten)\b",
            r"\b(een )?eind(e)? aan (te )?(maken|maak|maakt)\b",
            r"\bgeen zin meer (om )?(verder |nog )?(te )?leven\b",
            r"\b(praat|praten|spreekt|begint) over (zelfmoord|zelfdoding|dood willen|er niet meer willen zijn)\b",
            r"\b(doe|doet|deed) (mezelf|mijzelf|zichzelf) (pijn|iets aan)\b",
            r"\b(zich|mezelf|mijzelf|zichzelf) van het leven (wil |wilt |te )?(beroven|benemen)\b",
            r"\bniemand (zou|zal) (me|mij) missen\b",
            r"\btrek het (echt |gewoon )?(niet|nie|ni) meer\b",
            r"\bstoppen met (alles|leven)\b",
            r"\b(niet meer|nie meer) (willen |wil )?(leven|verder|wakker worden)\b",
            r"\bbeter af zonder (mij|mijn|hem|haar)\b",
            r"\b(snij|snijd|kras|bekras) (mezelf|mijzelf|zichzelf|mij)\b",
            r"\b(zelfbeschadiging|automutilatie)\b.{0,40}\b(ik|mijn|doe|begonnen|weer)\b",
            r"\bhoeveel .{0,40}\b(dood|sterven|niet meer wakker)\b",
            r"\b(voor de trein|van een brug|van het dak) (springen|te springen|spring)\b",
        ),
    ),
    (
        "suicide-en",
        _rx(
            r"\b(kill|killing|hurt|hurting|harm|harming|cut|cutting) (myself|himself|herself|themselves)\b",
            r"\b(end|ending|take|taking) (my|his|her|their) (own )?life\b",
            r"\b(want|wants|wanted|going|plan|planning) to die\b",
            r"\b(don't|dont|do not|doesn't|does not) want to (live|be alive|be here|wake up)( anymore)?\b",
            r"\bsuicid\w*\b.{0,60}\b(thoughts|thinking|plan|planning|going|want|feel|attempt)\b",
            r"\b(thoughts|thinking|talks|talking) (of|about) (suicide|dying|ending)\b",
            r"\bbetter off (dead|without me)\b",
            r"\b(take|taking|swallow|swallowing) all (of )?(my|the) (pills|tablets|medication|meds)\b",
            r"\bno one (would|will) miss me\b|\bnobody (would|will) miss me\b",
            r"\bnot (to )?wake up\b",
            r"\bhow (much|many) .{0,40}\b(die|kill|dead|lethal|not wake)\b",
            r"\bself[- ]harm\w*\b.{0,30}\b(i|my|again|started)\b",
        ),
    ),
    (
        "suicide-fr",
        _rx(
            r"\b(me|se) (tuer|suicider|faire du mal|scarifi\w*|pendre)\b",
            r"\bne plus (me|se) reveiller\b",
            r"\bmettre fin a (mes|ses) jours\b",
            r"\b(en finir|envie de mourir|veux mourir|veut mourir|plus envie de vivre|ne veux plus vivre|ne veut plus vivre)\b",
            r"\bidees? (suicidaires?|noires)\b",
            r"\bpense (au suicide|a (me|se) tuer)\b",
        ),
    ),
    (
        "suicide-tr-ar",
        _rx(
            r"\b(intihar|kendimi oldur\w*|olmek istiyorum|yasamak istemiyorum)\b",
            r"(انتحار|أنتحر|انتحر|اقتل نفسي|أقتل نفسي|اريد ان اموت|أريد أن أموت|لا اريد ان اعيش|لا أريد أن أعيش)",
        ),
    ),
]

EMERGENCY = [
    (
        "chest-nl",
        _rx(
            r"\b(pijn|druk|steek|steken|knellend\w*|beklemmend\w*|beklemming|zwaar gevoel|pijnlijk|olifant|gewicht|band)\b.{0,30}\b(borst|borts|brost|borstkas|hart)\b.{0,80}\b(adem\w*|asem\w*|benauwd\w*|kortademig\w*|lucht|zweet|zweten|zweit|klam|arm|armen|kaak|nek|rug|uitstra\w*|misselijk\w*|flauw|duizelig|hijg\w*|grauw|grijs|lijkbleek)",
            r"\b(adem\w*|asem\w*|benauwd\w*|kortademig\w*|lucht|zweet|zweten|klam)\b.{0,80}\b(pijn|druk|steek|knel\w*)\b.{0,20}\b(borst|borts|brost|borstkas)\b",
            r"\b(borst|borts|brost|borstkas)(pijn| pijn)\b.{0,80}\b(adem\w*|asem\w*|benauwd|kortademig|zweet|zweten|arm|kaak|uitstra\w*|misselijk)",
            r"\b(ik denk|denk ik|volgens mij|ik vrees|we denken|ze denken)\b.{0,30}\b(hartaanval|hartinfarct|hart aanval|beroerte|herseninfarct)\b",
            r"\b(heeft|heb|krijgt|krijg|doet) (nu |net )?(een )?(hartaanval|hartinfarct|hart aanval|beroerte|herseninfarct|hartstilstand)\b",
        ),
    ),
    (
        "stroke-nl",
        _rx(
            r"\b(mond|mondhoek|gezicht|gelaat)\b.{0,20}\b(hangt|scheef|zakt|afhangend|verlamd|trekt)\b",
            r"\b(scheve|hangende|afhangende) (mond|mondhoek|gezicht)\b",
            r"\b(kan|kon) (ineens |plots |opeens )?(zijn|haar|mijn|z'n|m'n)? ?(arm|been|hand|linkerarm|rechterarm) (niet|nie|ni) meer (bewegen|optillen|heffen)\b",
            r"\b(praat|spreekt|klinkt) (ineens |plots |opeens )?(raar|vreemd|onduidelijk|wartaal|dubbel|met dubbele tong)\b",
            r"\b(kan|kon) (ineens |plots |opeens )?(niet|nie|ni) meer (praten|spreken|uit zijn woorden|uit haar woorden)\b",
            r"\b(lalt|dubbele tong)\b",
            r"\b(halve|ene) (kant|zijde) (van (zijn|haar|mijn) (lichaam|gezicht) )?(verlamd|gevoelloos|slap)\b",
        ),
    ),
    (
        "unconscious-nl",
        _rx(
            r"\b(bewusteloos|buiten bewustzijn|weggezakt|niet aanspreekbaar|nie aanspreekbaar)\b",
            r"\bkrijg (hem|haar|ze|hen) (niet|nie|ni) (meer )?wakker\b",
            r"\breageer[td]? (niet|nie|ni|nergens|niet meer|nie meer)\b",
            r"\b(niet|nie|ni) (meer )?wakker te krijgen\b",
            r"\bwordt (niet|nie|ni) (meer )?wakker\b",
            r"\b(ademt|ademde) (niet|nie|ni) (meer)?\b",
            # the other Dutch word orders: "als hij niet meer ademt", "ademt hij niet meer"
            r"\b(niet|nie|ni) meer (ademt|ademde)\b",
            r"\b(ademt|ademde) (hij|ze|zij|het|mijn \w+) (niet|nie|ni) (meer)?\b",
            r"\bgeen (ademhaling|hartslag|pols)\b",
            r"\b(ineengezakt|in elkaar gezakt|neergevallen en|valt flauw en|flauwgevallen en)\b",
            r"\b(lippen|gezicht) (zijn |is |worden |wordt |zien )?(blauw|grauw)\b",
        ),
    ),
    (
        "breathing-nl",
        _rx(
            r"\b(kan|kunnen|kon) (bijna |haast |echt )?(niet|nie|ni|nauwelijks|amper|moeilijk|slecht) (meer )?(goed )?(ademen|ademe|asemen|asme|ademhalen|adem halen|lucht krijgen|lucht happen)\b",
            r"\b(krijgt|krijg|krijgen) (bijna |haast )?(geen|gene|weinig) (adem|asem|lucht)\b",
            r"\b(naar adem|naar lucht) (happen|snakken|hapt|snakt)\b",
            r"\b(stikt|stikken|verstikt|ik stik)\b",
            r"\bverslikt\b.{0,40}\b(adem|lucht|blauw|hoesten lukt niet|kan niet)\b",
            r"\b(ernstige )?ademnood\b",
            r"\bheel (erg )?(benauwd|kortademig)\b",
        ),
    ),
    (
        "bleeding-nl",
        _rx(
            r"\b(bloed|bloedt|bloeden|bloeding)\b.{0,60}\b(stopt (niet|nie|ni)|(niet|nie|ni) stopt|blijft|houdt niet op|niet te stoppen|spuit|gutst|stroomt)\b",
            r"\b(ik|hij|ze|zij) (bloed|bloedt) (hevig|enorm|heel erg|heel veel|veel|zwaar)\b",
            r"\b(hevig\w*|heel veel|enorm veel|zeer veel|ernstig\w*|massa'?s|veel) (bloed|bloeden|bloedverlies|bloeding|aan het bloeden)\b",
            r"\b(bloedt|bloeden) (hevig|enorm|heel erg|als een rund|veel)\b",
            r"\b(zwanger|zwangerschap|weken zwanger)\b.{0,80}\b(bloed\w*|vloeien|vloei)\b",
            r"\b(bloed\w*|vloeien|vloei)\b.{0,80}\b(zwanger|zwangerschap|weken zwanger)\b",
            r"\b(bloed|bloedt) (ophoesten|opgeven|braken|overgeven)\b|\b(braakt|spuwt|hoest) (veel )?bloed\b",
        ),
    ),
    (
        "allergy-nl",
        _rx(
            r"\b(keel|tong|lippen|lip|gezicht|mond)\b.{0,30}\b(zwelt|zwellen|zwol|gezwollen|opgezwollen|dik|dikker|dicht|toe)\b",
            r"\b(zwelt|zwellen|zwol)\b.{0,20}\b(keel|tong|lippen|gezicht|mond)\b",
            r"\bpiept? bij het ademen\b",
            r"\b(anafylact\w*|anafylaxie|allergische shock)\b",
            r"\b(wespensteek|bijensteek|gestoken|pinda|noten|notenallergie|allergie)\b.{0,80}\b(benauwd\w*|kortademig|ademnood|(moeilijk|slecht|niet|nie) (kan )?ademen|keel|tong|flauw|duizelig)\b",
        ),
    ),
    (
        "seizure-nl",
        _rx(
            r"\b(aanval|insult|stuip\w*|schok\w*|epilep\w*|convuls\w*|toeval)\b.{0,60}\b(stopt (niet|nie|ni)|(niet|nie|ni) (stopt|ophoudt)|houdt (niet|nie|ni) op|blijft|al \d+ min\w*|langer dan|meer dan \d+ min\w*|minuten lang|weer een|opnieuw|na elkaar)\b",
            r"\bstatus epilepticus\b",
        ),
    ),
    (
        "baby-nl",
        _rx(
            r"\b(baby|babytje|zuigeling|pasgeboren\w*|kleine van (\d+|een|twee|drie|vier|vijf|zes|zeven|acht|negen|tien) (weken|weekjes)|(\d+|een|twee|drie|vier|vijf|zes|zeven|acht|negen|tien) (weken|wk|wkn|weekjes) (oud|oude)|(een|1|2|twee) maand(en)? oud|(een|1|2|twee) maanden oude?|nieuwgeboren\w*)\b.{0,100}\b(koorts|temperatuur|38|39|40)\b.{0,100}\b(slap|suf|sloom|lusteloos|drinkt (niet|nie|ni)|wil (niet|nie|ni) drinken|reageert|huilt (niet|nie|ni)|kreunt|grauw|vlekjes)\b",
            r"\b(slap|suf|lusteloos|drinkt (niet|nie|ni))\b.{0,100}\b(koorts|temperatuur)\b.{0,60}\b(baby|zuigeling|pasgeboren|weken oud|maand oud)\b",
        ),
    ),
    (
        "other-nl",
        _rx(
            r"\b(ergste|hevigste|ondraaglijke|plotse|plotselinge|barstende|donderslag)\w* hoofdpijn\b.{0,80}\b(nek|stijf|braken|overgeven|ooit|leven)\b",
            r"\b(zware|ernstige|grote|derdegraads) (brandwond\w*|verbranding\w*)\b",
            r"\b(gevallen|gevallen van|valt van|viel van)\b.{0,40}\b(trap|dak|ladder|hoogte|stelling)\b.{0,60}\b(bewusteloos|reageert|bloed\w*|beweegt (niet|nie)|kan (niet|nie) (bewegen|opstaan))\b",
            r"\b(trap|dak|ladder|hoogte|stelling|steiger)\b.{0,20}\b(gevallen|gesukkeld|gevallen)\b.{0,60}\b(bewusteloos|reageert|bloed\w*|beweegt (niet|nie|ni)|kan (niet|nie) (bewegen|opstaan))\b",
            r"\b(auto-?ongeluk|verkeersongeval|aangereden|ongeval)\b.{0,60}\b(gewond|bloed\w*|bewusteloos|reageert|gebroken)\b",
            r"\b(hart|hartslag)\b.{0,20}\b(staat stil|gestopt)\b",
        ),
    ),
    (
        "emergency-en",
        _rx(
            r"\b(chest|heart)\b.{0,15}\b(pain|pains|pressure|tightness|hurts|hurting|aching|squeezing)\b.{0,80}\b(breath\w*|short of breath|sweat\w*|arm|arms|jaw|neck|back|radiat\w*|spread\w*|nause\w*|faint|dizzy|clammy)",
            r"\b(pain|pressure|tightness) (in|on) (my|his|her|the) chest\b.{0,80}\b(breath\w*|sweat\w*|arm|jaw|radiat\w*|spread\w*|nause\w*|faint|dizzy)",
            r"\b(breath\w*|sweat\w*|clammy)\b.{0,60}\b(chest) (pain|pressure|tightness)\b",
            r"\b(having|has|is having|think (i'm|im|i am|he is|she is|he's|she's) having) (a )?(heart attack|stroke|cardiac arrest)\b",
            r"\b(face|mouth|smile)\b.{0,20}\b(droop\w*|drooping|crooked|lopsided|numb)\b",
            r"\bslurr\w* (his |her |my )?(speech|words)\b|\bspeech (is )?slurred\b",
            r"\b(can't|cannot|can not|couldn't|unable to) (move|lift|raise|feel) (his|her|my) (left |right )?(arm|leg|hand|face)\b",
            r"\b(tight\w*|band|pressure|pain|heaviness|weight)\b.{0,25}\bchest\b.{0,80}\b(breath\w*|sweat\w*|jaw|arm|sick|nause\w*|faint|dizzy|clammy)",
            r"\b(suddenly |all of a sudden )?(can't|cannot|unable to) (speak|talk|get words out)\b",
            r"\b(unconscious|unresponsive|passed out and|fainted and|collapsed|not responding|won't wake up|wont wake up|will not wake up|can't wake (him|her)|isn't breathing|is not breathing|not breathing|stopped breathing)\b",
            r"\b(lips|face) (are |is |turning |going )?(blue|grey|gray)\b",
            r"\b(can't|cannot|can not|can barely|struggling to|hard to|unable to|difficulty) (breathe|breathing|catch (my|his|her) breath|get air)\b",
            r"\b(choking|is choking|choked)\b",
            r"\b(bleeding|blood)\b.{0,40}\b(won't stop|wont stop|will not stop|doesn't stop|not stopping|keeps|pouring|spurting|a lot|heavily|everywhere)\b",
            r"\b(heavy|heavily|severe|lots of|a lot of) (bleeding|blood loss)\b",
            r"\bpregnan\w*\b.{0,80}\b(bleed\w*|blood)\b|\b(bleed\w*|blood)\b.{0,80}\bpregnan\w*",
            r"\b(throat|tongue|lips|face)\b.{0,30}\b(swell\w*|swollen|closing|tight)\b",
            r"\b(anaphyla\w*|allergic reaction)\b.{0,60}\b(breath\w*|throat|swell\w*|epipen)\b",
            r"\b(seizure|fit|convulsion|convulsing|shaking)\w*\b.{0,60}\b(won't stop|wont stop|not stopping|more than (5|five) min\w*|for \d+ min\w*|again and again|another one|keeps)\b",
            r"\b(baby|newborn|infant|\d+[- ]weeks?[- ]old|(one|two|1|2)[- ]months?[- ]old)\b.{0,100}\b(fever|temperature)\b.{0,100}\b(limp|floppy|letharg\w*|not feeding|won't feed|not drinking|won't drink|unresponsive|drowsy|hard to wake)\b",
            r"\b(worst|sudden|thunderclap)\b.{0,20}\bheadache\b.{0,60}\b(neck|stiff|vomit\w*|life|ever)\b",
            r"\b(severe|bad|major|third[- ]degree) burns?\b",
            r"\b(fell|fallen|fall) (off|from|down)\b.{0,40}\b(roof|ladder|stairs|height)\b.{0,60}\b(unconscious|not moving|isn't moving|is not moving|can't move|bleeding|not responding)\b",
            r"\b(car crash|car accident|hit by a car)\b",
        ),
    ),
    (
        "emergency-fr",
        _rx(
            r"\b(douleur|douleurs|mal|oppression|serrement)\b.{0,25}\b(poitrine|thoracique|coeur)\b.{0,80}\b(respir\w*|souffle|essouffl\w*|bras|machoire|sueur\w*|transpir\w*|nause\w*|irradi\w*)",
            r"\b(respir\w*|souffle|essouffl\w*|sueur\w*)\b.{0,60}\b(douleur|mal|oppression)\b.{0,25}\b(poitrine|thoracique)\b",
            r"\b(fait|fais|faire|a|avoir) (une )?(crise cardiaque|infarctus|avc|attaque)\b",
            r"\b(visage|bouche)\b.{0,20}\b(de travers|tombe|paralyse\w*|deforme\w*)\b",
            r"\b(ne (peut|peux|parvient) plus|n'arrive plus a) (parler|bouger (son|le|mon) bras|lever (son|le|mon) bras)\b",
            r"\b(inconscient\w*|ne repond (plus|pas)|ne respire (plus|pas)|evanoui\w* et|s'est effondre\w*|ne se reveille pas)\b",
            r"\b(levres|visage) (sont |est |deviennent |devient )?(bleues|bleu|grises|gris)\b",
            r"\b(ne (peut|peux|parvient) (plus |pas )?(a )?respirer|n'arrive (plus|pas) a respirer|du mal a respirer|etouffe|s'etouffe)\b",
            r"\b(saigne|saignement|hemorragie|sang)\b.{0,40}\b(beaucoup|abondant\w*|ne s'arrete pas|qui ne s'arrete pas|enormement|partout|gicle)\b",
            r"\benceinte\b.{0,80}\b(saign\w*|sang|perte\w* de sang)\b|\b(saign\w*|sang)\b.{0,80}\benceinte\b",
            r"\b(gorge|langue|levres|visage)\b.{0,30}\b(gonfle\w*|enfle\w*|se ferme)\b",
            r"\b(choc anaphylactique|anaphylax\w*)\b",
            r"\b(crise|convulsion\w*|convulse)\b.{0,60}\b(ne s'arrete pas|dure depuis|plus de \d+ min\w*|recommence|encore une)\b",
            r"\b(bebe|nourrisson|nouveau-ne|\d+ semaines)\b.{0,100}\b(fievre|temperature)\b.{0,100}\b(mou|molle|lethargi\w*|ne boit (pas|plus)|somnolent\w*|ne reagit pas)\b",
            r"\b(pire|violent\w*|soudain\w*)\b.{0,20}\bmal de tete\b.{0,60}\b(nuque|raide|vomi\w*|vie)\b",
            r"\b(grave|graves|grosse|grosses) brulures?\b",
        ),
    ),
    (
        "emergency-tr",
        _rx(
            r"\b(gogus|gogsum|gogsu)\w*\b.{0,20}\b(agr\w*|sancı\w*|baskı)\b",
            r"\bnefes (alamıyor\w*|alamiyor\w*|alamıyorum|alamiyorum|darlıgı|darligi)\b",
            r"\b(bayıldı|bayildi|bilinci kapalı|bilinci kapali|kendine gelmiyor|tepki vermiyor)\b",
            r"\b(kalp krizi geciriyor\w*|kalp krizi|felc geciriyor\w*|inme)\b",
            r"\bkanama\w* (durmuyor|cok fazla)\b",
            r"\b(nobet|kasılma|kasilma)\w*\b.{0,30}\b(durmuyor|gecmiyor)\b",
            r"\b(boguluyor|yuzu kaydı|yuzu kaydi|konusamıyor|konusamiyor)\b",
        ),
    ),
    (
        "emergency-ar",
        _rx(
            r"(الم|ألم|وجع)\s*(شديد\s*)?(في\s*)?(ال)?صدر",
            r"(لا|لم)\s*(استطيع|أستطيع|يستطيع|تستطيع|اقدر|أقدر|يقدر|تقدر)\s*(ان\s*|أن\s*)?(التنفس|اتنفس|أتنفس|يتنفس|تتنفس)",
            r"(صعوبة|ضيق)\s*(شديد\w*\s*)?(في\s*)?(التنفس|تنفس)",
            r"(فقد|فقدت|فاقد)\s*(ال)?وعي|(اغمي|أغمي|مغمى)\s*عليه",
            r"(نوبة|ازمة|أزمة|جلطة)\s*قلبية|سكتة\s*دماغية|جلطة\s*دماغية",
            r"نزيف\s*(شديد|حاد|لا\s*يتوقف|قوي)",
            r"(تشنج\w*|نوبة\s*صرع)\s*(لا\s*تتوقف|مستمر\w*)",
            r"(يختنق|تختنق|اختناق)",
        ),
    ),
]

_PRODUCTS_NL = (
    r"(bleek\w*|javel|chloor|ontkalker|ontstopper|gootsteen\w*|vaatwas\w*|afwas\w*|wasmiddel\w*|wasbol\w*|pods?|capsules?"
    r"|lampolie|petroleum|terpentine|wasbenzine|aanstekervloeistof|\w*bat+erij\w*|knoopcel\w*|\w*pil(len|letjes)?|\w*tabletten"
    r"|medicijnen|medicatie|paracetamol\w*|ibuprofen|slaappillen|paddenstoel\w*|paddestoel\w*|champignons|bes(sen|jes)"
    r"|planten?|blad\w*|gif|rattengif|insecticide|onkruidverdelger|antivries|sigaret\w*|peuk\w*|nicotine|e-sigaret\w*"
    r"|vloeistof|schoonmaak\w*|ammoniak|olie|alcohol|wodka|parfum|shampoo)"
)
_SWALLOWED_NL = (
    r"(gedronken|drinkt|dronk|opgedronken|ingeslikt|doorgeslikt|slikte|ingenomen|binnengekregen|binnen gekregen"
    r"|opgegeten|gegeten|at|gekauwd|gelikt|likte|in (zijn|haar|z'n|mijn) mond (gehad|gestoken|gestopt|genomen)|ingeademd|gesnoven"
    r"|in (zijn|haar|mijn|de) ogen (gekregen|gespoten))"
)
POISON = [
    (
        "poison-nl",
        _rx(
            rf"\b{_SWALLOWED_NL}\b.{{0,60}}\b{_PRODUCTS_NL}\b",
            rf"\b{_PRODUCTS_NL}\b.{{0,60}}\b({_SWALLOWED_NL}|gemengd)\b",
            r"\b(knoopbat+erij\w*|knoopcel\w*)\b",
            r"\b(dubbele dosis|twee keer (mijn|zijn|haar) (dosis|pillen|medicatie)|(per ongeluk|per vergissing) .{0,40}\b(ingenomen|genomen|gedronken|ingeslikt|gegeven)|te veel .{0,20}\b(pillen|tabletten|medicijnen|paracetamol|siroop) (ingenomen|genomen|gegeven|gedronken))\b",
            r"\b(koolmonoxide|co-vergiftiging|vergiftigd|vergiftiging)\b.{0,40}\b(ik|mijn|hij|zij|ze|we|denk|nu)\b",
            r"\b(ik|mijn|hij|zij|ze|we|denk)\b.{0,40}\b(vergiftigd|vergiftiging|koolmonoxide)\b",
        ),
    ),
    (
        "poison-en",
        _rx(
            r"\b(swallowed|drank|drunk|ate|eaten|ingested|inhaled|licked|chewed|got .{0,10} in (his|her|my|their) eyes?)\b.{0,60}\b(bleach|detergent|dishwasher|pods?|capsules?|cleaning|cleaner|drain|lamp oil|kerosene|paraffin|petrol|gasoline|white spirit|battery|batteries|pills|tablets|medicine|medication|paracetamol|acetaminophen|ibuprofen|mushrooms?|berries|plant|leaves|poison|rat poison|pesticide|insecticide|antifreeze|cigarettes?|nicotine|e-liquid|vape liquid|chemicals?|ammonia|washing-up liquid|dish soap|washing powder)\b",
            r"\bbutton (cell|battery|batteries)\b",
            r"\b(double dose|took .{0,15}\b(too many|twice|extra|double)|accidentally (took|gave|swallowed|drank))\b",
            r"\b(mixed|mixing) (bleach|ammonia|cleaning products)\b.{0,60}\b(fumes|breath\w*|inhaled|cough\w*)\b",
            r"\b(carbon monoxide|poisoned|poisoning)\b.{0,40}\b(i|my|he|she|we|think)\b",
        ),
    ),
    (
        "poison-fr",
        _rx(
            r"\b(avale|a bu|bu de|mange|ingere|inhale|respire|dans les yeux)\b.{0,60}\b(javel|eau de javel|detergent|lave-vaisselle|capsules?|produit\w*|pile\w*|comprimes|medicaments?|pilules|paracetamol|champignons|baies|plante|poison|mort-aux-rats|insecticide|antigel|cigarettes?|nicotine|petrole|white-spirit)\b",
            r"\bpile[- ]bouton\b",
            r"\b(double dose|trop de (comprimes|medicaments|pilules)|par erreur .{0,30}\b(pris|avale|donne|bu))\b",
            r"\b(intoxication|intoxique\w*|empoisonne\w*|monoxyde de carbone)\b.{0,40}\b(je|mon|ma|il|elle|nous|pense)\b",
        ),
    ),
]

URGENT_TIME = _rx(
    r"\b(vannacht|vanavond|vanmiddag|nacht|'s nachts|snachts|weekend|weekeinde|zaterdag\w*|zondag\w*|feestdag|na de uren|buiten de (kantoor)?uren|huisarts is (gesloten|dicht|niet bereikbaar)|dokter is (gesloten|dicht|niet bereikbaar)|nu|vandaag nog|kan niet wachten)\b",
    r"\b(tonight|this evening|middle of the night|at night|weekend|saturday|sunday|bank holiday|after hours|out of hours|gp is closed|doctor is closed|surgery is closed|can't wait|right now|now)\b",
    r"\b(cette nuit|ce soir|la nuit|week-end|weekend|samedi|dimanche|jour ferie|medecin (est )?ferme|maintenant|ne peut pas attendre)\b",
)
URGENT_COMPLAINT = _rx(
    r"\b(koorts|oorpijn|snee|wonde|wond|hechting\w*|hechten|verstuikt|verzwikt|enkel|opgezwollen|gezwollen|blaasontsteking|plassen|braakt|braken|overgeven|diarree|uitdroging|buikpijn|\w*pijn|dikke wang|hoest|keelpijn|uitslag|\w*beet|gebeten|\w*steek|gestoken|gehecht|gebroken|breuk|val|gevallen|brandwond\w*|verbrand)\b",
    r"\b(fever|temperature|earache|ear pain|cut|wound|stitches|sprain\w*|ankle|swollen|urinary|uti|peeing|vomit\w*|throwing up|diarrh\w*|dehydrat\w*|abdominal pain|stomach pain|pain|cough|sore throat|rash|bite|bitten|broken|fracture|fell|burn\w*)\b",
    r"\b(fievre|mal (a l'|aux )oreilles?|otite|coupure|plaie|points de suture|entorse|cheville|gonfle\w*|infection urinaire|cystite|vomi\w*|diarrhee|deshydrat\w*|mal au ventre|douleur|toux|mal de gorge|eruption|morsure|mordu|casse|fracture|chute|tombe|brulure)\b",
)
URGENT_ASK = _rx(
    r"\b(huisarts van wacht|dokter van wacht|wachtpost|wachtdienst|arts van wacht|huisartsenwachtpost)\b",
    r"\b(gp on call|doctor on call|out[- ]of[- ]hours (gp|doctor|service))\b",
    r"\b(medecin de garde|poste de garde)\b",
)


# Asking for a helpline by its service, with a number or call cue on either side ("welk nummer
# moet ik bellen voor een ziekenwagen", "poison centre number", "numéro du centre antipoisons"):
# the number is the answer, whatever else the message says. A service named without such a cue
# ("Wat doet het Antigifcentrum precies?", a hard negative of data/safety/red-flags.jsonl) is
# not an ask; nor is the hospital's own emergency department ("telefoonnummer van de spoed").
_CALL_CUE = (
    r"(nummer|telefoonnummer|tel|bellen|bel|belt|bereiken|bereik|contacteren|"
    r"number|phone|call|ring|dial|reach|contact|numero|appeler|appelle|telephoner|joindre)"
)


def _ask(services: str) -> tuple[str, str]:
    """The two patterns of a question for ``services`` (alternatives): a call cue before or after."""
    return rf"\b{_CALL_CUE}\b.{{0,40}}\b({services})\b", rf"\b({services})\b.{{0,40}}\b{_CALL_CUE}\b"


HELPLINE_ASKS: list[tuple[RedFlagCategory, str, re.Pattern[str]]] = [
    (
        RedFlagCategory.SUICIDE,
        "suicide-line",
        _rx(
            *_ask(
                r"zelfmoordlijn|zelfmoord lijn|tele-?onthaal|suicide (hot|help)?line|suicide prevention (line|centre|center)"
                r"|ligne (de prevention du )?suicide|centre de prevention du suicide"
            )
        ),
    ),
    (
        RedFlagCategory.EMERGENCY,
        "emergency-number",
        _rx(
            *_ask(r"ziekenwagen|ambulance|ambulances|hulpdiensten|noodcentrale|emergency services|paramedics"),
            r"\bnoodnummer\b",
            r"\bemergency (phone )?number\b",
            r"\bnumero d'urgence\b",
        ),
    ),
    (
        RedFlagCategory.POISON,
        "poison-centre",
        _rx(*_ask(r"antigifcentrum|antigif centrum|poison (control|centre|center|helpline)|centre anti-?poisons?")),
    ),
]


def _first(rules: list[tuple[str, re.Pattern[str]]], text: str) -> str:
    for name, pattern in rules:
        if pattern.search(text):
            return name
    return ""


def red_flag_detect(text: str) -> RedFlagHit | None:
    """The red flag of ``text`` (any language), or ``None`` for an ordinary question.

    Order: a question asking for a helpline's number (:data:`HELPLINE_ASKS`: the suicide line,
    an ambulance or the emergency number, the poison centre) → suicide → emergency → poison →
    urgent; an informational, past or hypothetical
    message is not routed (see the module docstring) and returns a ``notice_only`` emergency hit
    when it names an emergency condition. Never raises; pure and deterministic.
    """
    folded = fold(text)
    for category, rule, pattern in HELPLINE_ASKS:
        if pattern.search(folded):
            return RedFlagHit(category=category, number=RED_FLAG_NUMBERS[category], rule=rule)
    person, now = bool(PERSON.search(folded)), bool(NOW.search(folded))
    informational = bool(INFORMATIONAL.search(folded)) and not (person and (now or _personal_event(folded)))
    past_or_hypothetical = bool(HISTORY.search(folded) or HYPOTHETICAL.search(folded)) and not now
    suppressed = informational or past_or_hypothetical
    if not suppressed:
        for category, rules in (
            (RedFlagCategory.SUICIDE, SUICIDE),
            (RedFlagCategory.EMERGENCY, EMERGENCY),
            (RedFlagCategory.POISON, POISON),
        ):
            rule = _first(rules, folded)
            if rule:
                return RedFlagHit(category=category, number=RED_FLAG_NUMBERS[category], rule=rule)
        if URGENT_ASK.search(folded) or (URGENT_TIME.search(folded) and URGENT_COMPLAINT.search(folded) and person):
            category = RedFlagCategory.URGENT
            return RedFlagHit(category=category, number=RED_FLAG_NUMBERS[category], rule="urgent-out-of-hours")
    if EMERGENCY_CONDITIONS.search(folded) or (suppressed and _first(EMERGENCY, folded)):
        category = RedFlagCategory.EMERGENCY
        return RedFlagHit(category=category, number=RED_FLAG_NUMBERS[category], rule="informational", notice_only=True)
    return None


_PERSONAL_EVENT = _rx(
    r"\b(mijn|mijne|m'n) (vader|moeder|pa|ma|man|vrouw|zoon|dochter|kind|baby|broer|zus|buurman|buurvrouw|opa|oma|partner|vriend|vriendin)\b.{0,40}\b(heeft|is|kan|valt|ligt|reageert|ademt|bloedt)\b",
    r"\b(my) (father|dad|mother|mum|mom|husband|wife|son|daughter|child|baby|brother|sister|neighbour|neighbor|grandma|grandpa|partner|friend)\b.{0,40}\b(has|is|can't|cannot|isn't|won't)\b",
    r"\b(ik heb|i have|i'm|i am|j'ai|je suis)\b",
)


def _personal_event(folded: str) -> bool:
    return bool(_PERSONAL_EVENT.search(folded))
