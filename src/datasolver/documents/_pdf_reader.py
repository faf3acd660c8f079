"""Runs in the sandbox, in its own Python process: read PDFs' pages with pdfplumber, within caps.

`python -I _pdf_reader.py IN OUT_DIR`: reads {"pdfs", "caps", "seconds", "seconds_per_pdf"} as JSON
from IN and, for the k-th PDF in turn, writes `OUT_DIR/k.json` (atomically, once it is read):
either {"pages": [[number, width, height, [[text, x0, x1, top, bottom, size], ...]], ...],
"ruled": [[page, top, bottom, rows], ...]} (ruled table cells as pdfplumber gives them) or
{"skipped": reason}. No datasolver imports (it starts with `python -I`); the parent
(`documents/pdf.py`) turns the answers into lines and tables, treats them as untrusted, and knows
from the answers present how far a killed reader got.

A PDF is read only within its caps, because a 2.8 KB file can ask for 10^7 text draws: one page
whose content is `/X0 Do`, and a Form XObject drawing the next one 10 times, 7 deep. Each page's
own drawing instructions are measured (decompressed, bounded) before pdfminer interprets them, and
while it interprets, every form it draws adds its instructions to the page's count (a form counts
each time it is drawn) and may nest only `max_form_depth` deep. The parent's sandbox bounds time
and memory whatever this misses.
"""

import json
import os
import sys
import time
import zlib

_CAP_MESSAGES = {
    "pages": "more than {max_pages} pages; only PDFs within that are read",
    "page": "page {page} holds over {page_mb} MB of drawing instructions, more than a page of text or tables "
            "needs; not read",
    "forms": "page {page} draws forms holding over {page_mb} MB of drawing instructions (a form counts each "
             "time it is drawn), more than a page of text or tables needs; not read",
    "depth": "page {page} nests forms more than {max_form_depth} deep; not read",
    "draws": "page {page} draws forms more than {max_form_draws:,} times, more than a page of text or tables "
             "needs; not read",
    "total": "its pages hold over {total_mb} MB of drawing instructions in all; not read",
}


class Refused(Exception):
    """A cap was passed; the message says which."""


class _Budget:
    """The drawing instructions one page may run, its own and its forms' (each time drawn)."""

    def __init__(self, caps, page, used):
        self.caps, self.page, self.used, self.depth, self.draws = caps, page, used, 0, 0
        self.sizes = {}

    def refuse(self, kind):
        caps = self.caps
        raise Refused(_CAP_MESSAGES[kind].format(page=self.page, page_mb=caps["max_page_bytes"] >> 20,
                                                 total_mb=caps["max_total_bytes"] >> 20, **caps))

    def spend(self, size, kind):
        self.used += size
        if self.used > self.caps["max_page_bytes"]:
            self.refuse(kind)

    def form_size(self, stream):
        """A form's instructions, measured once per page (at most what the page has left)."""
        key = id(stream) if stream.objid is None else stream.objid
        if key not in self.sizes:
            self.sizes[key] = stream_bytes(stream, self.caps["max_page_bytes"] + 1 - self.used)
        return self.sizes[key]


def stream_bytes(stream, limit):
    """The decompressed size of one content stream, counted up to `limit` only."""
    if getattr(stream, "data", None) is not None:  # already decoded by pdfminer
        return len(stream.data)
    if getattr(stream, "rawdata", None) is None:
        return 0
    filters = [getattr(f, "name", str(f)) for f, _ in stream.get_filters()]
    if filters == ["FlateDecode"]:  # the usual case: inflate at most what the cap allows
        return len(zlib.decompressobj().decompress(stream.rawdata, max(limit, 1)))
    if not filters:
        return len(stream.rawdata)
    return len(stream.get_data())  # other filters are rare in content streams: pdfminer's own decoder


def _interpreter_class():
    from pdfminer.pdfinterp import PDFPageInterpreter
    from pdfminer.pdftypes import stream_value
    from pdfminer.psparser import literal_name

    class BudgetedInterpreter(PDFPageInterpreter):
        """pdfminer's interpreter, which counts every form it draws against the page's budget."""

        def do_Do(self, xobjid_arg):
            budget = self.device.budget
            try:
                xobj = stream_value(self.xobjmap[literal_name(xobjid_arg)])
            except Exception:  # noqa: BLE001 - an unknown or broken XObject: pdfminer's own do_Do decides
                xobj = None
            if xobj is None or getattr(xobj.get("Subtype"), "name", None) != "Form":
                return super().do_Do(xobjid_arg)
            if budget.depth >= budget.caps["max_form_depth"]:
                budget.refuse("depth")
            budget.draws += 1
            if budget.draws > budget.caps["max_form_draws"]:
                budget.refuse("draws")
            budget.spend(budget.form_size(xobj), "forms")
            budget.depth += 1
            try:
                return super().do_Do(xobjid_arg)
            finally:
                budget.depth -= 1

    return BudgetedInterpreter


