"""Parsers the calibration app registers with the LLM runs (imported from ``CalibrationConfig.ready``)."""

from calibration.prompts import VerdictError, parse_verdict
from llm import parsers


@parsers.register("calibration.verdict")
def parse_judge_verdict(text: str, response: dict) -> dict:
    """Return ``{"winner": "A"|"B"|"TIE", "margin": 0..5}`` from a judge's reply."""
    try:
        verdict = parse_verdict(text)
    except VerdictError as exc:
        raise parsers.ParseError(str(exc)) from exc
    return {"winner": verdict.winner, "margin": verdict.margin}
