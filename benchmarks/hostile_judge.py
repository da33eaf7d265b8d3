"""The hostile-client benchmark's verdicts on each case's answers: 5xx answers, answers that
leak internals, uploads accepted that the reference check refuses, and (for information)
uploads the reference accepts that the gateway refused.

Answers are matched to requests in order, as HTTP/1.1 answers pipelined requests: the k-th
answer belongs to the k-th request the reference reads from the bytes sent. An accepted upload
the reference cannot even frame (the gateway read the bytes differently: a desync) counts as
accepted but invalid.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass

from hostile_cases import Case
from hostile_driver import Answer, Outcome
from hostile_http import Parsed, parse_requests
from hostile_reference import TokenInfo, upload_game, upload_problem

LEAK = re.compile(
    r"Traceback|File \"|\.py\b|\bline \d+|rediss?://|<[\w.]+ object at 0x|\bat 0x[0-9a-fA-F]+"
    r"|\b[A-Z]\w*(?:Error|Exception)\b|\b(?:TooLarge|Refused|StackError|ExtraData"
    r"|ClientDisconnect)\b|(?i:server: *(?:uvicorn|starlette|python))|(?:site|dist)-packages"
    r"|/(?:usr|home|work|tmp|opt|root|proc|var|etc|srv)/|dtype\(|\bnumpy\.|\bmsagent\.")
"""What an answer must not hold: tracebacks, source paths and lines, Redis URLs, exception
class names, Python reprs, the server software (unless the client sent the same text, which an
answer may quote back)."""

EXAMPLES = 5
"""Examples kept of each kind of finding."""


@dataclass
class Finding:
    """One case that broke a target, with what it sent and got; ``why`` groups findings."""

    case: Case
    what: str
    why: str
    answer: bytes

    def describe(self) -> str:
        """A few lines: the case, the finding, the request and the answer (abridged)."""
        c = self.case
        replay = f"--replay {'s' if c.family == 'slow' else ''}{c.index}"
        return (f"  case {c.index} [{c.family}: {c.kind}] {self.what} ({replay})\n"
                f"    request: {_abridged(c.data)}\n    answer:  {_abridged(self.answer)}")

    @property
    def group(self) -> str:
        """The finding's kind: the case's family and kind (without details), and why."""
        return f"{self.case.family}: {self.case.kind.split(':')[0]}: {self.why}"


def _abridged(data: bytes, head: int = 300, tail: int = 80) -> str:
    """The bytes' repr, middle cut when long."""
    if len(data) <= head + tail:
        return repr(data)
    return f"{data[:head]!r} ... ({len(data)} bytes) ... {data[-tail:]!r}"


