"""Options of state consistency (BAR module b), shared by ``score``, ``repair``, ``plan`` and ``eval``.

``--anchors``, ``--scores``, ``--t``, ``--k``, ``--repairer``, ``--no-fallback``
and ``--rounds`` configure the module; ``score`` and ``repair`` also take the
model options they need (``--model``, ``--llm-url``, ``--threads``, ``--seed``,
``--temperature``, ``--llm-timeout``), which ``plan`` and ``eval`` already have.
Every bad value is one line and exit status 2 (:class:`UsageError`), and a
model or server that cannot be used is found before any work starts.
"""

from __future__ import annotations

import argparse

from ..consistency import AnchorMethod, RepairerKind, ScoreSource
from ..consistency.anchors import DEFAULT_SCORE_METHOD, ScoreMethod
from ..planner.registry import STAND_INS
from .common import UsageError, require_llm_extra
from .llm_options import MAX_SEED, _number

ANCHORS = [m.value for m in AnchorMethod]
SCORES = [s.value for s in ScoreSource]
SCORE_METHODS = [m.value for m in ScoreMethod]
REPAIRERS = [r.value for r in RepairerKind]


def add_consistency_arguments(parser: argparse.ArgumentParser, *, flag: bool = False,
                              defaults: dict | None = None) -> None:
    """The module's options; ``flag`` adds ``--consistency`` (for ``plan`` and ``eval``)."""
    d = defaults or {}
    group = parser.add_argument_group("state consistency (BAR module b)")
    if flag:
        group.add_argument("--consistency", action="store_true",
                           help="repair the planner's plan forward between anchors (bar-sc always does)")
    group.add_argument("--anchors", choices=ANCHORS, default=d.get("anchors"),
                       help="step-scoring: every step scored below T starts a pair; sliding-window: pairs of K "
                            f"steps at seeded random offsets (default {d.get('anchors', 'step-scoring')})")
    group.add_argument("--scores", choices=SCORES, default=d.get("scores"),
                       help="who scores the steps: the simulator, the LLM, or both (the lower score) "
                            f"(default {d.get('scores', 'simulator; bar-sc: both')})")
    group.add_argument("--score-method", choices=SCORE_METHODS, default=None,
                       help="how the model's scores are read: digit (one generated 1-10), expected (the expected "
                            "digit), yes (P(yes) to 'can this step be done now?'), yes-facts (the same with the "
                            f"state and the step's needs; default {DEFAULT_SCORE_METHOD.value} for an in-process "
                            "model, digit for --llm-url)")
    group.add_argument("--t", metavar="T", default=d.get("t"), help="score threshold of an anchor, 1 to 10 (default 5)")
    group.add_argument("--k", metavar="K", default=d.get("k"),
                       help="steps from a start anchor to its end anchor, and the scores' lookahead (default 3)")
    group.add_argument("--repairer", choices=REPAIRERS, default=d.get("repairer"),
                       help="llm: the model proposes each next step among those that apply; symbolic: the "
                            f"symbolic planner plans what is missing (default {d.get('repairer', 'symbolic; bar-sc: llm')})")
    group.add_argument("--no-fallback", action="store_true",
                       help="the llm repairer without the symbolic fallback for windows it does not finish")
    group.add_argument("--rounds", metavar="N", default=d.get("rounds"),
                       help="repair rounds at most (score, anchor, repair, splice; default 3); with --planner deps, "
                            "DEPS' replanning rounds (0: plan once; default 5)")


def consistency_options(args: argparse.Namespace) -> dict:
    """The module's settings from the command line, checked; None where the planner's default applies."""
    if not hasattr(args, "anchors"):
        return {}
    out = {
        "anchors": args.anchors, "scores": args.scores, "repairer": args.repairer,
        "t": _number(args.t, "--t", int, 1, 10),
        "k": _number(args.k, "--k", int, 1, 50),
        "rounds": _number(args.rounds, "--rounds", int, 1, 20),
        "fallback": False if args.no_fallback else None,
        "score_method": getattr(args, "score_method", None),
    }
    if getattr(args, "consistency", False):
        out["consistency"] = True
    return out


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """The model options of ``score`` and ``repair`` (the planners' retry options do not apply)."""
    group = parser.add_argument_group("LLM (for --scores llm|both and --repairer llm)")
    group.add_argument("--model", metavar="PATH",
                       help="GGUF model to run in-process (default: $BARSYM_MODEL, else the packaged SmolLM2-135M)")
    group.add_argument("--llm-url", metavar="URL", help="OpenAI-compatible server instead of an in-process model")
    group.add_argument("--llm-stand-in", metavar="NAME",
                       help=f"no model: a chooser answers under the same grammar ({', '.join(STAND_INS)})")
    group.add_argument("--threads", metavar="N", help="CPU threads for the in-process model (default: all cores)")
    group.add_argument("--seed", default="0", metavar="N", help="sampling seed, also the sliding window's (default 0)")
    group.add_argument("--temperature", default="0", metavar="T", help="sampling temperature; 0 is greedy (default)")
    group.add_argument("--llm-timeout", default="30", metavar="S", help="seconds to wait for a server reply")


def model_options(args: argparse.Namespace) -> dict:
    if args.model is not None and args.llm_url is not None:
        raise UsageError("give either --model (in-process) or --llm-url (server), not both")
    stand_in = getattr(args, "llm_stand_in", None)
    if stand_in is not None and stand_in not in STAND_INS:
        raise UsageError(f"--llm-stand-in must be one of {', '.join(STAND_INS)}, got {stand_in!r}")
    if stand_in is not None and (args.model is not None or args.llm_url is not None):
        raise UsageError("--llm-stand-in replaces the model; drop --model/--llm-url")
    return {
        **({"llm_stand_in": stand_in} if stand_in else {}),
        "model": args.model, "llm_url": args.llm_url,
        "threads": _number(args.threads, "--threads", int, 1, 512),
        "seed": _number(args.seed, "--seed", int, 0, MAX_SEED),
        "temperature": _number(args.temperature, "--temperature", float, 0, 5),
        "timeout": _number(args.llm_timeout, "--llm-timeout", float, 0.1, 3600),
    }


def backend_from(options: dict):
    """The shared model backend for these settings; a model or server that cannot be used is a UsageError."""
    from ..llm import LLMError
    from ..reasoning.llm_planners import shared_backend

    if options.get("llm_stand_in"):
        from ..llm.stand_in import make_stand_in
        return make_stand_in(options["llm_stand_in"])
    try:
        return shared_backend(options.get("model"), options.get("llm_url"), options.get("threads"),
                              options.get("timeout", 30.0))
    except LLMError as exc:
        if not options.get("llm_url"):  # a light install (no [llm] extra): one line naming the extra
            require_llm_extra("LLM scoring or repair", options.get("model"))
        raise UsageError(" ".join(str(exc).split())) from None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
