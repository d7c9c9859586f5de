"""The registry of claim-support judges: name → factory taking the environment mapping.

``JUDGES["rules"]`` is the default (:class:`~audit.support.rules.RulesJudge`, offline, reads no
setting). Other judges (an LLM over HTTP) register their own entry; a factory reads only the
settings it needs from the mapping it is given (never ``os.environ`` itself) and raises
:class:`~audit.errors.InputError` when they are missing or invalid.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from audit.errors import InputError
from audit.support.model import Judge
from audit.support.rules import RulesJudge

DEFAULT_JUDGE = "rules"


def _rules(env: Mapping[str, str]) -> Judge:
    del env  # the rules judge has no settings
    return RulesJudge()


JUDGES: dict[str, Callable[[Mapping[str, str]], Judge]] = {"rules": _rules}


def make_judge(name: str, env: Mapping[str, str]) -> Judge:
    """The judge registered as ``name``; InputError naming the choices when there is none."""
    factory = JUDGES.get(name)
    if factory is None:
        raise InputError(f"unknown judge {name!r}; choose one of {', '.join(sorted(JUDGES))}")
    return factory(env)
