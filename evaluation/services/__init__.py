"""Every write of the evaluation app, as plain functions called by views, the API, commands and the collector.

- ``runs``: create, estimate, start, pause and resume, advance through the phases, compute the report, cancel;
- ``judging``: which pairs the judge sees (round-robin or adaptive) and the judge's LLM runs;
- ``collect``: the evaluation collector, which stores what a finished LLM run brought back and advances the run.
"""

from evaluation.services.collect import evaluation_llm_run_collect
from evaluation.services.common import EVALUATION_PURPOSE, OBJECTIVE
from evaluation.services.runs import (
    evaluation_estimate,
    evaluation_report_compute,
    evaluation_run_advance,
    evaluation_run_cancel,
    evaluation_run_create,
    evaluation_run_pause,
    evaluation_run_resume,
    evaluation_run_start,
    logprob_probe,
)

__all__ = [
    "EVALUATION_PURPOSE",
    "OBJECTIVE",
    "evaluation_estimate",
    "evaluation_llm_run_collect",
    "evaluation_report_compute",
    "evaluation_run_advance",
    "evaluation_run_cancel",
    "evaluation_run_create",
    "evaluation_run_pause",
    "evaluation_run_resume",
    "evaluation_run_start",
    "logprob_probe",
]
