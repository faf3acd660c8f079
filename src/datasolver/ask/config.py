"""Every limit and switch of the analyst in one place."""

from __future__ import annotations

from dataclasses import dataclass

from datasolver.settings import check_settings, count, seconds, setting, switch, sampling_temperature


@dataclass(frozen=True)
class AskLimits:
    """Budgets of one question. Results stay in DuckDB; these bound what enters the prompt."""

    max_requests: int = count(16, "model requests for one question (the reviewer's and the forced final answer "
                              "included)")
    answer_rows: int = count(20, "longest list an answer spells out; longer results are answered through a "
                             "{DATA} template")
    data_rows: int = count(500, "most rows the program writes into an answer's {DATA}; a longer result's list is cut "
                           "there and the answer says so")
    data_chars: int = count(20_000, "most characters the program writes into an answer's {DATA}; the list is cut "
                            "there and the answer says so")
    render_rows: int = count(30, "most rows one `render` shows the model")
    sample_rows: int = count(3, "rows shown with each new result")
    knowledge_chars: int = count(6000, "knowledge.md beyond this many characters is cut in the prompt")
    table_list_chars: int = count(8000, "the table list in the prompt is cut here; list_tables shows it whole")
    tool_result_chars: int = count(6000, "any single tool answer is cut here")
    query_timeout_s: float = seconds(60.0, "each query is interrupted after this many seconds (`ask_data` loads "
                                     "the tables first, with no limit)")

    def __post_init__(self) -> None:
        check_settings(self)


@dataclass(frozen=True)
class AskConfig:
    """How one question is answered."""

    limits: AskLimits = setting(doc="the budgets of one question", factory=AskLimits)
    direct_answer: bool = switch(True, "start with one request, tools off, for one query from the linked schema; "
                                 "the program writes the answer from its rows; the tool loop only when it fails")
    review: bool = switch(False, "reviewer pass (off by default until the golden set shows it helps)")
    enable_thinking: bool | None = switch(None, "per-request thinking switch for Qwen-style servers; None leaves "
                                          "the server default", optional=True)
    temperature: float = sampling_temperature(0.0, "sampling temperature of the analyst's requests")

    def __post_init__(self) -> None:
        check_settings(self)
