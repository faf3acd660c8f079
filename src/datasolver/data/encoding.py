"""Which encoding a text table file is in: chosen by evidence among UTF-8, GB18030 and Windows-1252.

A byte-order mark settles UTF-8 or UTF-16, and a file that decodes as UTF-8 is UTF-8. Otherwise
three readings compete, each scored on the file's lines that hold non-ASCII bytes (at most
`EVIDENCE_BYTES` of them):

- **UTF-8 with a few bad bytes**: the share of well-formed multibyte sequences among all non-ASCII
  ones. A damaged UTF-8 file keeps most of them; other encodings form almost none.
- **GB18030** (which contains GBK): the share of characters that common Chinese text is made of
  (the GB2312 characters and the punctuation of CJK text: ’ “ ” – … 、 。 full-width forms). GB18030
  decodes almost any byte string, so a Windows-1252 file read as GB18030 becomes rare ideographs
  (`Récollet` → `R閏ollet`: `é` and the `c` after it make one character outside GB2312).
- **Windows-1252** (Latin-1 where it leaves bytes undefined): the share of accented letters inside
  words that are mostly ASCII letters (`Récollet`, `Montréal`, `à`), plus common typographic symbols
  (’ “ – € £ ° ±). GB18030 text read this way gives runs of accented letters (`ÖÐÎÄ`).

The first reading whose share is at least one half wins, GB18030 before Windows-1252 when both do
and its share is no lower (what this engine did before: Chinese files keep loading as they did); a
GB18030 reading must also decode the whole file. When no reading is convincing the file is read as
UTF-8 with the bad bytes replaced by U+FFFD, and said so. `--encoding` overrides the choice.

Every step is linear in the bytes it reads, so no file can hold a command: the evidence lines are
found by searching for a non-ASCII byte and taking its line whole (`_NonAsciiLines`; a regular
expression for "a line holding a high byte" had restarted at every position of a long line without
one: a 48 KiB header-and-one-line file took 20-40 s, holding the GIL), and the stop flag (Ctrl-C, a
timeout, a task's deadline) is seen every CHUNK bytes and between the readings' scores.
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from datasolver.data.errors import DataError, SourceStopped

CHUNK = 1 << 20  # read at a time; the stop flag is seen between chunks
EVIDENCE_BYTES = 2 << 20  # non-ASCII lines collected as evidence (the file is read until this much is found)
SCAN_LIMIT = 256 << 20  # how far into a file the evidence is looked for
WINNING_SHARE = 0.5
_HIGH_BYTE = re.compile(rb"[\x80-\xff]")
_WORD = re.compile(r"[^\W\d_]+")
# Typographic symbols a Western file plausibly holds (Windows-1252's extra characters and Latin-1's common ones).
_WESTERN_SYMBOLS = frozenset("’‘“”„‚–—…•€£¥¢°±²³µ·×÷«»¿¡§©®™¼½¾‰†‡\u00a0")
# Punctuation and forms of CJK text: General Punctuation, CJK Symbols and Punctuation, full-width forms.
_CJK_PUNCTUATION = ((0x2000, 0x206F), (0x3000, 0x303F), (0xFF00, 0xFFEF))

Stop = Callable[[], bool]

LABELS = {"utf-8": "UTF-8", "utf-8-sig": "UTF-8", "utf-16": "UTF-16", "gb18030": "GB18030", "cp1252": "Windows-1252",
          "latin-1": "Latin-1"}


@dataclass(frozen=True)
class EncodingChoice:
    """The encoding a file is decoded with (`codec`, a Python codec name), whether some bytes
    need replacing, and the sentence a load note says about it ('' when there is nothing to say)."""

    codec: str
    replaced: bool = False
    evidence: str = ""

    @property
    def label(self) -> str:
        return LABELS.get(self.codec, self.codec)

    @property
    def is_utf8(self) -> bool:
        return self.codec in ("utf-8", "utf-8-sig") and not self.replaced


def check_codec(name: str) -> str:
    """A Python codec name for what a person typed (`latin1`, `GBK`, `cp1252`); DataError when unknown."""
    try:
        return codecs.lookup(name).name
    except LookupError as exc:
        raise DataError(f"unknown encoding {name!r}: use a name Python knows, e.g. utf-8, gb18030, cp1252, latin-1") \
            from exc


def bom_codec(head: bytes) -> str | None:
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    return None


def head_codec(head: bytes, whole: bool) -> str:
    """A first guess from a file's head alone (registration reads no more): the BOM, UTF-8 when the
    head decodes as UTF-8 (a character cut at its end allowed unless `whole`), else the evidence
    rule on the head. The load decides on the whole file (`choose_encoding`)."""
    if codec := bom_codec(head):
        return codec
    try:
        codecs.getincrementaldecoder("utf-8")("strict").decode(head, final=whole)
        return "utf-8"
    except UnicodeDecodeError:
        pass
    return _by_evidence(_non_ascii_lines(head), gb_whole=None).codec


def choose_encoding(path: Path, forced: str | None = None, stop: Stop = lambda: False) -> EncodingChoice:
    """The encoding of the file at `path` (see the module docstring); `forced` skips the choice."""
    with open(path, "rb") as fh:
        head = fh.read(4)
    if forced:
        codec = check_codec(forced)
        if _decodes(path, codec, stop):
            return EncodingChoice(codec)
        return EncodingChoice(codec, True, f"bytes that are not {LABELS.get(codec, codec)} were replaced by U+FFFD")
    if codec := bom_codec(head):
        if _decodes(path, codec, stop):
            return EncodingChoice(codec)
        return EncodingChoice(codec, True, "undecodable bytes replaced by U+FFFD")
    if _decodes(path, "utf-8", stop):
        return EncodingChoice("utf-8")
    return _by_evidence(_collect_evidence(path, stop), gb_whole=lambda: _decodes(path, "gb18030", stop),
                        cp1252_whole=lambda: _decodes(path, "cp1252", stop), stop=stop)


@dataclass
class _Scores:
    utf8: float
    gb: float
    western: float
    example: str


def _by_evidence(lines: bytes, gb_whole: Callable[[], bool] | None,
                 cp1252_whole: Callable[[], bool] | None = None, stop: Stop = lambda: False) -> EncodingChoice:
    scores = _score(lines, stop)
    if scores.utf8 >= WINNING_SHARE:
        return EncodingChoice("utf-8", True, "undecodable bytes replaced by U+FFFD (the rest of the file is UTF-8)")
    gb_wins = scores.gb >= WINNING_SHARE and scores.gb >= scores.western
    if gb_wins and (gb_whole is None or gb_whole()):
        return EncodingChoice("gb18030", False, "decoded as GB18030: the file is not UTF-8, and its text reads as Chinese")
    if scores.western >= WINNING_SHARE:
        codec = "cp1252" if cp1252_whole is None or cp1252_whole() else "latin-1"
        seen = f" (e.g. {scores.example!r})" if scores.example else ""
        return EncodingChoice(codec, False, f"decoded as {LABELS[codec]}: the file is not UTF-8, and its accented "
                                            f"letters read as Western text{seen}; --encoding chooses another")
    return EncodingChoice("utf-8", True, "undecodable bytes replaced by U+FFFD (neither UTF-8, GB18030 nor "
                                         "Windows-1252 fits; --encoding chooses one)")


def _score(lines: bytes, stop: Stop = lambda: False) -> _Scores:
    """Each reading's share of plausible non-ASCII characters in `lines` (0 when it has none). Up to
    about a second a reading on EVIDENCE_BYTES: the stop flag is seen between readings."""
    text8 = lines.decode("utf-8", errors="replace")
    bad8 = text8.count("\ufffd")
    good8 = sum(1 for ch in text8 if ord(ch) > 127) - bad8
    _check(stop)
    gb_text = lines.decode("gb18030", errors="replace")
    gb_chars = [ch for ch in gb_text if ord(ch) > 127]
    gb_good = sum(1 for ch in gb_chars if _common_chinese(ch))
    _check(stop)
    western_text = lines.decode("cp1252", errors="replace").replace("\ufffd", "\x81")
    good_w, total_w, example = _western(western_text)
    return _Scores(_share(good8, good8 + bad8), _share(gb_good, len(gb_chars)), _share(good_w, total_w), example)


def _check(stop: Stop) -> None:
    if stop():
        raise SourceStopped("stopped while choosing the encoding")


def _share(good: int, total: int) -> float:
    return good / total if total else 0.0


def _common_chinese(ch: str) -> bool:
    code = ord(ch)
    if any(lo <= code <= hi for lo, hi in _CJK_PUNCTUATION):
        return True
    try:
        ch.encode("gb2312")
    except UnicodeEncodeError:
        return False
    return True


def _western(text: str) -> tuple[int, int, str]:
    """(plausible non-ASCII characters, all of them, the first plausible word) of a Western reading."""
    good = 0
    example = ""
    for match in _WORD.finditer(text):
        word = match.group()
        foreign = sum(1 for ch in word if ord(ch) > 127)
        if not foreign:
            continue
        ascii_letters = len(word) - foreign
        if ascii_letters >= foreign or len(word) == 1 and word.islower() and _latin_letter(word):
            good += foreign
            example = example or word
    total = sum(1 for ch in text if ord(ch) > 127)
    good += sum(1 for ch in text if ord(ch) > 127 and ch in _WESTERN_SYMBOLS)
    return good, total, example


def _latin_letter(word: str) -> bool:
    return all(ord(ch) < 128 or "LATIN" in unicodedata.name(ch, "") for ch in word)


def _non_ascii_lines(raw: bytes) -> bytes:
    """The lines of `raw` that hold a non-ASCII byte, joined by newlines (at most EVIDENCE_BYTES)."""
    lines = _NonAsciiLines(EVIDENCE_BYTES)
    lines.feed(raw)
    return lines.result()


class _NonAsciiLines:
    """The lines holding a non-ASCII byte, collected from bytes fed in chunks, in time linear in the
    bytes fed: each high byte found (one C-level search) takes its whole line at once, and the scan
    goes on after that line. (A regex for "a line holding a high byte" restarted from every position
    of a long line without one: 48 KiB took 20-40 s, holding the GIL.) A line cut by a chunk's end is
    carried over, at most the evidence still wanted of it, so memory stays within `limit`."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.found: list[bytes] = []
        self.size = 0
        self._in_line = False  # a chunk ended inside a line: its bytes so far (capped), and
        self._open: list[bytes] = []
        self._open_bytes = 0
        self._open_high = False  # whether they hold a non-ASCII byte

    @property
    def full(self) -> bool:
        return self.size >= self.limit

    def feed(self, chunk: bytes) -> None:
        start = 0
        if self._in_line:  # the line a previous chunk left open
            nl = chunk.find(b"\n")
            end = len(chunk) if nl < 0 else nl
            self._extend_open(chunk, 0, end)
            if nl < 0:
                return
            self._close_open()
            start = nl + 1
        last = chunk.rfind(b"\n", start)
        body_end = last + 1 if last >= 0 else start  # whole lines end here; the rest stays open
        pos = start
        while not self.full and (high := _HIGH_BYTE.search(chunk, pos, body_end)) is not None:
            line_start = chunk.rfind(b"\n", pos, high.start()) + 1 or pos
            line_end = chunk.find(b"\n", high.start(), body_end)
            self._take(chunk[line_start:line_end])
            pos = line_end + 1
        self._extend_open(chunk, body_end, len(chunk))

    def result(self) -> bytes:
        """The lines found, the unfinished last line included when it holds a high byte."""
        self._close_open()
        return b"\n".join(self.found)[:self.limit]

    def _extend_open(self, chunk: bytes, start: int, end: int) -> None:
        if start >= end:
            return
        self._in_line = True
        room = max(0, self.limit - self.size - self._open_bytes)
        if room:
            piece = chunk[start:min(end, start + room)]
            self._open.append(piece)
            self._open_bytes += len(piece)
        self._open_high = self._open_high or _HIGH_BYTE.search(chunk, start, end) is not None

    def _close_open(self) -> None:
        if self._open_high and not self.full:
            self._take(b"".join(self._open))
        self._in_line, self._open, self._open_bytes, self._open_high = False, [], 0, False

    def _take(self, line: bytes) -> None:
        line = line[:self.limit - self.size]
        self.found.append(line)
        self.size += len(line) + 1


