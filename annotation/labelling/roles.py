"""What pairwise-labelling permissions mean for each role (collected by ``core.roles``).

Whoever imports or generates responses, or builds a comparison set, sees which model wrote which response; so
those who do that (researchers, admins) never label, and those who label (experts, lead experts) never build.
"""

from core.roles import ADMIN, EXPERT, LEAD_EXPERT, RESEARCHER

_BUILD = ["labelling.manage_comparisons"]
_LABEL = ["labelling.label_comparisons"]

PERMISSIONS = {
    RESEARCHER: _BUILD,
    EXPERT: _LABEL,
    LEAD_EXPERT: _LABEL,
    ADMIN: _BUILD,
}
