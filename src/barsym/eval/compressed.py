"""Run files kept compressed: ``FILE.jsonl.gz`` read and resumed like ``FILE.jsonl``.

Why: the repository keeps the run files its results come from (``docs/results/runs``), and
uncompressed they weighed 34 MB of every clone. gzip keeps each at a tenth.

A compressed run file is a series of gzip members (the gzip format allows any number, and
``gunzip``/``zcat`` read them as one stream): ``gzip FILE.jsonl`` makes one member holding
every line, and ``barsym eval --run FILE.jsonl.gz`` appends one member per line, so a kill
mid-write can only cut off the last member, which reading drops like a cut-off last line
of a plain file. Resuming truncates the file at the end of the last whole member that ends
a line, which is where the plain file would be truncated.

Whether a file is compressed is read from its first two bytes (gzip's magic), so a
compressed file under a plain name is still read; a new file is written compressed when
its name ends in ``.gz``.
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

MAGIC = b"\x1f\x8b"


class CompressedRunError(ValueError):
    """The compressed stream is damaged (not merely cut off by a kill), or too large once uncompressed."""


def is_compressed(data: bytes) -> bool:
    return data[:2] == MAGIC


def wants_compression(path: Path) -> bool:
    """A new run file under this name is written compressed."""
    return Path(path).suffix == ".gz"


def members(data: bytes, limit: int) -> tuple[bytes, list[tuple[int, int]]]:
    """The text of every whole member of ``data``, and for each member (its text's end, its end in ``data``).

    A last member cut off (no gzip trailer: a kill mid-write) is left out. Damage anywhere else,
    or more than ``limit`` bytes of text, is a :class:`CompressedRunError`.
    """
    text = bytearray()
    ends: list[tuple[int, int]] = []
    rest = data
    while rest:
        engine = zlib.decompressobj(wbits=31)
        try:
            piece = engine.decompress(rest, limit + 1 - len(text))
        except zlib.error:  # a kill cuts a member short, it does not change its bytes: this is damage
            raise CompressedRunError("damaged gzip data") from None
        if engine.unconsumed_tail:
            raise CompressedRunError(f"more than {limit // 2**20} MiB once uncompressed")
        if not engine.eof:  # the last member, cut off by a kill: dropped
            break
        text += piece
        rest = engine.unused_data
        ends.append((len(text), len(data) - len(rest)))
        if rest and not is_compressed(rest) and not MAGIC.startswith(rest):  # b"\x1f": a member cut after a byte
            raise CompressedRunError("bytes after the gzip stream that are not gzip")
    return bytes(text), ends


def compressed_line(line: bytes) -> bytes:
    """One line as its own gzip member (no timestamp, so the same line gives the same bytes)."""
    return gzip.compress(line, mtime=0)
