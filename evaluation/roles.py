"""What evaluation permissions mean for each role (collected by ``core.roles``)."""

from core.roles import ADMIN, RESEARCHER

PERMISSIONS = {
    RESEARCHER: ["evaluation.run_evaluation"],
    ADMIN: ["evaluation.run_evaluation"],
}
