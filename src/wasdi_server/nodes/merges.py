"""The main node's answers that include the compute nodes' (gaps §8): each active compute node is asked the
same call, with the caller's own session (so each node applies the caller's rights), at once and each within
the node-call timeout, and the answers are added to the main node's.  A node that does not answer is left
out with a log line naming it: the merge answers with what the live nodes have.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from ..errors import ServerFailure
from .calls import NodeCall
from .client import NodeClient, NodeUnreachable, Peer
from .identity import NodeIdentity

if TYPE_CHECKING:
    from .locator import ProcessLocator

log = logging.getLogger("wasdi_server.nodes")

UNFINISHED = ("CREATED", "RUNNING", "WAITING", "READY")


class Merges:
    """Asks the compute nodes and adds up their answers (on the main node of a deployment only)."""

    def __init__(self, identity: NodeIdentity, client: NodeClient | None) -> None:
        self.identity = identity
        self.client = client
        self.locator: ProcessLocator | None = None
        """Which node holds a process (set in a deployment)."""
        self._pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="wasdi-merge")

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def active(self, call: NodeCall) -> bool:
        """Whether this call merges: on the main node, not for another node's own call."""
        return (self.client is not None and self.identity.is_main and self.identity.in_deployment
                and not self.identity.is_node_call(call.request.get_header))

    def ask_nodes(self, call: NodeCall, query: dict[str, Any] | None = None) -> list[Any]:
        """The JSON answers of every live compute node to the same call (path and query, or ``query``)."""
        if not self.active(call) or self.client is None:
            return []
        client = self.client
        peers = client.compute_nodes()
        if not peers:
            return []
        sent = query if query is not None else {k: v for k, v in call.params.items() if v not in (None, "", [])}
        method, path = call.endpoint.method, call.endpoint.path

        def ask(peer: Peer) -> tuple[Peer, Any, str | None]:
            try:
                return peer, client.call_json(peer, method, path, query=sent, session=call.session_id), None
            except NodeUnreachable as e:
                return peer, None, str(e)

        answers = []
        for peer, answer, problem in self._pool.map(ask, peers):
            if problem is not None:
                log.warning("%s: node %s is left out of the merge: %s", path, peer.code, problem)
            elif answer is not None:
                answers.append(answer)
        return answers

    def from_node(self, call: NodeCall, code: str) -> Any:
        """The same call answered by node ``code`` alone (``queuesStatus?nodeCode=``)."""
        if self.client is None or not self.identity.in_deployment:
            raise ServerFailure(f"the node {code} is not part of this deployment")
        try:
            peer = self.client.peer(code)
            params = {k: v for k, v in call.params.items() if v not in (None, "", [])}
            return self.client.call_json(peer, call.endpoint.method, call.endpoint.path, query=params,
                                         session=call.session_id)
        except NodeUnreachable as e:
            raise ServerFailure(str(e)) from e

    def statuses(self, call: NodeCall, ids: list[Any], local: Callable[[Any], str],
                 held_here: Callable[[str], bool]) -> list[str]:
        """``/process/statusbyid``: each id's status in input order, those of processes held by other nodes
        asked of their node (one call per node, with the caller's session, so each node applies the caller's
        rights); a node that does not answer leaves its ids ERROR, with a log line."""
        out = [local(process_id) for process_id in ids]
        client, locator = self.client, self.locator
        if client is None or locator is None or not self.identity.in_deployment \
                or self.identity.is_node_call(call.request.get_header):
            return out
        elsewhere: dict[str, list[int]] = defaultdict(list)
        for index, process_id in enumerate(ids):
            if isinstance(process_id, str) and not held_here(process_id):
                code = locator.node_of(process_id)
                if code and code != self.identity.code:
                    elsewhere[code].append(index)

        def ask(code: str) -> tuple[str, Any, str | None]:
            try:
                peer = client.peer(code)
                return code, client.call_json(peer, "POST", call.endpoint.path, session=call.session_id,
                                              body=[ids[i] for i in elsewhere[code]]), None
            except NodeUnreachable as e:
                return code, None, str(e)

        for code, answer, problem in self._pool.map(ask, list(elsewhere)):
            if problem is not None or not isinstance(answer, list) or len(answer) != len(elsewhere[code]):
                log.warning("%s: the statuses of node %s are left out: %s", call.endpoint.path, code,
                            problem or "an answer of another length")
                continue
            for index, status in zip(elsewhere[code], answer, strict=True):
                out[index] = str(status)
        return out

    # -- how answers add up -------------------------------------------------------------------------------
    def history(self, call: NodeCall, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``/process/byapp``: every node's runs, newest first."""
        merged = rows + [row for answer in self.ask_nodes(call) if isinstance(answer, list) for row in answer]
        return sorted(merged, key=lambda r: str(r.get("operationDate") or ""), reverse=True)

    def app_stats(self, call: NodeCall, stats: dict[str, Any]) -> dict[str, Any]:
        """``/process/appstats``: counts added, users joined, the mean time weighted by finished runs."""
        total = dict(stats)
        users = set(stats.get("users") or [])
        finished = _finished(stats)
        weighted = float(stats.get("mediumTime") or 0) * finished
        for answer in self.ask_nodes(call):
            if not isinstance(answer, dict):
                continue
            for name in ("runs", "error", "done", "stopped"):
                total[name] = int(total.get(name) or 0) + int(answer.get(name) or 0)
            users |= set(answer.get("users") or [])
            weighted += float(answer.get("mediumTime") or 0) * _finished(answer)
            finished += _finished(answer)
        total["users"] = sorted(users)
        total["uniqueUsers"] = len(users)
        total["mediumTime"] = int(weighted / finished) if finished else 0
        return total

    def total(self, call: NodeCall, value: int) -> int:
        """``/process/runningTime/UI``: milliseconds added."""
        return value + sum(int(a) for a in self.ask_nodes(call) if isinstance(a, int | float))

    def by_subscription(self, call: NodeCall, value: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
        """``/process/runningTime/SP``: milliseconds added by subscription and project."""
        out: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        for answer in [value, *self.ask_nodes(call)]:
            if not isinstance(answer, dict):
                continue
            for subscription, projects in answer.items():
                for project, ms in (projects or {}).items():
                    out[subscription][project] += int(ms or 0)
        return {s: dict(p) for s, p in out.items()}

    def computing_times(self, call: NodeCall, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``/process/runningtimeproject[/byuser]``: milliseconds added by subscription, project and user."""
        totals: dict[tuple[str, str, str], int] = defaultdict(int)
        for row in _rows(rows, self.ask_nodes(call)):
            totals[(row.get("subscriptionId") or "", row.get("projectId") or "", row.get("userId") or "")] += int(
                row.get("computingTime") or 0)
        return [{"subscriptionId": s, "projectId": p, "userId": u, "computingTime": t}
                for (s, p, u), t in sorted(totals.items())]

    def user_runs_elsewhere(self, call: NodeCall, keep: Callable[[dict[str, Any]], bool]) -> bool:
        """``isAppPurchased``: whether a compute node lists a run of the caller (``/process/byusr``) that
        ``keep`` accepts."""
        if not self.active(call) or self.client is None:
            return False
        client = self.client
        for peer in client.compute_nodes():
            try:
                runs = client.call_json(peer, "GET", "/process/byusr", session=call.session_id)
            except NodeUnreachable as e:
                log.warning("isAppPurchased: node %s is left out: %s", peer.code, e)
                continue
            if isinstance(runs, list) and any(isinstance(r, dict) and keep(r) for r in runs):
                return True
        return False


def _finished(stats: dict[str, Any]) -> int:
    return sum(int(stats.get(name) or 0) for name in ("error", "done", "stopped"))


def _rows(local: list[dict[str, Any]], answers: Iterable[Any]) -> Iterable[dict[str, Any]]:
    yield from local
    for answer in answers:
        if isinstance(answer, list):
            yield from (row for row in answer if isinstance(row, dict))


def active_run(row: dict[str, Any]) -> bool:
    """A processor run still unfinished (what blocks a paid run's purchase from being spent twice)."""
    return row.get("operationType") == "RUNPROCESSOR" and row.get("status") in UNFINISHED
