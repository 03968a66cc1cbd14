"""How the engine repairs: the knobs a user can turn, with safe defaults."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage

DEFAULT_TEXTS: dict[str, dict[str, str]] = {
    "en": {
        "cancelled": (
            "Tool call '{name}' (id {id}) was cancelled before it completed; "
            "no result is available."
        ),
        "invalid_arguments": (
            "Tool call '{name}' (id {id}) was not run because its arguments could "
            "not be parsed. Call the tool again with valid arguments."
        ),
    },
    "zh": {
        "cancelled": "工具调用 '{name}'（id {id}）在完成之前已被取消，没有可用的结果。",
        "invalid_arguments": (
            "工具调用 '{name}'（id {id}）未执行，因为其参数无法解析。"
            "请使用有效的参数重新调用该工具。"
        ),
    },
}


@dataclass(frozen=True)
class PendingCall:
    """A tool call that gets a synthetic result, as handed to a placeholder callable."""

    id: str
    name: str
    args: Any
    invalid: bool
    """True for an entry of `invalid_tool_calls` (arguments that did not parse)."""
    ai_message: AIMessage
    ai_index: int
    history: Sequence[BaseMessage]

    @property
    def reason(self) -> str:
        return "invalid_arguments" if self.invalid else "cancelled"


PlaceholderFn = Callable[[PendingCall], str]


@dataclass(frozen=True)
class RepairPolicy:
    """What `repair_messages` does with each kind of defect.

    - `dangling`: `"placeholder"` answers a call that has no result with a
      synthetic error result; `"drop_call"` removes the call from a copy of its
      AIMessage instead.
    - `orphans` / `duplicates`: `"drop"` removes results that answer no call or
      answer an already answered call; `"keep"` leaves them where they are.
    - `placeholder`: the synthetic content, as a `str.format` template with
      `{name}`, `{id}` and `{reason}`, or a callable taking a `PendingCall`.
      `None` uses the default text of `language`.
    - `language`: `"en"` or `"zh"`, for the default texts.
    - `strict`: change nothing; raise `HistoryError` listing what would change.
    """

    dangling: Literal["placeholder", "drop_call"] = "placeholder"
    orphans: Literal["drop", "keep"] = "drop"
    duplicates: Literal["drop", "keep"] = "drop"
    placeholder: str | PlaceholderFn | None = None
    language: Literal["en", "zh"] = "en"
    strict: bool = False

    def __post_init__(self) -> None:
        _check_choice("dangling", self.dangling, ("placeholder", "drop_call"))
        _check_choice("orphans", self.orphans, ("drop", "keep"))
        _check_choice("duplicates", self.duplicates, ("drop", "keep"))
        _check_choice("language", self.language, tuple(DEFAULT_TEXTS))
        if not isinstance(self.strict, bool):
            raise TypeError(f"RepairPolicy.strict must be a bool, not {self.strict!r}")
        _check_placeholder(self.placeholder)

    def placeholder_text(self, call: PendingCall) -> str:
        """The content of the synthetic result for `call`."""
        if callable(self.placeholder):
            return str(self.placeholder(call))
        template = self.placeholder or DEFAULT_TEXTS[self.language][call.reason]
        return template.format(name=call.name, id=call.id, reason=call.reason)


def _check_choice(field: str, value: object, allowed: tuple[str, ...]) -> None:
    if not isinstance(value, str):
        raise TypeError(f"RepairPolicy.{field} must be one of {allowed}, not {value!r}")
    if value not in allowed:
        raise ValueError(f"RepairPolicy.{field} must be one of {allowed}, not {value!r}")


_SAMPLE_CALL = {"name": "get_weather", "id": "call_1", "reason": "cancelled"}


def _check_placeholder(placeholder: object) -> None:
    """Reject a template that cannot be filled now, rather than fail on every thread later."""
    if placeholder is None or callable(placeholder):
        return
    if not isinstance(placeholder, str):
        raise TypeError(
            f"RepairPolicy.placeholder must be a str template, a callable or None, "
            f"not {placeholder!r}"
        )
    try:
        placeholder.format(**_SAMPLE_CALL)
    except (KeyError, IndexError, ValueError, AttributeError) as error:
        raise ValueError(
            f"RepairPolicy.placeholder {placeholder!r} is not a valid template "
            f"(it may use {{name}}, {{id}} and {{reason}}): {type(error).__name__}: {error}"
        ) from None


DEFAULT_POLICY = RepairPolicy()


def policy_from_settings(settings: Iterable[str]) -> RepairPolicy:
    """A policy from `KEY=VALUE` texts (`dangling=drop_call`, `strict=true`), as the
    command line and the environment give them; a ValueError names a bad one."""
    values: dict[str, Any] = {}
    for setting in settings:
        key, sep, value = setting.strip().partition("=")
        if not sep or key not in RepairPolicy.__dataclass_fields__:
            fields = ", ".join(RepairPolicy.__dataclass_fields__)
            raise ValueError(f"not a policy setting: {setting!r} (KEY=VALUE with KEY in {fields})")
        values[key] = _boolean(setting, value) if key == "strict" else value
    return RepairPolicy(**values)


_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _boolean(setting: str, value: str) -> bool:
    if value.strip().lower() not in _TRUE + _FALSE:
        raise ValueError(f"not a boolean in {setting!r} (use true or false)")
    return value.strip().lower() in _TRUE
