"""Options and progress display shared by ``barsym plan`` and ``barsym eval``.

The LLM planners take the same settings in both commands, and both must turn a
bad setting (a model path that is not there, a file that is not a GGUF, a
server URL nothing answers at) into one line on stderr and exit status 2
before any planning starts, never a traceback. That is done here, once.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from ..kb import KnowledgeBase
from ..eval.spec import server_backend
from ..planner import make_planner
from ..reasoning.bar_decomposer import DEFAULT_MODE, MODES, RETRY_TEMPERATURE
from ..planner.registry import FORWARD_PLANNERS, LLM_PLANNERS
from ..planner.selector import SELECTORS
from ..planner.registry import STAND_INS
from .common import UsageError, escape_controls, number_option as _number, raw_stream, require_llm_extra

#: llama.cpp's sampler seed is a 32-bit unsigned integer; a larger one overflows in the binding or the server
MAX_SEED = 2**32 - 1


def add_llm_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("LLM planners (bar, llm-only, bar-sc, deps, cot)")
    group.add_argument("--model", metavar="PATH",
                       help="GGUF model to run in-process (default: $BARSYM_MODEL, else the packaged SmolLM2-135M)")
    group.add_argument("--llm-stand-in", metavar="NAME",
                       help="no model: a chooser answers under the same grammar, to show what the model adds: "
                            f"{', '.join(STAND_INS)} (barsym.llm.stand_in); tables name the planner bar[NAME]")
    group.add_argument("--llm-url", metavar="URL",
                       help="OpenAI-compatible server instead of an in-process model, e.g. http://127.0.0.1:8080")
    group.add_argument("--llm-mode", choices=list(MODES), default=DEFAULT_MODE,
                       help="graph: only steps that can make the goal; vocab: any step over the game's "
                            f"vocabulary (default {DEFAULT_MODE})")
    group.add_argument("--max-retries", default="2", metavar="N",
                       help="answers sent back with the verifier's objections before the symbolic fallback (default 2)")
    group.add_argument("--seed", default="0", metavar="N", help="sampling seed (default 0)")
    group.add_argument("--temperature", default="0", metavar="T", help="sampling temperature; 0 is greedy (default)")
    group.add_argument("--retry-temperature", default=str(RETRY_TEMPERATURE), metavar="T",
                       help="sampling temperature after a refused answer, so a retry can differ from it "
                            f"(seeded, so still reproducible; default {RETRY_TEMPERATURE:g})")
    group.add_argument("--threads", metavar="N", help="CPU threads for the in-process model (default: all cores)")
    group.add_argument("--no-facts", action="store_true",
                       help="leave the knowledge base's facts out of the prompts (the papers' prompts; by default "
                            "bar is told how its goal is made, deps and cot how every item of the task is)")
    group.add_argument("--llm-timeout", default="30", metavar="S",
                       help="seconds to wait for a server reply (default 30)")
    group.add_argument("--feedback-world", metavar="NAME",
                       help="deps: the world its plans are executed in between rounds, stochastic (default) or "
                            "deterministic (--rounds N sets its replanning rounds, 0 to 20, default 5)")
    group.add_argument("--selector", metavar="NAME",
                       help="deps: who picks among a plan's steps that can run at once when it is executed: "
                            "order (the plan as written, default), random, graph (the crafting graph's cost) or "
                            "horizon (DEPS' learned horizon model)")
    group.add_argument("--api-key", metavar="KEY",
                       help="bearer token for --llm-url (default: $OPENAI_API_KEY)")
    group.add_argument("--llm-model", metavar="NAME",
                       help="model name sent to --llm-url (servers that host several models need it)")


#: DEPS' replanning rounds at most from the command line; each costs two calls, and the context holds ~3
MAX_DEPS_ROUNDS = 20


def deps_options(name: str, args: argparse.Namespace) -> dict:
    """``--rounds``, ``--feedback-world`` and ``--selector`` for the deps planner.

    ``--rounds`` is state consistency's otherwise. ``--selector`` given to
    another model planner is named in a warning, as the options a planner
    without a model would not use are (:func:`ignored_options`).
    """
    world = getattr(args, "feedback_world", None)
    selector = getattr(args, "selector", None)
    if selector is not None and selector not in SELECTORS:  # checked here: one line, as --feedback-world's
        raise UsageError(f"--selector must be one of {', '.join(SELECTORS)}, got {selector!r}")
    if name != "deps":
        if world is not None:
            raise UsageError("--feedback-world applies to --planner deps only")
        if selector is not None and name in LLM_PLANNERS:
            print(f"barsym: warning: the {name} planner executes no plan; ignored: --selector", file=sys.stderr)
        return {}
    if world is not None and world not in ("stochastic", "deterministic"):
        raise UsageError(f"--feedback-world must be stochastic or deterministic, got {world!r}")
    rounds = _number(getattr(args, "rounds", None), "--rounds", int, 0, MAX_DEPS_ROUNDS)
    return {"deps_rounds": rounds, "feedback_world": world, "selector": selector}


def llm_options(args: argparse.Namespace) -> dict:
    """The planner options the command line gives, checked (UsageError on bad values)."""
    if args.model is not None and args.llm_url is not None:
        raise UsageError("give either --model (in-process) or --llm-url (server), not both")
    stand_in = getattr(args, "llm_stand_in", None)
    if stand_in is not None and stand_in not in STAND_INS:
        raise UsageError(f"--llm-stand-in must be one of {', '.join(STAND_INS)}, got {stand_in!r}")
    if stand_in is not None and (args.model is not None or args.llm_url is not None):
        raise UsageError("--llm-stand-in replaces the model; drop --model/--llm-url")
    return {
        **({"llm_stand_in": stand_in} if stand_in else {}),
        "model": args.model,
        "llm_url": args.llm_url,
        "llm_mode": args.llm_mode,
        "max_retries": _number(args.max_retries, "--max-retries", int, 0, 20),
        "seed": _number(args.seed, "--seed", int, 0, MAX_SEED),
        "temperature": _number(args.temperature, "--temperature", float, 0, 5),
        "retry_temperature": _number(args.retry_temperature, "--retry-temperature", float, 0, 5),
        "threads": _number(args.threads, "--threads", int, 1, 512),
        "timeout": _number(args.llm_timeout, "--llm-timeout", float, 0.1, 3600),
        **({"facts": False} if getattr(args, "no_facts", False) else {}),
        **_server_options(args),
    }


def _server_options(args: argparse.Namespace) -> dict:
    """``--api-key`` (or ``$OPENAI_API_KEY``) and ``--llm-model``: only for a server, and only when set."""
    key = getattr(args, "api_key", None)  # $OPENAI_API_KEY is read where the backend is built
    model = getattr(args, "llm_model", None)
    out = {}
    if args.llm_url is None:
        for option, value in (("--api-key", getattr(args, "api_key", None)), ("--llm-model", model)):
            if value is not None:
                raise UsageError(f"{option} is for an OpenAI-compatible server; give --llm-url too")
        return out
    if key:
        out["api_key"] = key
    if model:
        out["llm_model"] = model
    return out


#: what the LLM options are when the user leaves them alone (to tell which ones were given)
_DEFAULTS = {"model": None, "llm_url": None, "llm_mode": DEFAULT_MODE, "max_retries": "2", "seed": "0",
             "temperature": "0", "retry_temperature": str(RETRY_TEMPERATURE), "threads": None,
             "llm_timeout": "30", "api_key": None, "llm_model": None, "llm_stand_in": None}


def ignored_options(args: argparse.Namespace) -> list[str]:
    """The LLM and consistency options given on the command line (for a planner that takes none)."""
    given = [f"--{name.replace('_', '-')}" for name, default in _DEFAULTS.items()
             if hasattr(args, name) and getattr(args, name) != default]
    for name in ("anchors", "scores", "repairer", "t", "k", "rounds", "selector"):
        if getattr(args, name, None) is not None:
            given.append(f"--{name}")
    for flag in ("no_fallback", "no_facts"):
        if getattr(args, flag, False):
            given.append(f"--{flag.replace('_', '-')}")
    return given


def planner_options(name: str, kb: KnowledgeBase, args: argparse.Namespace, rules=None) -> dict:
    """The planner's options from the command line, as plain data (a worker rebuilds the planner from them).

    Options the planner would not use are named in one warning line instead of being dropped unseen.
    """
    from .consistency_options import consistency_options  # bar-sc and --consistency (BAR module b)

    deps = deps_options(name, args)
    if deps:  # --rounds counts DEPS' rounds here, not state consistency's
        args = argparse.Namespace(**{**vars(args), "rounds": None})
    extra = {**consistency_options(args), **deps}
    if name in FORWARD_PLANNERS and getattr(args, "llm_mode", None) not in (None, DEFAULT_MODE):
        raise UsageError(f"--llm-mode applies to bar and llm-only; the {name} planner's grammar is always the "
                         f"game's vocabulary")
    if name not in LLM_PLANNERS and not extra.get("consistency"):
        ignored = ignored_options(args)
        if ignored:
            print(f"barsym: warning: the {name} planner asks no model; ignored: {', '.join(ignored)}",
                  file=sys.stderr)
        return {}
    if name in FORWARD_PLANNERS and rules is not None and rules.name != kb.default_profile:
        raise UsageError(f"the {name} planner's grammar and checks play by the {kb.default_profile} rules; for "
                         f"--rules {rules.name} use --planner bar, llm-only, bar-sc or symbolic")
    return {**llm_options(args), **{k: v for k, v in extra.items() if v is not None}}


def make_from_options(name: str, kb: KnowledgeBase, options: dict, progress=None, rules=None, command: str = "",
                      backend=None):
    """``make_planner`` with checked options; model and server problems become UsageError."""
    if not options and backend is None:
        return make_planner(name, kb, rules=rules)
    from ..llm import LLMError  # the LLM package is only imported for the LLM planners

    try:
        in_process = backend is None and not options.get("llm_url")
        if backend is None:
            backend = server_backend(options)
        return make_planner(name, kb, progress=progress, rules=rules, command=command or "barsym",
                            **({"backend": backend} if backend is not None else {}), **options)
    except LLMError as exc:
        if in_process:  # a light install (no [llm] extra): one line naming the extra, not a package's hint
            require_llm_extra(f"the {name} planner", options.get("model"))
        raise UsageError(" ".join(str(exc).split())) from None
    except ValueError as exc:  # a URL that is not one, conflicting settings
        raise UsageError(str(exc)) from None


def build_planner(name: str, kb: KnowledgeBase, args: argparse.Namespace, progress=None, rules=None):
    """``make_planner`` with the command line's options; model and server problems become UsageError."""
    command = " ".join(["barsym", *getattr(args, "argv", [])]) or "barsym"
    return make_from_options(name, kb, planner_options(name, kb, args, rules), progress, rules, command)


