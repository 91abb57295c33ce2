"""``barsym score FILE... [--goal ITEM] [START] [--scores simulator|llm|both] [--t 5] [--k 3] [--format json]``.

Per step of each plan, BAR's 1-10 score from the simulator (with the reason:
which step fails, how soon, of what kind) and from the model, their minimum
(``both``), and the anchor pairs each source picks at ``--t``. With several
files, the cross-check over all of them follows: how well the model's scores
agree with the simulator's (Spearman, precision and recall of its anchors).

Exit status: 0 scores printed, 2 unusable input (an unreadable or empty
file, a bad option, a model that cannot be used).
"""

from __future__ import annotations

import argparse
import json
import sys

from ..consistency import ConsistencyConfig
from ..consistency.report import ScoreSheet, crosscheck_text, score_text
from ..validation import Validator
from .common import UsageError, add_format
from .llm_options import add_model_arguments, backend_from, model_settings
from .options import add_model, read_model
from .plan_files import PlanFiles, add_plan_file_arguments, plan_inputs
from .state_options import add_state_arguments

HELP = "score every step 1-10 (simulator and LLM) and show the anchors"
DESCRIPTION = (
    "BAR's step scores (1: the next steps are likely wrong; 10: they are right) "
    "from the simulator's rollout and from the model, and the anchors they pick."
)


def add_arguments(p) -> None:
    add_plan_file_arguments(p)
    add_model(
        p,
        ConsistencyConfig,
        skip=set(ConsistencyConfig.model_fields) - {"scores", "score_method", "t", "k"},
        defaults={"scores": "both"},
    )
    add_format(
        p, "text|json", "text: a table per plan (default); json: one object, plans and the cross-check", json_alias=True
    )
    add_state_arguments(p)
    add_model_arguments(p, "LLM (for --scores llm|both)")


def run(args: argparse.Namespace) -> int:
    config = read_model(args, ConsistencyConfig, scores="both")
    kb, goal, start, rules = plan_inputs(args)
    scorer = None
    if config.scores.value != "simulator":
        from ..reasoning.scoring.step_scorer import LLMStepScorer

        llm = model_settings(args)
        try:
            backend = backend_from(llm, kb, args=args)
        except UsageError as exc:  # no model here: the simulator still scores every step
            raise UsageError(f"{exc}; or --scores simulator to score with the simulator alone, no model") from None
        try:
            scorer = LLMStepScorer(
                backend, seed=llm.seed, temperature=llm.temperature, method=config.score_method, rules=rules
            )
        except ValueError as exc:  # a probability method on a server that gives none
            raise UsageError(f"--score-method: {exc}") from None
    sheet, files = ScoreSheet(Validator(kb, rules), config, scorer), PlanFiles(args.files)
    for path, plan in files:
        record = sheet.add(path, plan, goal(plan), start)
        if args.format != "json":
            sys.stdout.write(score_text(record))
    summary = sheet.crosscheck()
    if args.format == "json":
        print(json.dumps({"plans": sheet.records, "crosscheck": summary}, indent=2))
    elif summary is not None and len(sheet.records) > 1:
        print(crosscheck_text(summary))
    return 2 if files.unusable else 0
