"""Write tests/data/paraphrases.json: BAR's 53 expert plans told in varied prose, with the expected steps.

    python bench/make_paraphrases.py [--seed 23] [-o tests/data/paraphrases.json]

The set ``barsym parse`` is measured on (``bench/bench_parse.py``). Every plan is
one BAR task's expert plan; each step is told in words drawn from phrase lists
written for this set: varied verbs ("chop", "gather", "put together", "cook"),
counts as digits, as words ("twenty one", "a", "a dozen") or left out (about one
step in six, never the goal's), item names with spaces, plurals or a typo
(about one name in eight), some items by another name ("workbench", "cobble", "iron";
about one in seven of those that have one, :data:`SYNONYMS`), the tool said or not, and the steps joined by
commas, "then", "next", "after that", new lines. Seeded, so the file is the
same on every run; the file, not this script, is what the tests and the bench read.

Each entry: ``task``, ``goal``, ``text``, ``expected`` (the expert steps in
barsym's notation) and ``open_counts`` (the steps whose count the text leaves
out: no parser can read those, so the bench also scores with them set aside).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from barsym.eval.dataset import load_dataset  # noqa: E402
from barsym.kb import load_kb  # noqa: E402
from barsym.model import Step, StepType  # noqa: E402

VERBS = {
    "mine": ["mine", "gather", "collect", "get", "dig up", "break", "harvest", "go and mine"],
    "wood": ["chop", "chop down", "cut", "punch", "gather", "collect"],
    "craft": ["craft", "make", "build", "create", "put together", "assemble", "craft up"],
    "smelt": ["smelt", "cook", "melt", "smelt down", "fire"],
    "kill": ["kill", "slay", "hunt"],
    "dig": ["dig down", "dig down", "go down", "descend"],
}
WORDS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
TENS = {2: "twenty", 3: "thirty", 4: "forty", 5: "fifty", 6: "sixty"}
JOINS = [", then ", ". Then ", "; ", ", ", ". Next, ", ", after that ", "\n", " and then ", ". Finally, "]
OPENINGS = ["", "", "First ", "To start, ", "Ok so first "]


def count_words(n: int) -> str:
    if n < 20:
        return WORDS[n]
    tens, units = divmod(n, 10)
    return TENS.get(tens, str(n)) + ("" if units == 0 else " " + WORDS[units]) if tens in TENS else str(n)


def typo(word: str, rng: random.Random) -> str:
    if len(word) < 6:
        return word
    i = rng.randrange(1, len(word) - 2)
    if rng.random() < 0.5:
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]  # two letters swapped
    return word[:i] + word[i + 1 :]  # one dropped


#: what people call some items instead of their names (written for this set); the parser must map these
SYNONYMS = {
    "logs": ["wood", "tree trunks", "logs of wood"],
    "planks": ["wooden planks", "boards", "wood planks"],
    "stick": ["rods", "wooden sticks"],
    "crafting_table": ["workbench", "crafting bench", "table"],
    "cobblestone": ["cobble", "stone blocks", "rocks"],
    "furnace": ["oven", "stone furnace"],
    "iron_ore": ["raw iron", "iron"],
    "iron_ingot": ["iron", "iron bars"],
    "gold_ingot": ["gold", "gold bars"],
    "diamond": ["gems", "diamonds"],
    "redstone": ["redstone dust", "red dust"],
    "wooden_pickaxe": ["wood pick"],
    "stone_pickaxe": ["stone pick"],
    "iron_pickaxe": ["iron pick"],
    "coal": ["coal lumps"],
}


def name(item: str, count: int | None, rng: random.Random) -> str:
    if item in SYNONYMS and rng.random() < 0.15:
        return rng.choice(SYNONYMS[item])
    words = item.split("_")
    if count not in (None, 1) and not words[-1].endswith("s") and rng.random() < 0.6:
        words[-1] += "es" if words[-1].endswith(("sh", "ch")) else "s"
    if rng.random() < 0.13:
        j = max(range(len(words)), key=lambda k: len(words[k]))
        words[j] = typo(words[j], rng)
    return " ".join(words)


def amount(count: int, rng: random.Random, may_drop: bool) -> str | None:
    """The count as the text says it; None: left out."""
    if may_drop and rng.random() < 0.17:
        return None
    if count == 1:
        return rng.choice(["a", "one", "1", "a"])
    if count == 12 and rng.random() < 0.5:
        return "a dozen"
    return str(count) if rng.random() < 0.45 else count_words(count)


def tell(step: Step, last: bool, rng: random.Random) -> tuple[str, bool]:
    """One step in words, and whether its count was left out."""
    tool = ""
    if step.tool and rng.random() < 0.6:
        tool = (
            " "
            + rng.choice(["with the", "using the", "with my", "using a", "with a"])
            + " "
            + step.tool.replace("_", " ")
        )
    if step.type is StepType.DIG_DOWN:
        return rng.choice(VERBS["dig"]) + tool, False
    kind = "wood" if step.type is StepType.MINE and step.item in ("logs",) else step.type.value
    verb = rng.choice(VERBS[kind])
    said = amount(step.count or 1, rng, may_drop=not last and step.type is not StepType.KILL)
    item = name(step.item or "", step.count, rng)
    if step.type is StepType.SMELT and rng.random() < 0.3:
        return f"{verb} {said + ' ' if said else ''}{item}" + tool, said is None
    return f"{verb} {said + ' ' if said else 'some ' if rng.random() < 0.5 else ''}{item}{tool}", said is None


def paraphrase(steps: list[Step], rng: random.Random) -> tuple[str, list[int]]:
    parts, open_counts = [], []
    for i, step in enumerate(steps):
        text, dropped = tell(step, i == len(steps) - 1, rng)
        if dropped:
            open_counts.append(i)
        parts.append(text)
    text = rng.choice(OPENINGS) + parts[0]
    for part in parts[1:]:
        join = rng.choice(JOINS)
        text += join + (part[0].upper() + part[1:] if join.rstrip().endswith((".", "\n")) or join == "\n" else part)
    return text + rng.choice([".", "", ".", "!"]), open_counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=23)
    parser.add_argument("-o", "--output", type=Path, default=REPO / "tests" / "data" / "paraphrases.json")
    args = parser.parse_args()
    kb = load_kb()
    rng = random.Random(args.seed)
    entries = []
    for task in load_dataset("bar", kb):
        steps = list(task.reference.steps)
        text, open_counts = paraphrase(steps, rng)
        entries.append(
            {
                "task": task.key,
                "goal": {"item": task.goal.item, "count": task.goal.count},
                "text": text,
                "expected": [str(s) for s in steps],
                "open_counts": open_counts,
            }
        )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(
        json.dumps(
            {"seed": args.seed, "source": "bench/make_paraphrases.py over BAR's expert plans", "plans": entries},
            indent=1,
        )
        + "\n",
        encoding="utf-8",
    )
    print(
        f"wrote {args.output}: {len(entries)} plans, {sum(len(e['expected']) for e in entries)} steps, "
        f"{sum(len(e['open_counts']) for e in entries)} counts left out"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
