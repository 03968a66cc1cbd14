"""How the engine repairs: the knobs a user can turn, with safe defaults."""

from __future__ import annotations

import json
import re
import string
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage

from ..storage_policy import StoragePolicy

Provider = Literal["anthropic", "openai", "openai-responses", "mistral", "bedrock"]
PROVIDERS: tuple[Provider, ...] = ("anthropic", "openai", "openai-responses", "mistral", "bedrock")
MediaMode = Literal["placeholder", "downscale", "keep"]
MEDIA_MODES: tuple[MediaMode, ...] = ("placeholder", "downscale", "keep")
PROFILE_KEYS = (
    "image_inputs",
    "pdf_inputs",
    "audio_inputs",
    "video_inputs",
    "image_tool_message",
    "pdf_tool_message",
)
"""The keys of a LangChain `ModelProfile` the content rules read."""
MIN_RESULT_CHARS = 200
"""Below this the line saying what was cut would crowd out the result itself."""

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
TokenCounter = Callable[[Sequence[BaseMessage]], int]
WINDOW_KEY = "max_input_tokens"
"""The key of a LangChain `ModelProfile` that gives the context window."""
Filler = Callable[[str, str, str], str]


@dataclass(frozen=True)
class RepairPolicy(StoragePolicy):
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
    - `provider`: `None` applies the portable pairing rules only; a provider
      name also fixes what that provider rejects in a stored history (ids,
      thinking and reasoning blocks, empty contents), after the pairing repair,
      and brings that provider's media limits (size, sides, types, placement).
    - `model_profile`: a LangChain `ModelProfile` (`model.profile`) or a dict of
      its keys; media of a kind it marks false is replaced. A missing key: kept.
    - `media`: what happens to media over a limit: `"placeholder"` (a text block
      saying what was removed), `"downscale"` (images re-encoded within the
      limit; needs Pillow, the `[media]` extra) or `"keep"` (limits off).
    - `max_result_chars`: a tool result with more text is cut to its head and
      tail (`None`, the default: never).
    - `max_input_tokens`: the model's context window; the history is made to fit
      in it less `context_reserve`, dropping the least first (see
      `engine.context`). `None` takes `max_input_tokens` from `model_profile`;
      neither: no budget, nothing trimmed.
    - `context_reserve`: tokens kept free for the system prompt, the tools and
      the answer (`None`: a tenth of the window).
    - `token_counter`: counts a list of messages (a model's
      `get_num_tokens_from_messages`, `len`); `None` is LangChain's
      `count_tokens_approximately`.
    - `lost_types`, `nul_text`, `stale_resume` (keywords only): what the loader and
      the stores do, which the engine never reads; see `StoragePolicy`.
    """

    dangling: Literal["placeholder", "drop_call"] = "placeholder"
    orphans: Literal["drop", "keep"] = "drop"
    duplicates: Literal["drop", "keep"] = "drop"
    placeholder: str | PlaceholderFn | None = None
    language: Literal["en", "zh"] = "en"
    strict: bool = False
    provider: Provider | None = None
    model_profile: Mapping[str, Any] | None = None
    media: MediaMode = "placeholder"
    max_result_chars: int | None = None
    max_input_tokens: int | None = None
    context_reserve: int | None = None
    token_counter: TokenCounter | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_choice("dangling", self.dangling, ("placeholder", "drop_call"))
        _check_choice("orphans", self.orphans, ("drop", "keep"))
        _check_choice("duplicates", self.duplicates, ("drop", "keep"))
        _check_choice("language", self.language, tuple(DEFAULT_TEXTS))
        if self.provider is not None:
            _check_choice("provider", self.provider, PROVIDERS)
        if not isinstance(self.strict, bool):
            raise TypeError(f"RepairPolicy.strict must be a bool, not {self.strict!r}")
        _check_placeholder(self.placeholder)
        _check_choice("media", self.media, MEDIA_MODES)
        if self.media == "downscale" and not _has_pillow():
            raise ValueError(
                "RepairPolicy.media='downscale' needs Pillow: "
                "pip install 'langgraph-checkpoint-repair[media]'"
            )
        object.__setattr__(self, "model_profile", _profile(self.model_profile))
        _check_result_chars(self.max_result_chars)
        _check_budget(self.max_input_tokens, self.context_reserve, self.token_counter)
        window = self.context_window
        if window is not None and self.context_reserve is not None:
            _check_reserve(self.context_reserve, window)

    def __hash__(self) -> int:
        profile = tuple(sorted(self.model_profile.items())) if self.model_profile else None
        fields = [getattr(self, f) for f in self.__dataclass_fields__ if f != "model_profile"]
        return hash((*fields, profile))

    @property
    def rewrites_content(self) -> bool:
        """Whether the content rules apply: media limits from a provider or a model
        profile, or a cap on tool results."""
        if self.max_result_chars is not None:
            return True
        profile = self.model_profile or {}
        return self.media != "keep" and (
            self.provider is not None or any(key in PROFILE_KEYS for key in profile)
        )

    @property
    def reads_content(self) -> bool:
        """Whether a history can break this policy in ways pairing alone does not see."""
        return self.provider is not None or self.rewrites_content or self.input_budget is not None

    @property
    def context_window(self) -> int | None:
        """`max_input_tokens`, or the model profile's when not given."""
        if self.max_input_tokens is not None:
            return self.max_input_tokens
        return (self.model_profile or {}).get(WINDOW_KEY)

    @property
    def input_budget(self) -> int | None:
        """The tokens the history may take: the window less the reserve; None, no budget."""
        window = self.context_window
        if window is None:
            return None
        reserve = window // 10 if self.context_reserve is None else self.context_reserve
        return window - reserve

    def placeholder_text(self, call: PendingCall) -> str:
        """The content of the synthetic result for `call`."""
        return self.text_for(call.id, call.name, call.reason, lambda: call)

    def fillers(self) -> dict[str, Filler]:
        """Reason -> a function (name, id, reason) -> the synthetic content, the
        same as `placeholder_text` and faster; empty for a callable placeholder."""
        if callable(self.placeholder):
            return {}
        texts = DEFAULT_TEXTS[self.language]
        return {reason: _filler(self.placeholder or text) for reason, text in texts.items()}

    def text_for(
        self, call_id: str, name: str, reason: str, pending: Callable[[], PendingCall]
    ) -> str:
        """The synthetic content; `pending` is built only for a callable placeholder."""
        if callable(self.placeholder):
            return str(self.placeholder(pending()))
        template = self.placeholder or DEFAULT_TEXTS[self.language][reason]
        return template.format(name=name, id=call_id, reason=reason)


