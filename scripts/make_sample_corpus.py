"""Generate the bundled sample corpus ``docgraph/data/sample/{train,dev,test}.txt``.

The corpus is invented English news (football reports, company results, politics and tennis
results) about a fictional world, written in CoNLL-2003 format (``WORD POS CHUNK NER``, IOB2,
PER/LOC/ORG/MISC, ``-DOCSTART- -X- -X- O`` lines). POS and chunk tags are rough heuristics.

Names recur within a document and several are ambiguous out of context but clear from the
document: football clubs carry the name of their town (``Kestrel`` the club is ORG, ``in
Kestrel`` is LOC), companies are named after towns, and some people have surnames that are town
names. Dev and test use some names that never occur in train.

Usage: ``python scripts/make_sample_corpus.py [--out DIR] [--seed N]``. The output is
deterministic for a given seed.
"""

from __future__ import annotations

import argparse
import random
import re
from pathlib import Path

TOWNS = [
    "Kestrel", "Harwick", "Dunmore", "Marrowby", "Ostrand", "Brennock", "Tavistre", "Velloria",
    "Carrow", "Elsmere", "Fenwick", "Galloway", "Hollin", "Ivesby", "Larkmoor", "Penhallow",
    "Quenby", "Rosslyn", "Stanmere", "Thornby", "Wexcombe", "Ashdown",
]
COUNTRIES = [
    ("Veldania", "Veldanian"), ("Norhelm", "Norhelmish"), ("Sarenta", "Sarentan"),
    ("Ostavia", "Ostavian"), ("Meridia", "Meridian"), ("Kalvenia", "Kalvenian"),
    ("Trevania", "Trevanian"), ("Lusmark", "Lusmarkian"),
]
FIRST = [
    "Tomas", "Ada", "Piet", "Lina", "Marek", "Sofia", "Jonah", "Elena", "Rafael", "Ines",
    "Oskar", "Mira", "Daniel", "Clara", "Viktor", "Nora", "Anton", "Greta", "Felix", "Hana",
    "Luca", "Irena", "Bram", "Selma", "Emil", "Zofia", "Karim", "Lotte",
]
LAST = [
    "Wrenfield", "Kellerby", "Ostrov", "Maddox", "Varga", "Lindqvist", "Okafor", "Brandt",
    "Castell", "Duvane", "Halloran", "Jessup", "Kovacic", "Morrow", "Novak", "Pellini",
    "Quist", "Rauch", "Sandoval", "Tiernan", "Ulvang", "Vidal", "Whitcombe", "Yardley",
]
SECTORS = ["steel", "energy", "food", "chemicals", "shipping", "telecoms", "engineering"]
SUFFIX = {"steel": "Steel", "energy": "Energy", "food": "Foods", "chemicals": "Chemicals",
          "shipping": "Shipping", "telecoms": "Telecom", "engineering": "Works"}
