"""The content rules on real media: every block form, every role, each provider's
limits as that provider counts them, a model profile, the three media modes, and
`max_result_chars`."""

from __future__ import annotations

import base64
import io
import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from PIL import Image

from langgraph_checkpoint_repair import HistoryError, RepairPolicy, repair_messages
from langgraph_checkpoint_repair.engine.media.blocks import find_media
from langgraph_checkpoint_repair.engine.media.history import history_limits
from langgraph_checkpoint_repair.engine.media.measure import dimensions
from langgraph_checkpoint_repair.engine.policy import Provider, policy_from_settings
from tests.support.media import (
    ANTHROPIC_LIMIT,
    MB,
    b64,
    block_forms,
    document_forms,
    image_bytes,
    jpeg_bytes,
    png_bytes,
    png_of_size,
    raw_size_for_base64,
)
from tests.support.needs import needs_model_profiles

ANTHROPIC = RepairPolicy(provider="anthropic")


@pytest.fixture(scope="module")
def big_png() -> str:
    """A 1200x1200 noise PNG: about 4.1 MB, 5.5 MB as base64."""
    return b64(png_bytes(1200, 1200, noise=True, seed=1))


def turn(block: dict[str, Any], role: str = "human") -> list[BaseMessage]:
    """A finished exchange whose `role` message holds `block`."""
    content: list[Any] = [{"type": "text", "text": "see"}, block]
    if role == "human":
        return [HumanMessage(content=content, id="h"), AIMessage(content="seen", id="a")]
    call = {"name": "shot", "args": {}, "id": "c1"}
    result = ToolMessage(
        content=content if role == "tool" else "ok", tool_call_id="c1", name="shot"
    )
    ai = AIMessage(content=content if role == "ai" else "", tool_calls=[call], id="a1")
    return [HumanMessage(content="go", id="h"), ai, result, AIMessage(content="done", id="a2")]


def block_at(message: BaseMessage, n: int) -> dict[str, Any]:
    block = message.content[n]
    assert isinstance(block, dict)
    return block


def text_of(message: BaseMessage) -> str:
    assert isinstance(message.content, str)
    return message.content


def everywhere(message: BaseMessage) -> str:
    return json.dumps(message.model_dump(), default=str)


def texts(message: BaseMessage) -> list[str]:
    return [b["text"] for b in message.content if isinstance(b, dict) and b.get("type") == "text"]


@pytest.mark.parametrize("form", list(block_forms("x", "image/png")))
@pytest.mark.parametrize("role", ["human", "tool", "ai"])
def test_an_oversized_image_in_any_form_and_role_is_replaced(
    big_png: str, form: str, role: str
) -> None:
    history = turn(block_forms(big_png, "image/png")[form], role)
    position = {"human": 0, "ai": 1, "tool": 2}[role]
    result = repair_messages(history, policy=ANTHROPIC)
    assert [(a.kind, a.index) for a in result.actions] == [("media_removed", position)]
    fixed = result.messages[position]
    assert big_png[1000:1200] not in everywhere(fixed)
    placeholder = texts(fixed)[-1]
    assert placeholder.startswith("[image removed: image/png, 4.1 MB;")
    assert "anthropic limit of 5.0 MB, 5.5 MB as base64" in placeholder
    assert fixed.id == history[position].id and len(fixed.content) == 2
    assert all(
        a is b
        for n, (a, b) in enumerate(zip(history, result.messages, strict=False))
        if n != position
    )
    assert repair_messages(result.messages, policy=ANTHROPIC).changed is False


def test_anthropic_counts_the_base64_text_and_bedrock_the_decoded_bytes() -> None:
    at_limit = b64(png_of_size(64, 64, raw_size_for_base64(ANTHROPIC_LIMIT)))
    over = b64(png_of_size(64, 64, raw_size_for_base64(ANTHROPIC_LIMIT + 4)))
    assert len(at_limit) == ANTHROPIC_LIMIT
    assert not repair_messages(
        turn(block_forms(at_limit, "image/png")["standard"]), policy=ANTHROPIC
    ).changed
    removed = repair_messages(turn(block_forms(over, "image/png")["standard"]), policy=ANTHROPIC)
    assert [a.kind for a in removed.actions] == ["media_removed"]
    # 3.75 MB decoded is Bedrock's line; the same 3.75 MB image is under Mistral's 10 MB.
    bedrock_line = 3 * MB + 3 * MB // 4
    for size, changed in ((bedrock_line, False), (bedrock_line + 1, True)):
        history = turn(block_forms(b64(png_of_size(64, 64, size)), "image/png")["anthropic"])
        assert repair_messages(history, policy=RepairPolicy(provider="bedrock")).changed is changed
        assert repair_messages(history, policy=RepairPolicy(provider="mistral")).changed is False


