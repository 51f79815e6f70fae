"""The local OpenAI-compatible LLM simulator (``manage.py llm_simulator``), a real HTTP server for demos and tests.

``server`` speaks the HTTP API (chat and legacy completions, files and batches through ``batches``);
``simulation`` decides what each simulated model answers. It shares only the wire format of ``llm.parsers``
with the rest of llm, and nothing in llm imports it.
"""
