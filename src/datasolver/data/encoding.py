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
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from datasolver.data.errors import DataError, SourceStopped

CHUNK = 1 << 20
EVIDENCE_BYTES = 2 << 20  # non-ASCII lines collected as evidence (the file is read until this much is found)
SCAN_LIMIT = 256 << 20  # how far into a file the evidence is looked for
WINNING_SHARE = 0.5
_NON_ASCII_LINE = re.compile(rb"[^\n]*[\x80-\xff][^\n]*")
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
                        cp1252_whole=lambda: _decodes(path, "cp1252", stop))


@dataclass
class _Scores:
    utf8: float
    gb: float
    western: float
    example: str


def _by_evidence(lines: bytes, gb_whole: Callable[[], bool] | None,
                 cp1252_whole: Callable[[], bool] | None = None) -> EncodingChoice:
    scores = _score(lines)
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


def _score(lines: bytes) -> _Scores:
    """Each reading's share of plausible non-ASCII characters in `lines` (0 when it has none)."""
    text8 = lines.decode("utf-8", errors="replace")
    bad8 = text8.count("\ufffd")
    good8 = sum(1 for ch in text8 if ord(ch) > 127) - bad8
    gb_text = lines.decode("gb18030", errors="replace")
    gb_chars = [ch for ch in gb_text if ord(ch) > 127]
    gb_good = sum(1 for ch in gb_chars if _common_chinese(ch))
    western_text = lines.decode("cp1252", errors="replace").replace("\ufffd", "\x81")
    good_w, total_w, example = _western(western_text)
    return _Scores(_share(good8, good8 + bad8), _share(gb_good, len(gb_chars)), _share(good_w, total_w), example)


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
    return b"\n".join(_NON_ASCII_LINE.findall(raw))


def _collect_evidence(path: Path, stop: Stop) -> bytes:
    """Lines holding non-ASCII bytes, from the start of the file, up to EVIDENCE_BYTES of them."""
    found: list[bytes] = []
    size = 0
    scanned = 0
    tail = b""
    with open(path, "rb") as fh:
        while size < EVIDENCE_BYTES and scanned < SCAN_LIMIT and (chunk := fh.read(CHUNK)):
            if stop():
                raise SourceStopped("stopped while choosing the encoding")
            scanned += len(chunk)
            block = tail + chunk
            cut = block.rfind(b"\n") + 1
            block, tail = (block[:cut], block[cut:]) if cut else (b"", block)
            for line in _NON_ASCII_LINE.findall(block):
                found.append(line)
                size += len(line)
        if tail and size < EVIDENCE_BYTES:
            found += _NON_ASCII_LINE.findall(tail)
    return b"\n".join(found)[:EVIDENCE_BYTES]


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
