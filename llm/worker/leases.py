"""What a worker holds while it works on a run: its identity, the leases of its chunks, and the outcomes of steps."""

import dataclasses
import os
import socket
import uuid
from dataclasses import dataclass, field
from decimal import Decimal

from llm.executor import CallOutcome, CallSpec


def worker_identity() -> str:
    """Return a name for this worker process that is unique across machines and restarts."""
    return f"{socket.gethostname()[:40]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


@dataclass
class Lease:
    chunk_id: int
    token: int
    pending: int  # distinct calls of this chunk still to store
    items_by_call: dict[int, list[int]] = field(default_factory=dict)
    items_left_pending: bool = False
    # Batch mode: [(open RunBatch row, its specs)], the specs no open batch holds, and whether one has finished.
    open_batches: list = field(default_factory=list)
    unbatched: list = field(default_factory=list)
    batched_before: bool = False
    next_attempt: int = 1
    # Budget reserved for the chunk's live requests when it was claimed, handed to the event loop to draw on.
    allowance: Decimal = Decimal("0")

    def copy(self) -> "Lease":
        return dataclasses.replace(self, items_by_call=dict(self.items_by_call))


@dataclass
class BatchTaskResult:
    """What following one provider batch gave: outcomes to store, and requests to send again."""

    lease: Lease
    outcomes: list[CallOutcome] = field(default_factory=list)
    retry: list[CallSpec] = field(default_factory=list)
    finished: tuple[int, int, str] | None = None  # (RunBatch pk, chunk id, final status)
    attempt: int = 1
    parked: bool = False  # still under way at the provider: the chunk is left to a later poll, not waited for


class BatchProviderError(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class FlushResult:
    status: str
    lost: set[int]