@pytest.mark.parametrize("provider", ["anthropic", "bedrock"])
def test_a_side_over_8000_pixels_is_read_from_the_header(provider: Provider) -> None:
    wide = b64(png_bytes(8001, 16))
    history = turn(block_forms(wide, "image/png")["standard"], "tool")
    result = repair_messages(history, policy=RepairPolicy(provider=provider))
    assert [a.kind for a in result.actions] == ["media_removed"]
    assert "8001x16 px" in texts(result.messages[2])[-1]
    fits = turn(block_forms(b64(png_bytes(8000, 16)), "image/png")["standard"], "tool")
    assert not repair_messages(fits, policy=RepairPolicy(provider=provider)).changed
    assert not repair_messages(history, policy=RepairPolicy(provider="openai-responses")).changed


def test_dimensions_of_every_image_type_come_from_headers() -> None:
    assert dimensions(b64(png_bytes(123, 45))) == (123, 45)
    assert dimensions(b64(jpeg_bytes(77, 33))) == (77, 33)
    assert dimensions(b64(jpeg_bytes(77, 33, exif_padding=60_000))) == (77, 33)
    assert dimensions(b64(image_bytes("GIF", 300, 20))) == (300, 20)
    assert dimensions(b64(image_bytes("WEBP", 640, 9))) == (640, 9)
    lossless = io.BytesIO()
    Image.new("RGBA", (31, 17)).save(lossless, "WEBP", lossless=True)
    assert dimensions(b64(lossless.getvalue())) == (31, 17)
    assert dimensions(b64(b"not an image at all")) is None


def test_a_jpeg_with_a_large_exif_segment_over_the_side_limit_is_caught() -> None:
    data = b64(jpeg_bytes(8100, 8, exif_padding=60_000))
    result = repair_messages(turn(block_forms(data, "image/jpeg")["anthropic"]), policy=ANTHROPIC)
    assert "8100x8 px" in texts(result.messages[0])[-1]


def test_types_each_provider_does_not_take() -> None:
    tiff = turn(block_forms(b64(image_bytes("TIFF", 10, 10)), "image/tiff")["standard"])
    assert "does not take" in texts(repair_messages(tiff, policy=ANTHROPIC).messages[0])[-1]
    docx_mime = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    docx = turn(document_forms(b64(b"PK\x03\x04 a docx"), docx_mime)["anthropic"], "tool")
    assert [a.kind for a in repair_messages(docx, policy=ANTHROPIC).actions] == ["media_removed"]
    assert not repair_messages(docx, policy=RepairPolicy(provider="bedrock")).changed
    pdf = turn(document_forms(b64(b"%PDF-1.4 tiny"), "application/pdf")["openai_file"])
    for provider in ("anthropic", "openai", "bedrock"):
        assert not repair_messages(pdf, policy=RepairPolicy(provider=provider)).changed
    audio = turn(
        {"type": "input_audio", "input_audio": {"data": b64(b"RIFF....WAVE"), "format": "wav"}}
    )
    assert repair_messages(audio, policy=ANTHROPIC).changed
    assert not repair_messages(audio, policy=RepairPolicy(provider="openai")).changed


def test_chat_completions_takes_no_image_in_a_tool_result() -> None:
    small = b64(png_bytes(20, 20))
    in_result = turn(block_forms(small, "image/png")["openai_image_url"], "tool")
    result = repair_messages(in_result, policy=RepairPolicy(provider="openai"))
    assert [a.kind for a in result.actions] == ["media_removed"]
    assert "openai takes no media in tool results" in texts(result.messages[2])[-1]
    answer = result.messages[2]
    assert isinstance(answer, ToolMessage) and (answer.tool_call_id, answer.name) == ("c1", "shot")
    assert not repair_messages(in_result, policy=RepairPolicy(provider="openai-responses")).changed
    from_user = turn(block_forms(small, "image/png")["openai_image_url"], "human")
    assert not repair_messages(from_user, policy=RepairPolicy(provider="openai")).changed