_POSITIONS = {"name": "0", "id": "1", "reason": "2"}


def _filler(template: str) -> Filler:
    """`template.format(name=, id=, reason=)` as a function. A template using only
    those fields is numbered once, as formatting by position skips a dict per call."""
    numbered = []
    try:
        for literal, field, spec, conversion in string.Formatter().parse(template):
            numbered.append(literal.replace("{", "{{").replace("}", "}}"))
            if field is not None:
                if field not in _POSITIONS:
                    raise ValueError(field)
                convert = f"!{conversion}" if conversion else ""
                numbered.append(f"{{{_POSITIONS[field]}{convert}:{spec}}}")
    except ValueError:  # other fields or a malformed template: format it as written
        return lambda name, call_id, reason: template.format(name=name, id=call_id, reason=reason)
    return "".join(numbered).format


def _check_choice(field: str, value: object, allowed: tuple[str, ...]) -> None:
    if not isinstance(value, str):
        raise TypeError(f"RepairPolicy.{field} must be one of {allowed}, not {value!r}")
    if value not in allowed:
        raise ValueError(f"RepairPolicy.{field} must be one of {allowed}, not {value!r}")


def _has_pillow() -> bool:
    try:
        import PIL.Image  # noqa: F401
    except ImportError:
        return False
    return True


def _profile(profile: object) -> dict[str, Any] | None:
    """The profile keys the rules read, copied (a model's profile may change later)."""
    if profile is None:
        return None
    if not isinstance(profile, Mapping):
        raise TypeError(
            f"RepairPolicy.model_profile must be a ModelProfile or a dict, not {profile!r}"
        )
    kept: dict[str, Any] = {
        key: profile[key] for key in PROFILE_KEYS if isinstance(profile.get(key), bool)
    }
    window = profile.get(WINDOW_KEY)
    if isinstance(window, int) and not isinstance(window, bool) and window > 0:
        kept[WINDOW_KEY] = window
    return kept