BRANDS = ["Corvane", "Brightwell", "Halden", "Tessaly", "Ambris", "Norwin", "Calloway", "Dremel"]
PRODUCTS = ["Strato", "Nova", "Arden", "Pulse", "Meteor", "Solace"]
PARTIES = ["Unity Party", "Green Alliance", "People 's Front", "Liberal Union", "Farmers Party",
           "Democratic Forum"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
ORDINALS = ["second", "third", "fourth", "fifth", "sixth", "seventh"]


class World:
    """Random draws from the name pools; ``held_out`` names appear only in dev and test."""

    def __init__(self, rng: random.Random, split: str) -> None:
        self.rng = rng
        keep = split != "train"

        def pool(names: list) -> list:
            cut = max(1, len(names) * 3 // 4)
            return names if keep else names[:cut]

        self.towns, self.countries = pool(TOWNS), pool(COUNTRIES)
        self.first, self.last, self.brands = pool(FIRST), pool(LAST), pool(BRANDS)

    def person(self, surname_from_town: bool = False) -> tuple[str, str]:
        last = self.rng.choice(self.towns if surname_from_town else self.last)
        return f"{self.rng.choice(self.first)} {last}", last

    def towns_(self, k: int) -> list[str]:
        return self.rng.sample(self.towns, k)


def E(text: str, typ: str) -> str:  # noqa: N802 - short marker helper
    """Mark ``text`` as an entity of type ``typ`` inside a template."""
    return f"[[{typ}|{text}]]"


def football(w: World) -> list[str]:
    r = w.rng
    home, away, other, nxt = w.towns_(4)
    country, nat = r.choice(w.countries)
    league = f"{nat} League"
    cup = r.choice([f"{country} Cup", "Founders Cup", "Northern Shield"])
    scorer, s_last = w.person(surname_from_town=r.random() < 0.5)
    if s_last in (home, away):
        scorer, s_last = w.person()
    away_scorer, _ = w.person()
    coach, c_last = w.person()
    injured, _ = w.person()
    g1, g2 = r.randint(2, 4), r.randint(0, 1)
    day = r.choice(DAYS[4:])
    head = (f"SOCCER - {E(home.upper(), 'ORG')} BEAT {E(away.upper(), 'ORG')} IN "
            f"{E(league.upper(), 'MISC')} .")
    month = r.choice(["May", "March", "October"])
    body = [
        f"{E(home, 'LOC')} , {E(country, 'LOC')} {r.randint(1, 28)} {month} .",
        f"{E(home, 'ORG')} beat {E(away, 'ORG')} {g1}-{g2} in the {E(league, 'MISC')} on {day} "
        f"to move {r.randint(2, 6)} points clear at the top of the table .",
        f"{E(scorer, 'PER')} opened the scoring after {r.randint(5, 30)} minutes with a low shot "
        f"from the edge of the area .",
        f"{E(s_last, 'PER')} , who joined from {E(other, 'ORG')} in the summer , has now scored "
        f"{r.randint(6, 15)} goals this season .",
        f"{E(away, 'ORG')} levelled through {E(away_scorer, 'PER')} shortly after the break , "
        f"but the visitors could not hold on .",
        f"{E(s_last, 'PER')} struck again in the {r.randint(60, 89)}th minute and the home side "
        f"never looked back .",
        f"Around {r.randint(8, 30)},000 supporters watched the game in {E(home, 'LOC')} , where "
        f"heavy rain had fallen all afternoon .",
        f"{E(home, 'ORG')} coach {E(coach, 'PER')} said his players had shown great character "
        f"against a strong {E(away, 'ORG')} side .",
        f"\" We knew {E(away, 'ORG')} would come at us , \" {E(c_last, 'PER')} told reporters "
        f"after the match .",
        f"{E(away, 'ORG')} , who lost {E(injured, 'PER')} to injury in the first half , remain "
        f"{r.choice(ORDINALS)} in the standings .",
        f"The two sides meet again in the {E(cup, 'MISC')} semi-finals in {E(away, 'LOC')} "
        f"next month .",
        f"{E(home, 'ORG')} play {E(nxt, 'ORG')} away next {r.choice(DAYS[:3])} , and "
        f"{E(c_last, 'PER')} expects to have a full squad .",
    ]
    return [head, *pick(r, body, 9, 10, keep_first=1)]


def business(w: World) -> list[str]:
    r = w.rng
    hq, site = w.towns_(2)
    country, nat = r.choice(w.countries)
    (c2, _), (c3, _) = r.sample(w.countries, 2)
    sector = r.choice(SECTORS)
    short = hq if r.random() < 0.5 else r.choice(w.brands)
    company = f"{short} {SUFFIX[sector]}"
    rival = f"{r.choice([b for b in w.brands if b != short])} {SUFFIX[sector]}"
    ceo, ceo_last = w.person(surname_from_town=r.random() < 0.3)
    if ceo_last in (hq, site, short):
        ceo, ceo_last = w.person()
    product = f"{short} {r.choice(PRODUCTS)}"
    bank = f"{r.choice(w.brands)} Securities"
    exchange = f"{r.choice(w.towns)} Stock Exchange"
    pct = r.randint(3, 40)
    head = f"{E(company.upper(), 'ORG')} PROFIT RISES {pct} PCT IN FIRST HALF ."
    body = [
        f"{E(hq, 'LOC')} , {E(country, 'LOC')} {r.randint(1, 28)} August .",
        f"{E(company, 'ORG')} , the {E(nat, 'MISC')} {sector} group , said on "
        f"{r.choice(DAYS[:5])} its first-half net profit rose {pct} percent to "
        f"{r.randint(20, 900)} million crowns .",
        f"Chief executive {E(ceo, 'PER')} said demand in {E(c2, 'LOC')} and {E(c3, 'LOC')} had "
        f"been stronger than expected .",
        f"{E(ceo_last, 'PER')} told a news conference in {E(hq, 'LOC')} that the group planned "
        f"to open {r.randint(2, 5)} new plants by the end of next year .",
        f"Shares in {E(short, 'ORG')} closed {r.randint(1, 9)} percent higher on the "
        f"{E(exchange, 'ORG')} after the figures were published .",
        f"Analysts at {E(bank, 'ORG')} had expected a smaller rise , citing weak sales of the "
        f"{E(product, 'MISC')} range .",
        f"{E(short, 'ORG')} employs about {r.randint(2, 40)},000 people , most of them at its "
        f"main site near {E(site, 'LOC')} .",
        f"The company also confirmed that talks with {E(rival, 'ORG')} about a joint venture in "
        f"{E(c2, 'LOC')} were continuing .",
        f"{E(ceo_last, 'PER')} declined to say when a deal could be signed , but added that "
        f"both boards supported the plan .",
        f"{E(short, 'ORG')} will publish full-year results in {E(hq, 'LOC')} in February .",
        f"Workers at the {E(site, 'LOC')} plant ended a two-day strike over pay last month .",
    ]
    return [head, *pick(r, body, 9, 10, keep_first=1)]


def politics(w: World) -> list[str]:
    r = w.rng
    (country, nat), (c2, nat2) = r.sample(w.countries, 2)
    capital, city = w.towns_(2)
    party, party2 = r.sample(PARTIES, 2)
    minister, m_last = w.person()
    leader, l_last = w.person()
    visitor, v_last = w.person(surname_from_town=True)
    if v_last in (capital, city):
        visitor, v_last = w.person()
    agency = f"{r.choice(['Press', 'News', 'Radio'])} {country}"
    year = r.randint(1994, 1999)
    head = f"{E(country.upper(), 'LOC')} PARLIAMENT APPROVES {year} BUDGET ."
    body = [
        f"{E(capital, 'LOC')} {r.randint(1, 28)} November .",
        f"{E(country, 'LOC')} 's parliament approved the {year} budget on {r.choice(DAYS[:5])} "
        f"after {r.randint(9, 30)} hours of debate , the news agency {E(agency, 'ORG')} said .",
        f"Finance Minister {E(minister, 'PER')} of the ruling {E(party, 'ORG')} told deputies the "
        f"plan would cut the deficit to {r.randint(2, 5)} percent of output .",
        f"The opposition {E(party2, 'ORG')} voted against , saying the measures would hurt "
        f"farmers in the north .",
        f"{E(leader, 'PER')} , the {E(party2, 'ORG')} leader , called the vote a dark day for "
        f"{E(country, 'LOC')} .",
        f"{E(m_last, 'PER')} said the government would not change course and rejected calls for "
        f"an early election .",
        f"{E(nat2, 'MISC')} Foreign Minister {E(visitor, 'PER')} is due to visit "
        f"{E(capital, 'LOC')} next week for talks on trade and border security .",
        f"{E(v_last, 'PER')} will also meet business leaders in {E(city, 'LOC')} , the second "
        f"largest city .",
        f"Relations between {E(country, 'LOC')} and {E(c2, 'LOC')} have improved since a "
        f"transport agreement was signed in {year - 2} .",
        f"{E(l_last, 'PER')} said {E(party2, 'ORG')} deputies would raise the budget again when "
        f"the {E(nat, 'MISC')} constitutional court meets .",
        f"Several hundred people protested outside parliament in {E(capital, 'LOC')} as the "
        f"result was announced .",
    ]
    return [head, *pick(r, body, 9, 10, keep_first=1)]


def tennis(w: World) -> list[str]:
    r = w.rng
    city = r.choice(w.towns)
    tournament = f"{city} Open"
    players = [(w.person(), r.choice(w.countries)) for _ in range(6)]
    (_, top_last), (_, top_nat) = players[0]
    (_, p2_last), (_, p2_nat) = players[2]
    head = f"TENNIS - RESULTS OF {E(tournament.upper(), 'MISC')} ."
    lines = []
    for i in range(0, 6, 2):
        (a, _), (ac, _) = players[i]
        (b, _), (bc, _) = players[i + 1]
        lines.append(f"{E(a, 'PER')} ( {E(ac, 'LOC')} ) beat {E(b, 'PER')} ( {E(bc, 'LOC')} ) "
                     f"6-{r.randint(0, 4)} {r.randint(6, 7)}-{r.randint(3, 5)}")
    body = [
        f"{E(city, 'LOC')} {r.randint(1, 28)} June .",
        f"Results from the {E(tournament, 'MISC')} tennis tournament on {r.choice(DAYS)} , "
        f"second round :",
        *lines,
        f"Top seed {E(top_last, 'PER')} needed just over an hour to reach the quarter-finals in "
        f"{E(city, 'LOC')} .",
        f"{E(p2_last, 'PER')} , the {E(p2_nat, 'MISC')} number one , said the heat had made "
        f"conditions difficult for both players .",
        f"The {E(top_nat, 'MISC')} champion {E(top_last, 'PER')} next meets the winner of the "
        f"late match between two qualifiers .",
    ]
    return [head, *body]


KINDS = [football, business, politics, tennis]


def pick(r: random.Random, sentences: list[str], lo: int, hi: int, keep_first: int) -> list[str]:
    """Keep the first ``keep_first`` sentences and an ordered random subset of the rest."""
    rest = sentences[keep_first:]
    k = min(len(rest), r.randint(lo, hi) - keep_first)
    chosen = sorted(r.sample(range(len(rest)), k))
    return sentences[:keep_first] + [rest[i] for i in chosen]


TOKEN = re.compile(r"\[\[(\w+)\|([^\]]+)\]\]|(\S+)")
PUNCT = {",", ".", ":", "(", ")", "\"", "-", "'s"}
FUNCTION = {"the": "DT", "a": "DT", "an": "DT", "in": "IN", "on": "IN", "at": "IN", "of": "IN",
            "for": "IN", "with": "IN", "from": "IN", "after": "IN", "against": "IN",
            "between": "IN", "by": "IN", "near": "IN", "about": "IN", "and": "CC", "but": "CC",
            "to": "TO", "his": "PRP$", "its": "PRP$", "we": "PRP", "us": "PRP", "who": "WP"}


def pos_of(word: str, in_entity: bool) -> str:
    """A rough Penn Treebank POS tag."""
    if word in PUNCT:
        return {"'s": "POS", "-": ":", "\"": "\""}.get(word, word)
    if in_entity:
        return "NNP"
    if re.fullmatch(r"[\d,.\-]+(th)?", word):
        return "CD"
    low = word.lower()
    if low in FUNCTION:
        return FUNCTION[low]
    if low.endswith("ed"):
        return "VBD"
    if low.endswith("ly"):
        return "RB"
    if word[0].isupper():
        return "NNP"
    return "NNS" if low.endswith("s") else "NN"


def chunk_of(pos: str, prev_pos: str, prev_chunk: str) -> str:
    """A rough IOB2 chunk tag from the POS sequence."""
    np_tags = {"NN", "NNS", "NNP", "NNPS", "DT", "CD", "PRP", "PRP$", "POS", "JJ"}
    if pos in np_tags:
        return "I-NP" if prev_pos in np_tags and prev_chunk.endswith("NP") else "B-NP"
    if pos.startswith("VB"):
        return "I-VP" if prev_pos.startswith("VB") else "B-VP"
    if pos in {"IN", "TO"}:
        return "B-PP"
    if pos == "RB":
        return "B-ADVP"
    return "O"


def to_rows(sentence: str) -> list[tuple[str, str, str, str]]:
    """Tokenise a marked-up template sentence into CoNLL rows."""
    rows = []
    prev_pos, prev_chunk = "", "O"
    for m in TOKEN.finditer(sentence):
        if m.group(3):
            words, typ = [m.group(3)], None
        else:
            words, typ = m.group(2).split(), m.group(1)
        for i, word in enumerate(words):
            ner = "O" if typ is None else f"{'B' if i == 0 else 'I'}-{typ}"
            pos = pos_of(word, typ is not None)
            chunk = chunk_of(pos, prev_pos, prev_chunk)
            rows.append((word, pos, chunk, ner))
            prev_pos, prev_chunk = pos, chunk
    return rows


def make_split(split: str, n_docs: int, seed: int) -> str:
    """Generate one split as CoNLL text."""
    rng = random.Random(f"{seed}-{split}")
    world = World(rng, split)
    out = []
    for d in range(n_docs):
        kind = KINDS[d % len(KINDS)] if d < len(KINDS) else rng.choice(KINDS)
        out.append("-DOCSTART- -X- -X- O\n\n")
        for sentence in kind(world):
            out.append("".join(" ".join(row) + "\n" for row in to_rows(sentence)) + "\n")
    return "".join(out)


def main() -> None:
    """Write train, dev and test files."""
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path,
                        default=Path(__file__).resolve().parents[1] / "docgraph/data/sample")
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for split, n in (("train", 50), ("dev", 12), ("test", 12)):
        (args.out / f"{split}.txt").write_text(make_split(split, n, args.seed), encoding="utf-8")


if __name__ == "__main__":
    main()