def _collect_evidence(path: Path, stop: Stop) -> bytes:
    """Lines holding non-ASCII bytes, from the start of the file, up to EVIDENCE_BYTES of them
    (looked for in the first SCAN_LIMIT bytes), in time linear in the bytes read; the stop flag is
    seen between chunks of CHUNK bytes."""
    lines = _NonAsciiLines(EVIDENCE_BYTES)
    scanned = 0
    with open(path, "rb") as fh:
        while not lines.full and scanned < SCAN_LIMIT and (chunk := fh.read(CHUNK)):
            if stop():
                raise SourceStopped("stopped while choosing the encoding")
            scanned += len(chunk)
            lines.feed(chunk)
    return lines.result()


def _decodes(path: Path, codec: str, stop: Stop) -> bool:
    decoder = codecs.getincrementaldecoder(codec)(errors="strict")
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(CHUNK):
                if stop():
                    raise SourceStopped("stopped while checking the encoding")
                decoder.decode(chunk)
            decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def transcode(src: Path, dst: Path, choice: EncodingChoice, stop: Stop = lambda: False) -> int:
    """Write `src` decoded with `choice` as UTF-8 to `dst` (replacing what does not decode);
    returns how many characters were replaced."""
    decoder = codecs.getincrementaldecoder(choice.codec)(errors="replace")
    replaced = 0
    with open(src, "rb") as fin, open(dst, "x", encoding="utf-8", newline="") as fout:
        while chunk := fin.read(CHUNK):
            if stop():
                raise SourceStopped("stopped while decoding the file")
            text = decoder.decode(chunk)
            replaced += text.count("\ufffd") if choice.replaced else 0
            fout.write(text)
        text = decoder.decode(b"", final=True)
        replaced += text.count("\ufffd") if choice.replaced else 0
        fout.write(text)
    return replaced