class TerminalProgress:
    """One self-overwriting status line on stderr, only when stderr is a terminal.

    It draws from the planners' :class:`~barsym.reasoning.progress.ProgressEvent`:
    from the first moment (loading the model, preparing its prompt), then per
    goal -- "goal 4 of about 18: 1 stone pickaxe" -- with the LLM counters so
    far. A silent terminal during a fresh start or a 53-task evaluation looks
    like a hang; redirected output stays clean.
    """

    def __init__(self, stream: TextIO | None = None):
        self.stream = raw_stream(stream or sys.stderr)  # its own control sequences must reach the terminal
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.label = ""
        self._shown = False

    def task(self, label: str) -> None:
        self.label = label

    def __call__(self, event) -> None:
        if not self.enabled:
            return
        where = f"{self.label}: " if self.label else ""
        if event.phase in ("loading", "priming"):
            text = f"{where}{event.text} ..."
        else:
            of = f" of about {event.estimate}" if event.estimate else ""
            s = event.stats
            counts = (f" ({s.llm_calls} LLM calls, {s.accepted_first_try + s.accepted_after_feedback} accepted, "
                      f"{s.fallbacks} fallbacks)" if s is not None else "")
            text = f"{where}goal {event.number}{of}: {event.text}{counts}"
        self.stream.write("\r\033[K" + escape_controls(text)[:150])  # task names come from the dataset
        self.stream.flush()
        self._shown = True

    def bar(self, done: int, total: int, label: str = "", width: int = 30) -> None:
        """A bar for long loops over tasks (``memory build``): ``[#####-----] 12/53 label``; terminal only."""
        if not self.enabled or total <= 0:
            return
        filled = round(width * done / total)
        text = f"[{'#' * filled}{'-' * (width - filled)}] {done}/{total} {label}"
        self.stream.write("\r\033[K" + escape_controls(text)[:150])
        self.stream.flush()
        self._shown = True

    def clear(self) -> None:
        if self.enabled and self._shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._shown = False
