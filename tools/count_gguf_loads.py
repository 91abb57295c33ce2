"""Count the GGUF loads of a test run: every llama.cpp model load, in pytest's process and its children.

    python tools/count_gguf_loads.py [pytest arguments]     # e.g. -m llm, or nothing for the whole suite

Why: loading the model is the slow part of the tests that use it, and issue 36 asks for at most 9 loads
per full run. The count must include the loads of ``barsym`` commands that tests start as subprocesses,
so the hook is a ``sitecustomize`` on ``PYTHONPATH`` (inherited by the children): it wraps
:class:`barsym.llm.llamacpp.native.NativeModel` when that module is first imported -- not before, so the
tests that check what ``import barsym`` loads see nothing extra -- and appends one line per load (the
test running, from ``PYTEST_CURRENT_TEST``, which children inherit too). The pytest exit status is
passed on; the count and the loads per test file are printed after pytest's own summary. A load that
llama.cpp refuses (the tests that hand it a corrupt or truncated file: it stops at once, nothing is
loaded) is listed apart and not counted; a model that loads and is then refused (an adapter that does
not apply) is counted.
"""

from __future__ import annotations

import collections
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HOOK = """
import importlib.abc, importlib.util, os, sys

class _CountLoads(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "barsym.llm.llamacpp.native":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        loader = spec.loader
        run = loader.exec_module

        def exec_module(module):
            run(module)
            load = module.NativeModel.__init__

            def counted(self, llama_cpp, path, *args, **kwargs):
                outcome = "failed"  # a file llama.cpp refuses (the tests of broken files), or a crash
                try:
                    load(self, llama_cpp, path, *args, **kwargs)
                    outcome = "loaded"
                finally:
                    with open(os.environ["BARSYM_COUNT_LOADS"], "a", encoding="utf-8") as out:
                        test = os.environ.get("PYTEST_CURRENT_TEST", "-").split(" ")[0]
                        name = os.path.basename(str(path))
                        out.write(f"{os.getpid()}\\t{test}\\t{name}\\t{outcome}\\n")

            module.NativeModel.__init__ = counted

        loader.exec_module = exec_module
        return spec

if os.environ.get("BARSYM_COUNT_LOADS"):
    sys.meta_path.insert(0, _CountLoads())
"""


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="barsym-loads-") as scratch:
        (Path(scratch) / "sitecustomize.py").write_text(HOOK, encoding="utf-8")
        record = Path(scratch) / "loads.tsv"
        record.touch()
        env = dict(os.environ, BARSYM_COUNT_LOADS=str(record))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (scratch, env.get("PYTHONPATH")) if p)
        status = subprocess.call([sys.executable, "-m", "pytest", *argv], env=env)
        loads = [line.split("\t") for line in record.read_text(encoding="utf-8").splitlines() if line]
    done = [test for _, test, _, outcome in loads if outcome == "loaded"]
    refused = [test for _, test, _, outcome in loads if outcome != "loaded"]
    print(f"\nGGUF loads in this run: {len(done)}")
    for name, n in collections.Counter(test.split("::")[0] for test in done).most_common():
        print(f"  {n:3d}  {name}")
    if refused:
        print(f"Attempts on files llama.cpp refused (broken-file tests; not loads): {len(refused)}")
        for name, n in collections.Counter(test.split("::")[0] for test in refused).most_common():
            print(f"  {n:3d}  {name}")
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
