"""Claim support: does a cited passage support the sentence that cites it?

:mod:`audit.support.model` holds the contract every judge and every caller shares (labels,
the result, the evidence a judge sees, the :class:`~audit.support.model.Judge` Protocol).
"""