def test_a_model_profile_removes_the_kinds_it_marks_false() -> None:
    small = block_forms(b64(png_bytes(20, 20)), "image/png")["standard"]
    pdf = document_forms(b64(b"%PDF-1.4"), "application/pdf")["standard"]
    no_images = RepairPolicy(model_profile={"image_inputs": False, "text_inputs": True})
    assert repair_messages(turn(small), policy=no_images).changed
    assert not repair_messages(turn(pdf), policy=no_images).changed
    in_tools = RepairPolicy(model_profile={"image_tool_message": False, "image_inputs": True})
    assert not repair_messages(turn(small), policy=in_tools).changed
    result = repair_messages(turn(small, "tool"), policy=in_tools)
    assert "image_tool_message is false" in texts(result.messages[2])[-1]
    unknown = RepairPolicy(model_profile={"max_input_tokens": 1000})
    assert not repair_messages(turn(small, "tool"), policy=unknown).changed
    assert repair_messages(
        turn(pdf), policy=RepairPolicy(model_profile={"pdf_inputs": False})
    ).changed


@needs_model_profiles
def test_a_langchain_model_profile_is_read_as_given() -> None:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    model = GenericFakeChatModel(messages=iter(()), profile={"image_inputs": False})
    policy = RepairPolicy(model_profile=model.profile)
    small = block_forms(b64(png_bytes(20, 20)), "image/png")["anthropic"]
    assert [a.kind for a in repair_messages(turn(small), policy=policy).actions] == [
        "media_removed"
    ]
    assert hash(policy) == hash(RepairPolicy(model_profile={"image_inputs": False}))


def test_links_and_file_ids_are_left_alone(big_png: str) -> None:
    for block in (
        {"type": "image", "url": "https://example.com/huge.png"},
        {"type": "image_url", "image_url": {"url": "https://example.com/huge.tiff"}},
        {"type": "image", "file_id": "file-123"},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
    ):
        assert find_media(block) is None
        history = turn(block, "tool")
        for policy in (ANTHROPIC, RepairPolicy(provider="openai"),
                       RepairPolicy(model_profile={"image_inputs": False})):  # fmt: skip
            assert repair_messages(history, policy=policy).messages is history


def test_no_copy_of_removed_bytes_stays_in_additional_kwargs(big_png: str) -> None:
    history = turn(block_forms(big_png, "image/png")["standard"])
    history[0] = history[0].model_copy(
        update={
            "additional_kwargs": {"raw": {"parts": [f"data:image/png;base64,{big_png}"]}},
            "response_metadata": {"echo": big_png, "kept": "abc"},
        }
    )
    fixed = repair_messages(history, policy=ANTHROPIC).messages[0]
    assert big_png[:300] not in everywhere(fixed)
    assert fixed.response_metadata["kept"] == "abc"


def test_the_in_flight_message_is_left_but_its_finished_results_are_judged(
    big_png: str,
) -> None:
    """Right after a tool returned a screenshot too big, the model's step is still due:
    that result bricks the thread, the calls still to run keep their ids."""
    history = turn(block_forms(big_png, "image/png")["standard"], "ai")[:2]
    assert repair_messages(history, policy=ANTHROPIC, in_flight=True).messages is history
    assert repair_messages(history, policy=ANTHROPIC).changed
    history = turn(block_forms(big_png, "image/png")["standard"], "tool")[:3]
    result = repair_messages(history, policy=ANTHROPIC, in_flight=True)
    assert [(a.kind, a.index) for a in result.actions] == [("media_removed", 2)]
    assert result.messages[1] is history[1]


def test_strict_mode_reports_and_changes_nothing(big_png: str) -> None:
    history = turn(block_forms(big_png, "image/png")["standard"])
    with pytest.raises(HistoryError) as raised:
        repair_messages(history, policy=RepairPolicy(provider="anthropic", strict=True))
    assert [a.kind for a in raised.value.actions] == ["media_removed"]
    assert big_png[:100] not in str(raised.value)


