"""What screening permissions mean for each role (collected by ``core.roles``)."""

from core.roles import ADMIN, EXPERT, LEAD_EXPERT

_REVIEW = ["screening.review_item"]
_LEAD = ["screening.adjudicate_item", "screening.manage_round"]

PERMISSIONS = {
    EXPERT: _REVIEW,
    LEAD_EXPERT: _REVIEW + _LEAD,
    ADMIN: _REVIEW + _LEAD,
}
