"""What release permissions mean for each role (collected by ``core.roles``)."""

from core.roles import ADMIN

PERMISSIONS = {
    ADMIN: ["releases.manage_release", "releases.view_release", "releases.add_release", "releases.change_release"],
}
