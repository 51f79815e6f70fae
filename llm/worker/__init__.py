"""The LLM workers: what a ``db_worker`` process does to move runs forward.

``tasks.run_work`` works on a run (``runner``): it leases chunks and stores their outcomes (``chunks``,
``outcomes``, ``leases``), holds the endpoint's limits across workers (``limits``), sends provider batches
(``batches``), survives a lost database (``database``) and sweeps up after dead workers (``recovery``).

The worker uses llm's records (models, calls, the call log, lifecycle) and never its services or pages;
``llm.services`` queues ``run_work`` and is the one module above that imports this package
(tests/llm/test_layers.py checks both directions).
"""
