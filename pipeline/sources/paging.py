"""The one loop that does the I/O of every source's paging (:class:`~pipeline.sources.base.
Pager`): ask the pager's first request, hand each answer to its pure ``step``, report the
records the parser refused in that answer (as it arrives, so the harvest can tell which
answer refused what), ask the next request, until the step says done.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    import httpx

    from pipeline.http import HttpClient
    from pipeline.sources.base import Pager, Request

T = TypeVar("T")


def send(client: HttpClient, source: str, request: Request) -> httpx.Response:
    """One request (a POST when it has a form) through the client."""
    if request.form is not None:
        return client.post(request.url, data=dict(request.form), source=source)
    params = dict(request.params) or None
    return client.get(request.url, params=params, source=source, expect=request.expect)


def walk(client: HttpClient, source: str, pager: Pager[T]) -> T:
    """Walk every page of ``pager``; its result."""
    request = pager.first()
    while request is not None:
        step = pager.step(send(client, source, request))
        client.report_refused(source, list(step.refused))
        request = step.next
    return pager.result()
