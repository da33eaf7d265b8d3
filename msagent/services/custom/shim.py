"""A service class for a user's class: launched by msagent's runtime like its own services,
it imports the user's script in its own process (no user code is pickled) and serves the
user's ``@register`` methods with their own options (batching, fire-and-forget...)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msagent.config.custom_services import user_class
from msagent.runtime.spec import SPEC_ATTR, RegisterSpec, registered_methods


def user_service(name: str, script: str, class_name: str) -> type:
    """A class named ``name`` whose instances wrap one instance of the user's class."""
    namespace: dict[str, Any] = {
        "__init__": _builder(script, class_name), "__module__": __name__,
        "__doc__": f"The user service {name}: {class_name} of {script}."}
    for method, spec in registered_methods(user_class(script, class_name)).items():
        namespace[method] = _forwarder(method, spec)
    return type(name, (), namespace)


def _builder(script: str, class_name: str) -> Callable[..., None]:
    """The wrapper's constructor: the user's class built from the table's ``settings``."""
    def __init__(self: Any, settings: dict[str, Any]) -> None:
        self.user = user_class(script, class_name)(**settings)
    return __init__


def _forwarder(method: str, spec: RegisterSpec) -> Callable[..., Any]:
    """A registered method that calls the user's with the same options."""
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(self.user, method)(*args, **kwargs)
    call.__name__ = call.__qualname__ = method
    setattr(call, SPEC_ATTR, spec)
    return call
