"""What calibration permissions mean for each role (collected by ``core.roles``).

Judge prompts are written by experts; running judges and reading calibration reports is for researchers and
admins, since those pages show which model wrote the responses experts label.
"""

from core.roles import ADMIN, EXPERT, LEAD_EXPERT, RESEARCHER

PERMISSIONS = {
    EXPERT: ["calibration.author_judge_prompt"],
    LEAD_EXPERT: ["calibration.author_judge_prompt"],
    RESEARCHER: ["calibration.run_judge"],
    ADMIN: ["calibration.author_judge_prompt", "calibration.run_judge"],
}
