"""The user's own services (``[services.custom.NAME]``): ``user_service`` makes the class
msagent launches for one, which builds the user's class in its own process."""

from msagent.services.custom.shim import user_service

__all__ = ["user_service"]