def read_pages(path, caps, deadline):
    import pdfplumber  # imported here, in the reader's process only
    from pdfminer.pdftypes import resolve1
    from pdfplumber.page import PDFPageAggregatorWithMarkedContent

    interpreter_class = _interpreter_class()

    class Device(PDFPageAggregatorWithMarkedContent):
        budget = None

    pages, ruled, used = [], [], 0
    with pdfplumber.open(path) as pdf:
        for number, page in enumerate(pdf.pages, 1):
            if time.monotonic() > deadline:
                raise Refused(f"not read to the end before the preparing deadline (stopped at page {number})")
            if number > caps["max_pages"]:
                raise Refused(_CAP_MESSAGES["pages"].format(**caps))
            budget = _Budget(caps, number, 0)
            for stream in (resolve1(s) for s in page.page_obj.contents):
                budget.spend(stream_bytes(stream, caps["max_page_bytes"] + 1 - budget.used), "page")
            # The layout pdfplumber would make (its `layout` property), by the counting interpreter.
            device = Device(pdf.rsrcmgr, pageno=page.page_number, laparams=pdf.laparams)
            device.budget = budget
            interpreter_class(pdf.rsrcmgr, device).process_page(page.page_obj)
            page._layout = device.get_result()
            used += budget.used
            if used > caps["max_total_bytes"]:
                raise Refused(_CAP_MESSAGES["total"].format(**caps, total_mb=caps["max_total_bytes"] >> 20))
            found = page.find_tables()  # default "lines" strategy: ruled tables only
            boxes = [t.bbox for t in found]
            for table in found:
                ruled.append([page.page_number, table.bbox[1], table.bbox[3], table.extract()])
            text_page = page.filter(lambda o: not _inside(o, boxes)) if boxes else page
            lines = [[d["text"], d["x0"], d["x1"], d["top"], d["bottom"],
                      max((c.get("size", 0.0) for c in d.get("chars", [])), default=0.0)]
                     for d in text_page.extract_text_lines(return_chars=True) if d["text"].strip()]
            pages.append([page.page_number, float(page.width), float(page.height), lines])
            page.close()  # its objects are not needed again: memory stays one page's
    return {"pages": pages, "ruled": ruled}


def _inside(obj, boxes):
    cx = (obj["x0"] + obj["x1"]) / 2
    cy = (obj["top"] + obj["bottom"]) / 2
    return any(x0 <= cx <= x1 and top <= cy <= bottom for x0, top, x1, bottom in boxes)


def main():
    with open(sys.argv[1], encoding="utf-8") as fh:
        task = json.load(fh)
    out = sys.argv[2]
    deadline = time.monotonic() + float(task["seconds"])
    for number, pdf in enumerate(task["pdfs"]):
        own = min(deadline, time.monotonic() + float(task["seconds_per_pdf"]))
        if time.monotonic() > deadline:
            answer = {"skipped": "not read: the preparing deadline had passed"}
        else:
            answer = read_one(pdf, task["caps"], own)
        with open(f"{out}/{number}.part", "w", encoding="utf-8") as fh:
            json.dump(answer, fh, ensure_ascii=False)
        os.replace(f"{out}/{number}.part", f"{out}/{number}.json")


def read_one(pdf, caps, deadline):
    try:
        return read_pages(pdf, caps, deadline)
    except Refused as exc:
        return {"skipped": str(exc)}
    except MemoryError:
        return {"skipped": "reading it needed more memory than a document may use; not read"}
    except RecursionError:
        return {"skipped": "not a readable PDF (its objects are nested too deeply)"}
    except Exception as exc:  # noqa: BLE001 - pdfminer raises many unrelated types on damaged files
        return {"skipped": f"not a readable PDF ({type(exc).__name__}: {exc})"}


if __name__ == "__main__":
    main()
