"""What pairwise-labelling permissions mean for each role (collected by ``core.roles``)."""

from core.roles import ADMIN, LEAD_EXPERT, RESEARCHER

PERMISSIONS = {
    RESEARCHER: ["labelling.manage_comparisons"],
    LEAD_EXPERT: ["labelling.manage_comparisons"],
    ADMIN: ["labelling.manage_comparisons"],
}
