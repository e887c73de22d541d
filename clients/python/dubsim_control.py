"""Control client of dubsim, the simulator of a video-dubbing API.

One module, standard library only (``urllib.request`` and ``json``), Python 3.9 or later.
It calls the control API under ``/_sim`` of a running dubsim (docs/control-api.md): the
clock, reset, accounts, forced outcomes, HTTP faults, the request journal with its
verification, and the client conformance report. Copy the file into your tests, or put
its folder on ``PYTHONPATH``.

    from dubsim_control import Client

    sim = Client("http://localhost:8080")      # or DUBSIM_URL; token: DUBSIM_CONTROL_TOKEN
    sim.clock.freeze()
    key = sim.accounts.create(plan="pro", balance_minutes=100)["api_key"]
    # ... your code creates a project with that key ...
    sim.clock.advance(600)
    print(sim.journal.report(key, text=True))

    with sim.sandbox() as sb:                  # a simulator of this test's own, deleted at exit
        key = sb.key("dubsim-pro")             # reaches the sandbox at sim's address too
        sb.client.clock.advance(600)           # this sandbox's clock only

Answers are the control API's JSON as Python values (dicts with its snake_case names);
the ``TypedDict`` classes below describe the main ones. Arguments use the same names as
the JSON bodies and queries. A call that is answered with anything but 2xx raises
:class:`DubsimError`, which carries the status and the control API's error body.
"""

from __future__ import annotations

import json
import os
import secrets
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime, timezone
from typing import Any, Dict, Iterator, List, Mapping, Optional, TypedDict, Union

__all__ = [
    "Client",
    "DubsimError",
    "Sandbox",
    "OUTCOME_READY",
    "OUTCOME_ERROR",
    "PLATFORM_PREFIX",
    "STUDIO_PREFIX",
    "USER_AGENT",
]

__version__ = "0.1.0"

#: The User-Agent of every call: the request journal shows which client sent it.
USER_AGENT = "dubsim-control-python/" + __version__

#: The paths under which dubsim serves one interface alone: the base URL plus either is
#: that interface's own base URL, where no request is routed to the other interface.
PLATFORM_PREFIX = "/platform"
STUDIO_PREFIX = "/studio"

#: Outcomes of forced outcomes and outcome rules.
OUTCOME_READY = "ready"
OUTCOME_ERROR = "error"

#: The header that marks a call from a program: dubsim refuses a call that changes state
#: without it (or a JSON body), so that no HTML form of another site can send one.
HEADER_CONTROL = "X-Dubsim-Control"

#: How much of an error answer is kept.
_MAX_ERROR_BODY = 1 << 20


class Clock(TypedDict, total=False):
    """The simulated clock (``GET /_sim/clock``); ``next_due`` adds ``transition``."""

    now: str
    time_scale: float
    frozen: bool
    transition: Dict[str, Any]


class Health(TypedDict, total=False):
    """The answer of ``GET /_sim/health``."""

    status: str
    version: str
    now: str
    uptime_seconds: float


class Account(TypedDict, total=False):
    """An account as the control API shows it (storage without its secret)."""

    api_key: str
    name: str
    plan: str
    balance_minutes: int
    retranslation_enabled: bool
    cloning_enabled: bool
    created_at: str
    company_id: str
    user_id: str
    user_email: str
    storage: Optional[Dict[str, Any]]
    rate_limit: Optional[Dict[str, Any]]


class Forced(TypedDict, total=False):
    """The answer to a forced outcome: the status and, while processing, how it ends."""

    project_id: str
    artifact_id: str
    status: str
    due_at: str
    planned_outcome: str
    error_message: str


class OutcomeRule(TypedDict, total=False):
    """A stored forced-outcome rule."""

    id: str
    api_key: str
    source_url_pattern: str
    remaining: int
    outcome: str
    error_message: str
    resource: str
    created_at: str