def _is_whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_budget(window: object, reserve: object, counter: object) -> None:
    for field, value in (("max_input_tokens", window), ("context_reserve", reserve)):
        if value is not None and not _is_whole(value):
            raise TypeError(f"RepairPolicy.{field} must be an int or None, not {value!r}")
    if window is not None and window <= 0:  # type: ignore[operator]
        raise ValueError(f"RepairPolicy.max_input_tokens must be positive, not {window}")
    if reserve is not None and reserve < 0:  # type: ignore[operator]
        raise ValueError(f"RepairPolicy.context_reserve must not be negative, not {reserve}")
    if counter is not None and not callable(counter):
        raise TypeError(
            f"RepairPolicy.token_counter must be a callable (messages -> int) or None, "
            f"not {counter!r}"
        )


def _check_reserve(reserve: int, window: int) -> None:
    if reserve >= window:
        raise ValueError(
            f"RepairPolicy.context_reserve ({reserve}) must be below the context window "
            f"({window} tokens)"
        )


def _check_result_chars(limit: object) -> None:
    if limit is None:
        return
    if not isinstance(limit, int) or isinstance(limit, bool):
        raise TypeError(f"RepairPolicy.max_result_chars must be an int or None, not {limit!r}")
    if limit < MIN_RESULT_CHARS:
        raise ValueError(
            f"RepairPolicy.max_result_chars must be at least {MIN_RESULT_CHARS}, not {limit}"
        )


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
    """A policy from `KEY=VALUE` texts (`dangling=drop_call`, `strict=true`,
    `provider=anthropic`), as the command line and the environment give them; a
    ValueError names a bad one. `provider=none` (or empty) is the portable engine."""
    values: dict[str, Any] = {}
    for setting in settings:
        key, sep, value = setting.strip().partition("=")
        if not sep or key not in RepairPolicy.__dataclass_fields__:
            fields = ", ".join(RepairPolicy.__dataclass_fields__)
            raise ValueError(f"not a policy setting: {setting!r} (KEY=VALUE with KEY in {fields})")
        values[key] = _setting_value(setting, key, value)
    policy = RepairPolicy(**values)
    if policy.context_reserve is not None and policy.context_window is None:
        raise ValueError(
            "context_reserve needs a context window: add max_input_tokens=N "
            "(or a model_profile with max_input_tokens)"
        )
    return policy


def split_settings(text: str) -> list[str]:
    """`provider=anthropic, model_profile={"image_inputs": false, "pdf_inputs": true}`:
    one setting per comma that starts a new `KEY=`, so a JSON value keeps its own."""
    return [part for part in _NEXT_SETTING.split(text) if part.strip()]


_NEXT_SETTING = re.compile(r",(?=\s*[A-Za-z_]+\s*=)")


_NUMBERS = ("max_result_chars", "max_input_tokens", "context_reserve")


def _setting_value(setting: str, key: str, value: str) -> Any:
    if key == "strict":
        return _boolean(setting, value)
    if key == "token_counter":
        raise ValueError(
            f"{setting!r}: token_counter is a Python callable, set in code; "
            "the default counts as LangChain's count_tokens_approximately"
        )
    if key in (*_NUMBERS, "provider", "model_profile") and value.strip().lower() in ("", "none"):
        return None
    if key in _NUMBERS:
        try:
            return int(value.strip().replace("_", ""))
        except ValueError:
            unit = "characters" if key == "max_result_chars" else "tokens"
            raise ValueError(f"not a number of {unit} in {setting!r}") from None
    if key == "model_profile":
        return _profile_setting(setting, value)
    return value


def _profile_setting(setting: str, value: str) -> dict[str, Any]:
    """`model_profile={"image_inputs": false}`: a JSON object of profile keys."""
    try:
        profile = json.loads(value)
    except json.JSONDecodeError:
        profile = None
    if not isinstance(profile, dict):
        raise ValueError(
            f"not a JSON object in {setting!r} "
            f'(model_profile={{"image_inputs": false, "pdf_inputs": true}})'
        )
    return profile


_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _boolean(setting: str, value: str) -> bool:
    if value.strip().lower() not in _TRUE + _FALSE:
        raise ValueError(f"not a boolean in {setting!r} (use true or false)")
    return value.strip().lower() in _TRUE
