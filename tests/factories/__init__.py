"""Factories for tests, usable by the demo too: each builds through the real services, never by writing models.

Users with roles, items with their first revision, screening rounds and reviews, frozen releases, labelled
comparison sets, judges and calibration runs, evaluation runs. The factories that ask an LLM work its runs in
this process and need committed transactions (``transactional_db``); endpoints on the test session's simulator
come from the ``make_endpoint`` fixture (``tests/simulator.py``), which uses ``make_llm_endpoint``.
"""

from tests.factories.calibration import (
    make_calibration_run,
    make_judge,
    make_judge_selection,
    run_queued_report_computations,
)
from tests.factories.evaluation import drive_evaluation_run, make_evaluation_run
from tests.factories.items import make_item, mcq_content
from tests.factories.labelling import make_labelled_comparison_set, prefer_by_quality
from tests.factories.llm import make_llm_endpoint, mcq_prompts, run_queued_collections, work_llm_run
from tests.factories.releases import make_frozen_release
from tests.factories.replysets import audit_reply_set, make_reply_set
from tests.factories.screening import REVIEW_SCORES, make_review, make_screening_round
from tests.factories.users import PASSWORD, UserFactory

__all__ = [
    "audit_reply_set",
    "make_reply_set",
    "PASSWORD",
    "REVIEW_SCORES",
    "UserFactory",
    "drive_evaluation_run",
    "make_calibration_run",
    "make_evaluation_run",
    "make_frozen_release",
    "make_item",
    "make_judge",
    "make_judge_selection",
    "make_labelled_comparison_set",
    "make_llm_endpoint",
    "make_review",
    "make_screening_round",
    "mcq_content",
    "mcq_prompts",
    "prefer_by_quality",
    "run_queued_collections",
    "run_queued_report_computations",
    "work_llm_run",
]
