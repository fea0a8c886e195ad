"""Errors the domain raises; each carries a sentence a person understands."""


class CoxError(Exception):
    """Base class: `str(error)` is the message shown to people."""


class Invalid(CoxError):
    """The input is malformed or refers to nothing (HTTP 400/422)."""


class NotFound(CoxError):
    """No such request, agent or person (HTTP 404)."""


class Forbidden(CoxError):
    """The caller may not do this (HTTP 403)."""


class Conflict(CoxError):
    """The action does not fit the current state (HTTP 409)."""
