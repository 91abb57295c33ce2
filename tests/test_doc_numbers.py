"""The numbers of README and docs/results agree with the run files they come from (tools/doc_numbers.py)."""

from __future__ import annotations

import pytest
from tool_modules import tool

from testdata import REPO

NUMBERS = tool("doc_numbers")


def page(path: str) -> str:
    return (REPO / path).read_text(encoding="utf-8")


def test_every_declared_number_agrees_with_its_run_file():
    problems = NUMBERS.disagreements()
    assert problems == [], "\n".join(problems)


def test_declared_numbers_are_there_to_check():
    """The check is not empty: the BAR table is a declared page and taught-model.md has inline numbers."""
    assert NUMBERS.TABLES["bar-table"].page == "docs/results/bar-table.md"
    assert len(NUMBERS.INLINE.findall(page("docs/results/taught-model.md"))) >= 10


@pytest.mark.parametrize(
    ("path", "old", "new", "said"),
    [
        (
            "docs/results/bar-table.md",
            "| methods | cot [taught] | 93.41 | 92.67 |",
            "| methods | cot [taught] | 93.41 | 92.76 |",
            "'92.76' where the run files give '92.67'",
        ),
        (
            "docs/results/taught-model.md",
            "s5j-cot-bar53 executable-->46 / 53",
            "s5j-cot-bar53 executable-->47 / 53",
            "'**47' where the run files give '**46'",
        ),
    ],
)
def test_a_number_that_disagrees_with_its_run_file_is_named(path, old, new, said):
    text = page(path)
    assert text.count(old) == 1

    def read(name: str) -> str:
        return text.replace(old, new) if name == path else page(name)

    problems = NUMBERS.disagreements(read)
    assert len(problems) == 1 and problems[0].startswith(f"{path}: {said}"), problems


def test_a_new_table_is_one_render_function_and_one_declaration():
    def render() -> str:
        numbers = NUMBERS.load("s5j-cot-bar53")
        return f"| run | executable |\n| --- | ---: |\n| s5j cot | {NUMBERS.FIELDS['executable'](numbers)} |"

    tables = {"toy": NUMBERS.Table("docs/results/toy.md", render)}
    body = "| run | executable |\n| --- | ---: |\n| s5j cot | {} |\n"
    toy = "# Toy\n\n<!-- numbers: toy -->\n" + body + "<!-- /numbers: toy -->\n"
    pages: dict[str, str] = {"docs/results/toy.md": toy.format("46 / 53")}
    assert NUMBERS.disagreements(pages.__getitem__, tables, pages=list(pages)) == []
    pages["docs/results/toy.md"] = toy.format("45 / 53")
    assert NUMBERS.disagreements(pages.__getitem__, tables, pages=list(pages)) == [
        "docs/results/toy.md: '45' where the run files give '46'; "
        "rerun `python tools/doc_numbers.py --write` after the run that changed it"
    ]
    without = {"docs/results/toy.md": "# Toy\n"}
    with pytest.raises(LookupError, match="no '<!-- numbers: toy -->' block"):
        NUMBERS.disagreements(without.__getitem__, tables, pages=list(without))


def test_an_unknown_field_is_named():
    pages = {"x.md": "<!--n s5j-cot-bar53 nosuch-->1<!--/n-->"}
    with pytest.raises(LookupError, match="unknown field 'nosuch'"):
        NUMBERS.disagreements(pages.__getitem__, {}, pages=list(pages))


def test_a_step_score_auc_is_read_from_its_bench_file():
    """``<!--auc FILE METHOD-->``: the AUC of one row of a bench_step_scores JSON; a page that says another is
    named, and a method the file has no row of is one line naming the methods it has."""
    shown = f"{NUMBERS.bench_rows('knows/recall-check-labelled')['recall-check']['auc']:.3f}"
    other = "0.123" if shown != "0.123" else "0.321"
    marker = "<!--auc knows/recall-check-labelled recall-check-->{}<!--/auc-->"
    pages = {"x.md": f"AUC {marker.format(shown)} here\n"}
    assert NUMBERS.disagreements(pages.__getitem__, {}, pages=list(pages)) == []
    pages["x.md"] = f"AUC {marker.format(other)} here\n"
    (problem,) = NUMBERS.disagreements(pages.__getitem__, {}, pages=list(pages))
    assert problem.startswith(f"x.md: '{other}' where the run files give '{shown}'")
    pages["x.md"] = "<!--auc knows/recall-check-labelled nosuch method-->1<!--/auc-->"
    with pytest.raises(LookupError, match="no row of method 'nosuch method'; it has simulator"):
        NUMBERS.disagreements(pages.__getitem__, {}, pages=list(pages))
