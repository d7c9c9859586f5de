"""The claim-support judges by name: ``--judge NAME`` on the command line, ``judge`` elsewhere.

:data:`JUDGES` maps a judge's name to a factory that takes the environment mapping (the
process's ``os.environ`` at the edge, a dict in tests) and returns a :class:`Judge`; a factory
reads only the settings it needs from the mapping it is given (never ``os.environ`` itself) and
raises :class:`~audit.errors.InputError` when its configuration is missing or malformed (never
a judge that cannot work). :data:`DEFAULT_JUDGE` is the deterministic, offline rules judge
(:class:`~audit.support.rules.RulesJudge`, which reads no setting); the LLM judges
(:mod:`audit.support.llm`) are never the default and are loaded only when named.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from audit.errors import InputError
from audit.support.model import Judge
from audit.support.rules import RulesJudge

DEFAULT_JUDGE = "rules"
"""The judge used when none is named (deterministic, offline)."""


def _rules(env: Mapping[str, str]) -> Judge:
    del env  # the rules judge has no settings
    return RulesJudge()


def _llm_openai(env: Mapping[str, str]) -> Judge:
    from audit.support.llm import LLMJudge, config_from_env

    return LLMJudge(config_from_env("openai", env))


def _llm_anthropic(env: Mapping[str, str]) -> Judge:
    from audit.support.llm import LLMJudge, config_from_env

    return LLMJudge(config_from_env("anthropic", env))


JUDGES: dict[str, Callable[[Mapping[str, str]], Judge]] = {
    "rules": _rules,
    "llm-openai": _llm_openai,
    "llm-anthropic": _llm_anthropic,
}
"""Judge name → factory taking the environment mapping."""


def judge_by_name(name: str, env: Mapping[str, str]) -> Judge:
    """The judge called ``name``, configured from ``env``; an unknown name is an InputError
    naming the choices."""
    factory = JUDGES.get(name)
    if factory is None:
        raise InputError(f"unknown judge {name!r} (expected one of {', '.join(sorted(JUDGES))})")
    return factory(env)