class Judge:
    """Verdicts on every case, by family and by kind of finding.

    Args:
        tokens: What each token may do (the reference's view).
    """

    def __init__(self, tokens: dict[str, TokenInfo]) -> None:
        self.tokens = tokens
        self.sent: Counter[str] = Counter()
        self.statuses: defaultdict[str, Counter[int]] = defaultdict(Counter)
        self.ended: Counter[str] = Counter()
        self.findings: defaultdict[str, list[Finding]] = defaultdict(list)
        self.counts: Counter[str] = Counter()
        self.refused_valid: Counter[int] = Counter()
        self.timeouts: Counter[str] = Counter()
        self.groups: defaultdict[str, Counter[str]] = defaultdict(Counter)
        self.requests = 0

    def judge(self, case: Case, outcome: Outcome) -> None:
        """Record one case's answers and whatever they break."""
        parsed: Parsed = case.extra.get("parsed") or parse_requests(case.data)
        self.sent[case.family] += 1
        self.requests += max(1, len(parsed.requests))
        self.ended[f"{case.family}: {outcome.ended.split(' ')[0]}"] += 1
        if outcome.ended == "timeout":
            self.timeouts[f"{case.family}: {case.kind}"] += 1
        for answer in outcome.answers or [Answer(-1, [], b"")]:
            self.statuses[case.family][answer.status] += 1
        for answer in outcome.answers:
            if answer.status >= 500:
                self._found("5xx", case, f"status {answer.status}", outcome.raw,
                            str(answer.status))
        leaks = self._leaks(case, parsed, outcome.answers)
        if leaks:
            self._found("leaks", case, f"leaks {sorted(leaks)}", outcome.raw, str(sorted(leaks)))
        self._uploads(case, parsed, outcome.answers, outcome.raw)
        heads = {k for k, r in enumerate(parsed.requests) if r.method == "HEAD"}
        self._shapes(case, [a for k, a in enumerate(outcome.answers) if k not in heads])

    @staticmethod
    def _leaks(case: Case, parsed: Parsed, answers: list[Answer]) -> set[str]:
        """What the answers hold of ``LEAK`` that the request did not (the OpenAPI document
        names FastAPI's validation-error schemas: public, not a leak)."""
        sent = case.data.decode("latin-1")
        found = set()
        for k, answer in enumerate(answers):
            target = parsed.requests[k].target if k < len(parsed.requests) else ""
            text = answer.raw.decode("latin-1")
            if target.split("?")[0] == "/openapi.json" and answer.status == 200:
                text = re.sub(r"\b(?:HTTP)?ValidationError\b", "", text)
            found |= {m.group() for m in LEAK.finditer(text) if m.group() not in sent}
        return found

    def _uploads(self, case: Case, parsed: Parsed, answers: list[Answer], raw: bytes) -> None:
        """Accepted uploads the reference refuses; refused ones it accepts (information)."""
        problems = [upload_problem(r, self.tokens) if upload_game(r) is not None else "other"
                    for r in parsed.requests]
        for k, answer in enumerate(answers):
            problem = problems[k] if k < len(problems) else \
                f"the reference cannot frame it ({parsed.error})"
            is_upload = k < len(problems) and problem != "other"
            if answer.status not in (200, 201) or not (is_upload or _says_stored(answer)):
                continue
            if problem is not None:
                self._found("accepted_invalid", case, f"answer {k + 1} {answer.status} to an "
                            f"upload the reference refuses: {problem}", raw, problem)
        for k, problem in enumerate(problems):
            if problem is None and (k >= len(answers) or answers[k].status not in (200, 201)):
                status = answers[k].status if k < len(answers) else -1
                self.refused_valid[status] += 1
                self._found("refused_valid", case, f"status {status}", raw, str(status))

    def _shapes(self, case: Case, answers: list[Answer]) -> None:
        """Error answers that are not ``{"error": "..."}`` (information)."""
        for answer in answers:
            if answer.status >= 400 and not _error_shaped(answer.body):
                self._found("not_json", case, f"status {answer.status} body "
                            f"{answer.body[:80]!r}", answer.body, str(answer.status))

    def _found(self, kind: str, case: Case, what: str, answer: bytes, why: str = "") -> None:
        """Count a finding, keeping the first of each group (and a few groups)."""
        self.counts[kind] += 1
        finding = Finding(case, what, why or what, answer[:2000])
        self.groups[kind][finding.group] += 1
        if len(self.groups[kind]) <= EXAMPLES * 2 and self.groups[kind][finding.group] == 1:
            self.findings[kind].append(finding)

    def status_total(self) -> Counter[int]:
        """Answers by status, all families together."""
        total: Counter[int] = Counter()
        for counter in self.statuses.values():
            total.update(counter)
        return total


def _says_stored(answer: Answer) -> bool:
    """Whether an answer reads like an accepted upload's."""
    return b'"stored"' in answer.body or b'"duplicate"' in answer.body


def _error_shaped(body: bytes) -> bool:
    """Whether a body is ``{"error": "<text>"}``."""
    try:
        value = json.loads(body)
    except ValueError:
        return False
    return isinstance(value, dict) and set(value) == {"error"} and isinstance(value["error"], str)