class Fault(TypedDict, total=False):
    """A fault rule as listed: the rule plus remaining, hits, expires_at and state."""

    id: str
    method: str
    path: str
    api_key: str
    count: int
    probability: float
    ttl_seconds: float
    action: Dict[str, Any]
    remaining: Optional[int]
    hits: int
    expires_at: Optional[str]
    state: str  # active, spent or expired


class Request(TypedDict, total=False):
    """A request recorded in the journal (the main fields; see docs/control-api.md)."""

    seq: int
    time: str
    sim_time: str
    duration_ms: float
    interface: str
    routed_by: str
    method: str
    path: str
    query: str
    api_key: str
    headers: Dict[str, str]
    request_body: str
    status: int
    response_body: str
    fault: str


class VerifyResult(TypedDict, total=False):
    """How many requests matched, whether that was expected, and the near misses."""

    matched: int
    ok: bool
    expected: str
    near_misses: List[Dict[str, Any]]
    warning: str


class Report(TypedDict, total=False):
    """The conformance report of one API key."""

    api_key: str
    generated_at: str
    summary: Dict[str, Any]
    findings: List[Dict[str, Any]]


class SandboxInfo(TypedDict, total=False):
    """A sandbox as the control API shows it (``/_sim/sandboxes``)."""

    id: str
    created_at: str
    last_used_at: str
    expires_at: str
    clock: Clock
    api_keys: Dict[str, str]
    base_url: str
    control_url: str
    dashboard_url: str


class DubsimError(Exception):
    """An answer of the control API other than 2xx.

    Attributes: ``method`` and ``path`` of the call, ``status`` (the HTTP status),
    ``error`` and ``message`` (the envelope ``{"error": ..., "message": ...}``; for an
    answer not in it, such as a proxy's 502, ``error`` is empty and ``message`` is the
    body cut to 1 KiB) and ``body``, the answer's text.
    """

    def __init__(self, method: str, path: str, status: int, body: str) -> None:
        self.method = method
        self.path = path
        self.status = status
        self.body = body
        self.error = ""
        self.message = body.strip()[:1024]
        try:
            env = json.loads(body)
        except ValueError:
            env = None
        if isinstance(env, dict) and isinstance(env.get("error"), str) and env["error"]:
            self.error = env["error"]
            self.message = str(env.get("message", ""))
        super().__init__(str(self))

    def __str__(self) -> str:
        name = self.error or "HTTP error"
        return "dubsim: %s %s: %d %s: %s" % (self.method, self.path, self.status, name, self.message)


