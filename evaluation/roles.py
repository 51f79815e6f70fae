"""What evaluation permissions mean for each role (collected by ``core.roles``).

Evaluation pages, reports, drill-downs and files tie responses to model codes and endpoints, so they are for
researchers and admins, never for the experts who label responses blind.
"""

from core.roles import ADMIN, RESEARCHER

PERMISSIONS = {
    RESEARCHER: ["evaluation.run_evaluation"],
    ADMIN: ["evaluation.run_evaluation"],
}