def test_keep_turns_the_limits_off_and_no_change_is_no_copy(big_png: str) -> None:
    history = turn(block_forms(big_png, "image/png")["standard"])
    assert (
        repair_messages(history, policy=RepairPolicy(provider="anthropic", media="keep")).messages
        is history
    )
    clean = turn(block_forms(b64(png_bytes(30, 30)), "image/png")["standard"])
    assert repair_messages(clean, policy=ANTHROPIC).messages is clean


def test_downscale_reencodes_within_the_limit(big_png: str) -> None:
    policy = RepairPolicy(provider="anthropic", media="downscale")
    history = turn(block_forms(big_png, "image/png")["anthropic"], "tool")
    result = repair_messages(history, policy=policy)
    assert [a.kind for a in result.actions] == ["media_downscaled"]
    block = block_at(result.messages[2], 1)
    data = block["source"]["data"]
    assert block["source"]["media_type"] == "image/png" and len(data) <= ANTHROPIC_LIMIT
    image = Image.open(io.BytesIO(base64.b64decode(data)))
    assert image.format == "PNG" and image.size[0] < 1200
    assert repair_messages(history, policy=policy).messages[2].content == result.messages[2].content
    assert not repair_messages(result.messages, policy=policy).changed


def test_downscale_brings_a_wide_image_within_8000_pixels() -> None:
    policy = RepairPolicy(provider="bedrock", media="downscale")
    history = turn(block_forms(b64(jpeg_bytes(9000, 40)), "image/jpeg")["standard_data_url"])
    block = block_at(repair_messages(history, policy=policy).messages[0], 1)
    head, _, data = block["url"].partition(",")
    assert head == "data:image/jpeg;base64"
    assert max(Image.open(io.BytesIO(base64.b64decode(data))).size) <= 8000


def test_what_cannot_be_downscaled_gets_the_placeholder() -> None:
    policy = RepairPolicy(provider="anthropic", media="downscale")
    claims_too_much = b64(png_of_size(20_000, 20_000, 2000))  # never decoded: 400M pixels
    broken = b64(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 16_000)  # 4 MB, no header
    for data in (claims_too_much, broken):
        history = turn(block_forms(data, "image/png")["standard"])
        assert [a.kind for a in repair_messages(history, policy=policy).actions] == [
            "media_removed"
        ]
    tiff = turn(block_forms(b64(image_bytes("TIFF", 10, 10)), "image/tiff")["standard"])
    assert [a.kind for a in repair_messages(tiff, policy=policy).actions] == ["media_removed"]


def result_turn(content: Any) -> list[BaseMessage]:
    call = {"name": "grep", "args": {}, "id": "g1"}
    return [
        HumanMessage(content="find it", id="h"),
        AIMessage(content="", tool_calls=[call], id="a"),
        ToolMessage(content=content, tool_call_id="g1", name="grep", status="success", id="t"),
        AIMessage(content="found", id="z"),
    ]


def test_a_long_tool_result_keeps_head_and_tail_within_the_limit() -> None:
    output = "HEAD" + "x" * 1_200_000 + "TAIL"
    policy = RepairPolicy(max_result_chars=2000)
    result = repair_messages(result_turn(output), policy=policy)
    cut = result.messages[2]
    text = text_of(cut)
    assert isinstance(cut, ToolMessage) and len(text) <= 2000
    assert text.startswith("HEAD") and text.endswith("TAIL")
    removed = len(output) - (len(text) - len(text.split("\n")[1]) - 2)
    assert f"[... {removed:,} characters of this tool result removed ...]" in text
    assert (cut.tool_call_id, cut.name, cut.status, cut.id) == ("g1", "grep", "success", "t")
    assert [(a.kind, a.index, a.tool_call_id) for a in result.actions] == [
        ("result_truncated", 2, "g1")
    ]
    assert not repair_messages(result.messages, policy=policy).changed
    assert repair_messages(result_turn("short"), policy=policy).changed is False