class _Unset:
    """The default of an argument that, unlike None (JSON null), sends nothing."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


def _query(**params: Any) -> str:
    pairs = [(k, str(v)) for k, v in params.items() if v is not None and v != ""]
    return "?" + urllib.parse.urlencode(pairs) if pairs else ""


def _fields(**fields: Any) -> Dict[str, Any]:
    """The fields given: None and UNSET leave a field out."""
    return {k: v for k, v in fields.items() if v is not None and v is not UNSET}


def _seg(s: str) -> str:
    return urllib.parse.quote(s, safe="")


def _parse_time(value: Union[str, datetime]) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    s = value.strip()
    if s.endswith("Z") or s.endswith("z"):
        s = s[:-1] + "+00:00"
    # fromisoformat of Python 3.9 and 3.10 takes 3 or 6 fraction digits only.
    head, dot, rest = s.partition(".")
    if dot:
        digits = ""
        while rest and rest[0].isdigit():
            digits, rest = digits + rest[0], rest[1:]
        s = head + "." + (digits + "000000")[:6] + rest
    t = datetime.fromisoformat(s)
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


class Client:
    """A client of the control API of the dubsim at ``base_url``.

    ``base_url`` is the simulator's address without ``/_sim``, such as
    ``"http://localhost:8080"``; by default ``$DUBSIM_URL`` or that address. There dubsim
    serves both interfaces; ``platform_url`` and ``studio_url`` (``base_url`` plus
    ``/platform`` or ``/studio``) each serve one alone: give them to a client under test
    that takes one base URL per interface. ``token`` is
    the control token of a dubsim started with ``--control-token``, sent as
    ``Authorization: Bearer <token>``; by default ``$DUBSIM_CONTROL_TOKEN``, and ``""``
    sends none. ``timeout`` bounds each call in seconds.

    The calls on the whole simulator are methods of the client (:meth:`health`,
    :meth:`work`, :meth:`reset`, :meth:`state`, :meth:`load_fixtures`); the others are in
    its groups ``clock``, ``accounts``, ``outcomes``, ``faults`` and ``journal``. Every
    method is one HTTP call (``clock.advance_to``: two). :meth:`call` sends any other.
    """

    def __init__(
        self,
        base_url: Optional[str] = None,
        token: Optional[str] = None,
        timeout: float = 60.0,
    ) -> None:
        base = base_url or os.environ.get("DUBSIM_URL") or "http://localhost:8080"
        self.base_url: str = base.rstrip("/")
        self.platform_url: str = self.base_url + PLATFORM_PREFIX
        self.studio_url: str = self.base_url + STUDIO_PREFIX
        self.token: str = os.environ.get("DUBSIM_CONTROL_TOKEN", "") if token is None else token
        self.timeout: float = timeout
        self.clock = ClockAPI(self)
        self.accounts = AccountsAPI(self)
        self.outcomes = OutcomesAPI(self)
        self.faults = FaultsAPI(self)
        self.journal = JournalAPI(self)

    def call(self, method: str, path: str, body: Any = UNSET, *, text: bool = False) -> Any:
        """Sends one control call and returns its decoded JSON answer (its text with
        ``text=True``; None for an empty answer).

        ``body``, unless left out, is sent as JSON. Every call carries the
        ``X-Dubsim-Control`` header, which dubsim needs (or a JSON body) on calls that
        change state, and the token when there is one.
        """
        data = None
        headers = {
            HEADER_CONTROL: "1",
            "Accept": "text/plain" if text else "application/json",
            "User-Agent": USER_AGENT,
        }
        if body is not UNSET:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        req = urllib.request.Request(self.base_url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as e:
            with e:
                err_body = e.read(_MAX_ERROR_BODY).decode("utf-8", "replace")
            raise DubsimError(method, path, e.code, err_body) from None
        if text:
            return raw.decode("utf-8")
        if not raw.strip():
            return None
        return json.loads(raw)

    # ----- the whole simulator -----

    def health(self) -> Health:
        """Whether the simulator is up (``GET /_sim/health``; open even with ``--no-control``)."""
        return self.call("GET", "/_sim/health")

    def work(self) -> List[Dict[str, Any]]:
        """The background work in flight (``GET /_sim/work``), oldest first."""
        return self.call("GET", "/_sim/work")["work"]

    def reset(self) -> None:
        """Restores the fixture accounts and deletes every other account, project, studio
        record and forced-outcome rule; the clock and id sequences carry on. Fault rules
        and the journal have their own resets (``faults.clear``, ``journal.clear``)."""
        self.call("POST", "/_sim/reset")

    def state(
        self,
        api_key: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Dict[str, Any]:
        """Dumps accounts, one page of projects (newest first), pending transitions and
        rules (``GET /_sim/state``); ``api_key`` limits it to one account. When more
        projects remain the answer has ``next_cursor``: pass it as ``cursor`` (with the
        same ``api_key``) for the next page, or use :meth:`projects`."""
        return self.call("GET", "/_sim/state" + _query(api_key=api_key, limit=limit, cursor=cursor))

    def projects(self, api_key: Optional[str] = None, page_size: Optional[int] = None) -> Iterator[Dict[str, Any]]:
        """Every project of the state dump (of ``api_key``, or all), page after page."""
        cursor = None
        while True:
            st = self.state(api_key=api_key, limit=page_size, cursor=cursor)
            yield from st.get("projects") or []
            cursor = st.get("next_cursor")
            if not cursor:
                return

    def load_fixtures(self, fixtures: Mapping[str, Any]) -> Dict[str, int]:
        """Loads fixture content over the startup set (``POST /_sim/fixtures``): any of
        ``accounts``, ``options``, ``voices``, ``media_rules`` and ``studio``, each in the
        shape of its file in fixtures/. Returns the counts of the set now in use."""
        return self.call("POST", "/_sim/fixtures", dict(fixtures))["loaded"]

    # ----- sandboxes -----

    def sandbox(
        self,
        start: Union[str, datetime, None] = None,
        time_scale: Optional[float] = None,
        seed: Optional[int] = None,
    ) -> "Sandbox":
        """Creates a sandbox, a whole simulator of its own inside this dubsim (its clock,
        accounts, data, rules and journal), with an id made here
        (``PUT /_sim/sandboxes/{id}``), and returns it. Its clock is frozen at ``start``
        (an aware datetime or an RFC 3339 string; default: the dubsim's now) unless
        ``time_scale`` > 0; ``seed`` sets its generated ids. Delete it with
        :meth:`Sandbox.delete`, or use it in a ``with`` block, which deletes it at the end.
        A dubsim without sandboxes answers 404, one at its cap 429 ``SandboxLimitError``."""
        body: Dict[str, Any] = {}
        if start is not None:
            body["start"] = _format_time(_parse_time(start))
        if time_scale is not None:
            body["time_scale"] = time_scale
        if seed is not None:
            body["seed"] = seed
        # An id already taken (one chance in 2**80) is a 409: draw another.
        for attempt in range(3):
            try:
                info = self.call("PUT", "/_sim/sandboxes/" + _sandbox_id(), body)
                break
            except DubsimError as e:
                if e.status != 409 or attempt == 2:
                    raise
        return Sandbox(self, info)

    def sandboxes(self) -> List[SandboxInfo]:
        """The sandboxes of this dubsim, oldest first (``GET /_sim/sandboxes``)."""
        return self.call("GET", "/_sim/sandboxes")["sandboxes"]


#: Lower-case Crockford base32: the alphabet of sandbox ids.
_SANDBOX_ID_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"


def _sandbox_id() -> str:
    """A sandbox id: 16 characters from ``secrets`` (80 bits)."""
    return "".join(secrets.choice(_SANDBOX_ID_ALPHABET) for _ in range(16))


def _format_time(t: datetime) -> str:
    return t.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


class Sandbox:
    """A sandbox of a dubsim, made by :meth:`Client.sandbox`.

    Attributes: ``id``; ``base_url``, the dubsim's address as the client reaches it plus
    ``/sbx/<id>``, where the sandbox serves every interface and its control API;
    ``platform_url`` and ``studio_url``, each interface of the sandbox alone;
    ``control_url`` and ``dashboard_url``; ``keys``, each fixture API key
    (``"dubsim-pro"``) mapped to the sandbox's key for that account, which reaches the
    sandbox at the dubsim's own address too; ``client``, a :class:`Client` of the
    sandbox's control API (same token and timeout): ``sb.client.clock.advance(600)``
    moves this sandbox's clock only; ``info``, the creation's answer.

    As a context manager it deletes the sandbox at the end of the block (one deleted
    already, or expired, is no error then).
    """

    def __init__(self, owner: Client, info: SandboxInfo) -> None:
        self._owner = owner
        self.info: SandboxInfo = info
        self.id: str = info["id"]
        self.base_url: str = owner.base_url + "/sbx/" + self.id
        self.platform_url: str = self.base_url + PLATFORM_PREFIX
        self.studio_url: str = self.base_url + STUDIO_PREFIX
        self.control_url: str = self.base_url + "/_sim"
        self.dashboard_url: str = self.base_url + "/_sim/ui"
        self.keys: Dict[str, str] = dict(info.get("api_keys") or {})
        self.client = Client(self.base_url, token=owner.token, timeout=owner.timeout)

    def key(self, name: str) -> str:
        """The sandbox's key for the fixture key ``name``; KeyError if there is none."""
        return self.keys[name]

    def delete(self, missing_ok: bool = False) -> None:
        """Deletes the sandbox and its data (``DELETE /_sim/sandboxes/{id}``). A sandbox
        gone already (deleted, expired) raises a 404 :class:`DubsimError`, unless
        ``missing_ok``."""
        try:
            self._owner.call("DELETE", "/_sim/sandboxes/" + self.id)
        except DubsimError as e:
            if not (missing_ok and e.status == 404):
                raise

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.delete(missing_ok=True)

    def __repr__(self) -> str:
        return "Sandbox(%r, base_url=%r)" % (self.id, self.base_url)


class ClockAPI:
    """The simulated clock: the calls of ``/_sim/clock`` (``Client.clock``)."""

    def __init__(self, client: Client) -> None:
        self._c = client

    def get(self) -> Clock:
        """Reads the clock: ``now``, ``time_scale`` and ``frozen``."""
        return self._c.call("GET", "/_sim/clock")

    def advance(self, seconds: float) -> Clock:
        """Moves simulated time forward and applies every transition that became due, each
        at its own due time. It waits for the downloads the new time depends on (a 504
        :class:`DubsimError` names those still running after ``--advance-wait``)."""
        return self._c.call("POST", "/_sim/clock/advance", {"seconds": seconds})

    def next_due(self) -> Clock:
        """Moves to the earliest pending transition (or applies it if already due); the
        answer's ``transition`` says which. 409 ``ConflictError`` when nothing is pending."""
        return self._c.call("POST", "/_sim/clock/advance", {"next_due": True})

    def advance_to(self, when: Union[str, datetime]) -> Clock:
        """Moves simulated time forward to ``when`` (an aware datetime, or an RFC 3339
        string; a naive one is UTC). A time in the past raises ValueError and changes
        nothing. With a running clock, time also moves between the two calls."""
        target = _parse_time(when)
        now = _parse_time(self.get()["now"])
        if target < now:
            raise ValueError("dubsim: cannot advance to %s: the clock is already at %s" % (target.isoformat(), now.isoformat()))
        return self.advance((target - now).total_seconds())

    def set_scale(self, time_scale: float) -> Clock:
        """Sets the speed of simulated time from now on (0 stops it); ends a freeze."""
        return self._c.call("POST", "/_sim/clock/scale", {"time_scale": time_scale})

    def freeze(self) -> Clock:
        """Stops simulated time."""
        return self._c.call("POST", "/_sim/clock/freeze")

    def resume(self) -> Clock:
        """Restarts simulated time stopped by :meth:`freeze`, at the scale it had."""
        return self._c.call("POST", "/_sim/clock/resume")


class AccountsAPI:
    """Accounts: the calls of ``/_sim/accounts`` and the reset of one (``Client.accounts``)."""

    def __init__(self, client: Client) -> None:
        self._c = client

    def create(
        self,
        api_key: Optional[str] = None,
        name: Optional[str] = None,
        plan: Optional[str] = None,
        balance_minutes: Optional[int] = None,
        retranslation_enabled: Optional[bool] = None,
        cloning_enabled: Optional[bool] = None,
        company_id: Optional[str] = None,
        user_email: Optional[str] = None,
        storage: Optional[Mapping[str, Any]] = None,
        rate_limit: Optional[Mapping[str, Any]] = None,
    ) -> Account:
        """Adds an isolated account and its studio user. Fields left out take defaults: a
        generated key (``dsk_...``), the plan ``none``, no balance, a new studio company
        and a generated email. ``plan``: none, subscription, pro or enterprise."""
        return self._c.call(
            "POST",
            "/_sim/accounts",
            _fields(
                api_key=api_key,
                name=name,
                plan=plan,
                balance_minutes=balance_minutes,
                retranslation_enabled=retranslation_enabled,
                cloning_enabled=cloning_enabled,
                company_id=company_id,
                user_email=user_email,
                storage=storage,
                rate_limit=rate_limit,
            ),
        )

    def update(self, api_key: str, storage: Any = UNSET, rate_limit: Any = UNSET) -> Account:
        """Changes a key's external-bucket credentials and studio rate limit
        (``PATCH /_sim/accounts/{api_key}``): a setting left out stays, None removes it."""
        body: Dict[str, Any] = {}
        if storage is not UNSET:
            body["storage"] = storage
        if rate_limit is not UNSET:
            body["rate_limit"] = rate_limit
        return self._c.call("PATCH", "/_sim/accounts/" + _seg(api_key), body)

    def reset(self, api_key: str) -> None:
        """Deletes one account's projects and idempotency keys and gives it back its
        initial balance."""
        self._c.call("POST", "/_sim/reset", {"api_key": api_key})


class OutcomesAPI:
    """Forced outcomes of projects, artifacts and videos (``Client.outcomes``)."""

    def __init__(self, client: Client) -> None:
        self._c = client

    def force_project(
        self,
        project_id: str,
        outcome: str,
        error_message: Optional[str] = None,
        now: bool = False,
    ) -> Forced:
        """Decides how the current run of a platform project in progress ends: ``error``
        (with ``error_message``) at its due time, or at once with ``now``; ``ready``
        completes it now. 409 ``ConflictError`` when it is not in progress."""
        body = _fields(outcome=outcome, error_message=error_message, now=now or None)
        return self._c.call("POST", "/_sim/projects/%s/outcome" % _seg(project_id), body)

    def force_artifact(
        self,
        artifact_id: str,
        outcome: str,
        error_message: Optional[str] = None,
        now: bool = False,
        size: Optional[int] = None,
        duration_seconds: Optional[float] = None,
    ) -> Forced:
        """Decides how a studio artifact's processing ends (``upload_failed`` with the
        message, or ``upload_completed`` with ``size`` and ``duration_seconds``, else the
        planned ones); at once with ``now``. 409 when it has already finished."""
        body = _fields(
            outcome=outcome,
            error_message=error_message,
            now=now or None,
            size=size,
            duration_seconds=duration_seconds,
        )
        return self._c.call("POST", "/_sim/artifacts/%s/outcome" % _seg(artifact_id), body)

    def set_video_status(self, video_id: str, status: str, auto: bool = False) -> Dict[str, Any]:
        """Gives a studio video a status (new, in_progress, completed) now; with ``auto``
        its automatic lifecycle continues from there, else it stays."""
        return self._c.call("POST", "/_sim/videos/%s/status" % _seg(video_id), {"status": status, "auto": auto})

    def add_rule(
        self,
        outcome: str,
        api_key: Optional[str] = None,
        source_url_pattern: Optional[str] = None,
        count: Optional[int] = None,
        error_message: Optional[str] = None,
        resource: Optional[str] = None,
    ) -> OutcomeRule:
        """Adds a rule: the next ``count`` (default 1) projects, or artifacts with
        ``resource="artifact"``, created by ``api_key`` (any when left out) whose source
        URL matches the glob ``source_url_pattern`` (any) end with ``outcome``."""
        body = _fields(
            api_key=api_key,
            source_url_pattern=source_url_pattern,
            count=count,
            outcome=outcome,
            error_message=error_message,
            resource=resource,
        )
        return self._c.call("POST", "/_sim/outcomes", body)

    def rules(self) -> List[OutcomeRule]:
        """The forced-outcome rules not used up."""
        return self._c.call("GET", "/_sim/outcomes")["rules"]

    def remove_rule(self, rule_id: str) -> None:
        """Deletes a forced-outcome rule (404 when it is gone)."""
        self._c.call("DELETE", "/_sim/outcomes/" + _seg(rule_id))


class FaultsAPI:
    """HTTP fault rules: the calls of ``/_sim/faults`` (``Client.faults``)."""

    def __init__(self, client: Client) -> None:
        self._c = client

    def add(self, rule: Optional[Mapping[str, Any]] = None, **fields: Any) -> Fault:
        """Adds a fault rule, evaluated after the ones already there, and returns it as
        listed. The rule is a dict in the JSON schema of docs/control-api.md (``id``,
        ``method``, ``path``, ``api_key``, ``count``, ``probability``, ``ttl_seconds``,
        ``action``), or keyword arguments of the same names, or both::

            sim.faults.add(method="POST", path="/api/v1/projects", count=1,
                           action={"type": "error", "status": 503})
        """
        body = dict(rule or {})
        body.update(fields)
        return self._c.call("POST", "/_sim/faults", body)

    def list(self) -> List[Fault]:
        """The fault rules in evaluation order; ended ones (state ``spent`` or
        ``expired``) stay listed until removed or cleared."""
        return self._c.call("GET", "/_sim/faults")["rules"]

    def remove(self, rule_id: str) -> None:
        """Deletes a fault rule (404 when it is gone)."""
        self._c.call("DELETE", "/_sim/faults/" + _seg(rule_id))

    def clear(self) -> int:
        """Deletes every fault rule and returns how many there were."""
        return int(self._c.call("DELETE", "/_sim/faults")["removed"])


class JournalAPI:
    """The request journal and the conformance report (``Client.journal``)."""

    def __init__(self, client: Client) -> None:
        self._c = client

    def requests(
        self,
        method: Optional[str] = None,
        path: Optional[str] = None,
        status: Union[str, int, None] = None,
        api_key: Optional[str] = None,
        since: Optional[int] = None,
        limit: Optional[int] = None,
    ) -> List[Request]:
        """The recorded requests, newest first, that the filters select: ``path`` exact or
        a glob, ``status`` a code (``404``, ``0`` for aborted) or a class (``"4xx"``),
        ``since`` a sequence id. Control calls that change state are recorded too."""
        q = _query(method=method, path=path, status=status, key=api_key, since=since, limit=limit)
        return self._c.call("GET", "/_sim/requests" + q)["requests"]

    def clear(self) -> None:
        """Empties the journal (sequence ids carry on)."""
        self._c.call("DELETE", "/_sim/requests")

    def verify(
        self,
        method: Optional[str] = None,
        path: Optional[str] = None,
        api_key: Optional[str] = None,
        status: Union[str, int, None] = None,
        body_contains: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
        count: Optional[int] = None,
        at_least: Optional[int] = None,
        at_most: Optional[int] = None,
    ) -> VerifyResult:
        """Counts the journal's requests that match against the expectation (``count``,
        ``at_least`` or ``at_most``; at least one when none is given). A failed check is
        not an exception: see ``ok``, and ``near_misses`` for why requests did not match.
        In ``headers``, ``""`` means absent."""
        body = _fields(
            method=method,
            path=path,
            api_key=api_key,
            status=status,
            body_contains=body_contains,
            headers=dict(headers) if headers is not None else None,
            count=count,
            at_least=at_least,
            at_most=at_most,
        )
        return self._c.call("POST", "/_sim/requests/verify", body)

    def report(self, api_key: str, text: bool = False) -> Any:
        """The conformance report of ``api_key``'s requests in the journal: a
        :class:`Report` dict, or with ``text=True`` the report for a person (a str)."""
        if text:
            return self._c.call("GET", "/_sim/report" + _query(api_key=api_key, format="text"), text=True)
        return self._c.call("GET", "/_sim/report" + _query(api_key=api_key))
