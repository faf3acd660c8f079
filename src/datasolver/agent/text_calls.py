"""Tool calls written as text: Qwen sometimes puts `<tool_call>…</tool_call>` in its content
instead of native tool calls. Two shapes are read:

- JSON:  `<tool_call>{"name": "explore_data", "arguments": {"query": "…"}}</tool_call>`
- XML:   `<tool_call><function=explore_data><parameter=query>…</parameter></function></tool_call>`

Arguments stay raw text: ``parse_tool_arguments`` repairs and validates them later, exactly as
for native calls. A block whose tool name cannot be found becomes a call with an empty name, so
the model is told its call was unreadable instead of its turn counting as a final answer.
"""

from __future__ import annotations

import json
import re

from datasolver.llm import ToolCall

ID_PREFIX = "textcall_"
_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
_XML_FUNCTION = re.compile(r"<function=([^>\s]+)\s*>", re.DOTALL)
_XML_PARAMETER = re.compile(r"<parameter=([^>\s]+)\s*>\n?(.*?)\n?</parameter>", re.DOTALL)
_JSON_NAME = re.compile(r'"name"\s*:\s*"([^"]+)"')


def extract_text_tool_calls(content: str, start: int = 1) -> tuple[str, list[ToolCall]]:
    """(content without the blocks, the calls found in it); ids are ``textcall_<n>`` from ``start``."""
    if "<tool_call>" not in content:
        return content, []
    calls = [
        _read_block(match.group(1).strip(), f"{ID_PREFIX}{start + i}")
        for i, match in enumerate(_BLOCK.finditer(content))
    ]
    return _BLOCK.sub("", content).strip(), calls


def _read_block(body: str, call_id: str) -> ToolCall:
    function = _XML_FUNCTION.search(body)
    if function:
        params = {name: value for name, value in _XML_PARAMETER.findall(body)}
        # Values are text; pydantic's lax mode turns "5" / "true" into int / bool as needed.
        return ToolCall(call_id, function.group(1), json.dumps(params, ensure_ascii=False))
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("name"), str):
        args = data.get("arguments", data.get("parameters", {}))
        raw = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        return ToolCall(call_id, data["name"], raw)
    # Broken JSON: take the name by pattern and leave the whole block to argument repair, which
    # unwraps a leaked {"name": …, "arguments": …} object.
    name = _JSON_NAME.search(body)
    return ToolCall(call_id, name.group(1) if name else "", body)
