"""LLM endpoints, the call log that doubles as the cache, and background runs split into chunks.

An API key is never stored: an endpoint names the environment variable that holds it.
"""

from llm.models.calls import CallStatus, LLMCall
from llm.models.endpoints import (
    ENV_NAME_VALIDATOR,
    MONEY,
    ApiStyle,
    Endpoint,
    EndpointPace,
    EndpointSlot,
    TokenParameter,
)
from llm.models.runs import (
    BatchStatus,
    BudgetPool,
    ChunkStatus,
    PauseReason,
    Run,
    RunBatch,
    RunChunk,
    RunItem,
    RunItemStatus,
    RunMode,
    RunStatus,
    WorkerHeartbeat,
)

__all__ = [
    "ApiStyle",
    "BatchStatus",
    "BudgetPool",
    "CallStatus",
    "ChunkStatus",
    "ENV_NAME_VALIDATOR",
    "Endpoint",
    "EndpointPace",
    "EndpointSlot",
    "LLMCall",
    "MONEY",
    "PauseReason",
    "Run",
    "RunBatch",
    "RunChunk",
    "RunItem",
    "RunItemStatus",
    "RunMode",
    "RunStatus",
    "TokenParameter",
    "WorkerHeartbeat",
]