def test_a_long_result_in_blocks_keeps_its_media_and_one_text() -> None:
    image = {"type": "image", "base64": b64(png_bytes(8, 8)), "mime_type": "image/png"}
    content = [{"type": "text", "text": "a" * 3000}, image, {"type": "text", "text": "b" * 3000}]
    cut = repair_messages(
        result_turn(content), policy=RepairPolicy(max_result_chars=1000)
    ).messages[2]
    assert [block_at(cut, n)["type"] for n in range(len(cut.content))] == ["text", "image"]
    text = block_at(cut, 0)["text"]
    assert len(text) <= 1000 and text.startswith("a") and text.endswith("b")


def test_chinese_texts() -> None:
    policy = RepairPolicy(max_result_chars=500, language="zh", provider="anthropic")
    cut = repair_messages(result_turn("字" * 5000), policy=policy).messages[2]
    assert "个字符" in text_of(cut) and len(text_of(cut)) <= 500
    tiff = turn(block_forms(b64(image_bytes("TIFF", 4, 4)), "image/tiff")["standard"])
    assert "已移除" in texts(repair_messages(tiff, policy=policy).messages[0])[-1]


def test_settings_and_mistakes() -> None:
    policy = policy_from_settings(
        [
            "provider=anthropic",
            "media=downscale",
            "max_result_chars=200_000",
            'model_profile={"image_inputs": false, "name": "x"}',
        ]
    )
    assert (policy.media, policy.max_result_chars) == ("downscale", 200_000)
    assert policy.model_profile == {"image_inputs": False}
    assert policy_from_settings(["max_result_chars=none"]).max_result_chars is None
    for bad, error in (
        (["media=shrink"], ValueError),
        (["max_result_chars=lots"], ValueError),
        (["max_result_chars=10"], ValueError),
        (["model_profile=[1]"], ValueError),
    ):
        with pytest.raises(error):
            policy_from_settings(bad)
    with pytest.raises(TypeError):
        RepairPolicy(model_profile="image_inputs")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        RepairPolicy(max_result_chars=True)


def test_request_wide_limits_are_measured_not_fixed() -> None:
    small: Any = block_forms(b64(png_bytes(30, 30)), "image/png")["standard"]
    wide: Any = block_forms(b64(png_bytes(2100, 10)), "image/png")["anthropic"]
    many = [HumanMessage(content=[small] * 20 + [wide], id="h"), AIMessage(content="ok")]
    assert history_limits(many, "anthropic") == ["anthropic_many_images_over_2000px"]
    twenty = [HumanMessage(content=[small] * 19 + [wide])]
    no_wide = [HumanMessage(content=[small] * 30)]
    assert history_limits(twenty, "anthropic") == history_limits(no_wide, "anthropic") == []
    assert not repair_messages(many, policy=ANTHROPIC).changed  # each image is within 8000 px
    heavy = b64(png_of_size(64, 64, 4 * MB))
    block: Any = block_forms(heavy, "image/png")["standard"]
    big = [HumanMessage(content=[block] * 7, id="b")]
    assert history_limits(big, "anthropic") == ["anthropic_request_over_32mb"]
    assert history_limits(big * 2, "openai") == ["openai_images_over_50mb"]
    assert history_limits(big, "bedrock") == []


def test_scan_counts_threads_over_a_request_limit() -> None:
    from datetime import timedelta

    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import START, MessagesState, StateGraph

    from langgraph_checkpoint_repair.batch import repair_threads

    small: Any = block_forms(b64(png_bytes(30, 30)), "image/png")["standard"]
    wide: Any = block_forms(b64(png_bytes(2100, 10)), "image/png")["standard"]
    graph = StateGraph(MessagesState)
    graph.add_node("noop", lambda state: {})
    graph.add_edge(START, "noop")
    saver = InMemorySaver()
    app = graph.compile(checkpointer=saver)
    for n in range(3):
        images = [small] * 20 + ([wide] if n else [])
        history = [HumanMessage(content=images, id=f"h{n}"), AIMessage(content="ok", id=f"a{n}")]
        state: Any = {"messages": history}
        app.invoke(state, {"configurable": {"thread_id": f"t{n}"}})
    report = repair_threads(saver, dry_run=True, min_idle=timedelta(0), policy=ANTHROPIC)
    assert report.history_limits == {"anthropic_many_images_over_2000px": 2}
    assert report.to_json()["history_limits"] == {"anthropic_many_images_over_2000px": 2}
    assert report.threads_needing_repair == 0
