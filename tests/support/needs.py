"""Skips for tests that need a newer LangGraph than the oldest one we support."""

from __future__ import annotations

import pytest
from langchain_core.language_models import BaseChatModel

from langgraph_checkpoint_repair.compatibility.features import has_delta_channels, installed_version

DELTA_REASON = (
    "delta channels need langgraph 1.2 and langgraph-checkpoint 4 (installed: langgraph "
    f"{installed_version('langgraph')}, langgraph-checkpoint "
    f"{installed_version('langgraph-checkpoint')})"
)

needs_delta = pytest.mark.skipif(not has_delta_channels(), reason=DELTA_REASON)

HAS_MODEL_PROFILES = "profile" in BaseChatModel.model_fields
needs_model_profiles = pytest.mark.skipif(
    not HAS_MODEL_PROFILES,
    reason="chat models have a `profile` from langchain-core 1.1 (installed: "
    f"{installed_version('langchain-core')})",
)
