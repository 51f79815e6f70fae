"""Moving a run forward in this process, for commands and the demo that do without a ``db_worker``."""

from llm import collection
from llm.worker import runner, tasks


def run_work_inline(*, run_id: int) -> str:
    """Work on a run here as a worker would, then collect it here if it finished; return its status.

    The ``run_collect`` task queued when the run finished then finds it collected and does nothing. A run left
    unfinished because this process was asked to stop is queued for a worker to carry on.
    """
    status = runner.run_work(run_id=run_id, continue_later=tasks.run_work.enqueue)
    collection.run_collect(run_id=run_id)
    return status
