// Control client of dubsim, the simulator of a video-dubbing API: one ES module, no
// dependencies, for Node 18 or later (global fetch) and browsers. It calls the control API
// under /_sim of a running dubsim (docs/control-api.md): the clock, reset, accounts, forced
// outcomes, HTTP faults, the request journal with its verification, and the client
// conformance report. Types: dubsim-control.d.ts beside it.
//
//   import { DubsimClient } from "./dubsim-control.js";
//   const sim = new DubsimClient({ baseUrl: "http://localhost:8080" }); // or DUBSIM_URL
//   await sim.clock.freeze();
//   const { api_key } = await sim.accounts.create({ plan: "pro", balance_minutes: 100 });
//   await sim.clock.advance(600);
//   const sb = await sim.sandbox();              // a simulator of this test's own
//   await sb.client.clock.advance(600);          // its clock only; sb.key("dubsim-pro")
//   await sb.delete();
//
// Answers are the control API's JSON as it is (snake_case names), and bodies and filters
// take the same names. A call answered with anything but 2xx rejects with a DubsimError
// carrying the status and the control API's error body.

export const VERSION = "0.1.0";

/** The User-Agent of every call (where the runtime lets a script set it). */
export const USER_AGENT = `dubsim-control-js/${VERSION}`;

/**
 * The paths under which dubsim serves one interface alone: the base URL plus either is that
 * interface's own base URL, where no request is routed to the other interface.
 */
export const PLATFORM_PREFIX = "/platform";
export const STUDIO_PREFIX = "/studio";

/** Outcomes of forced outcomes and outcome rules. */
export const OUTCOME_READY = "ready";
export const OUTCOME_ERROR = "error";

// The header that marks a call from a program: dubsim refuses a call that changes state
// without it (or a JSON body), so that no HTML form of another site can send one.
const HEADER_CONTROL = "X-Dubsim-Control";

const MAX_MESSAGE = 1024;

function env(name) {
  const p = globalThis.process;
  return p && p.env ? p.env[name] : undefined;
}

function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : "";
}

function defined(fields) {
  const out = {};
  for (const [k, v] of Object.entries(fields)) {
    if (v !== undefined) out[k] = v;
  }
  return out;
}

const seg = encodeURIComponent;

/**
 * An answer of the control API other than 2xx: the call's method and path, the HTTP
 * status, the envelope's error name and message ({"error", "message"}; for an answer not
 * in it, such as a proxy's 502, error is "" and message the body cut to 1 KiB) and the
 * answer's text as body.
 */
export class DubsimError extends Error {
  constructor(method, path, status, body) {
    let error = "";
    let message = body.trim().slice(0, MAX_MESSAGE);
    try {
      const envelope = JSON.parse(body);
      if (envelope && typeof envelope.error === "string" && envelope.error !== "") {
        error = envelope.error;
        message = typeof envelope.message === "string" ? envelope.message : "";
      }
    } catch {
      // not JSON: keep the text
    }
    super(`dubsim: ${method} ${path}: ${status} ${error || "HTTP error"}: ${message}`);
    this.name = "DubsimError";
    this.method = method;
    this.path = path;
    this.status = status;
    this.error = error;
    this.apiMessage = message;
    this.body = body;
  }
}

/**
 * A client of the control API of the dubsim at baseUrl (without /_sim; by default
 * $DUBSIM_URL or http://localhost:8080). There dubsim serves both interfaces; platformUrl and
 * studioUrl (baseUrl plus /platform or /studio) each serve one alone: give them to a client
 * under test that takes one base URL per interface. token is the control token of a dubsim started
 * with --control-token, sent as "Authorization: Bearer <token>"; by default
 * $DUBSIM_CONTROL_TOKEN, and "" sends none. timeoutMs bounds each call; fetch replaces the
 * global fetch.
 */
export class DubsimClient {
  constructor(options = {}) {
    const base = options.baseUrl || env("DUBSIM_URL") || "http://localhost:8080";
    this.baseUrl = base.replace(/\/+$/, "");
    this.platformUrl = this.baseUrl + PLATFORM_PREFIX;
    this.studioUrl = this.baseUrl + STUDIO_PREFIX;
    this.token = options.token ?? env("DUBSIM_CONTROL_TOKEN") ?? "";
    this.timeoutMs = options.timeoutMs ?? 60000;
    this.fetch = options.fetch ?? ((...args) => globalThis.fetch(...args));
    this.clock = new ClockAPI(this);
    this.accounts = new AccountsAPI(this);
    this.outcomes = new OutcomesAPI(this);
    this.faults = new FaultsAPI(this);
    this.journal = new JournalAPI(this);
  }

  /**
   * Sends one control call and resolves to its decoded JSON answer (its text with
   * {text: true}; null for an empty answer). A body other than undefined is sent as JSON.
   * Every call carries X-Dubsim-Control, which dubsim needs (or a JSON body) on calls that
   * change state, and the token when there is one.
   */
  async call(method, path, body, { text = false } = {}) {
    const headers = {
      [HEADER_CONTROL]: "1",
      Accept: text ? "text/plain" : "application/json",
      "User-Agent": USER_AGENT,
    };
    const init = { method, headers, signal: AbortSignal.timeout(this.timeoutMs) };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    const resp = await this.fetch(this.baseUrl + path, init);
    const raw = await resp.text();
    if (!resp.ok) throw new DubsimError(method, path, resp.status, raw);
    if (text) return raw;
    return raw.trim() === "" ? null : JSON.parse(raw);
  }

  /** Whether the simulator is up (GET /_sim/health; open even with --no-control). */
  health() {
    return this.call("GET", "/_sim/health");
  }

  /** The background work in flight (GET /_sim/work), oldest first. */
  async work() {
    return (await this.call("GET", "/_sim/work")).work;
  }

  /**
   * Restores the fixture accounts and deletes every other account, project, studio record
   * and forced-outcome rule; the clock and id sequences carry on. Fault rules and the
   * journal have their own resets (faults.clear, journal.clear).
   */
  async reset() {
    await this.call("POST", "/_sim/reset");
  }

  /**
   * Dumps accounts, one page of projects (newest first), pending transitions and rules;
   * api_key limits it to one account. When more projects remain the answer has
   * next_cursor: pass it as cursor (with the same api_key) for the next page, or use
   * projects().
   */
  state({ api_key, limit, cursor } = {}) {
    return this.call("GET", "/_sim/state" + query({ api_key, limit, cursor }));
  }

  /** Every project of the state dump (of api_key, or all), page after page. */
  async *projects({ api_key, page_size } = {}) {
    let cursor;
    for (;;) {
      const st = await this.state({ api_key, limit: page_size, cursor });
      yield* st.projects ?? [];
      cursor = st.next_cursor;
      if (!cursor) return;
    }
  }

  /**
   * Loads fixture content over the startup set: any of accounts, options, voices,
   * media_rules and studio, each in the shape of its file in fixtures/. Resolves to the
   * counts of the set now in use.
   */
  async loadFixtures(fixtures) {
    return (await this.call("POST", "/_sim/fixtures", fixtures)).loaded;
  }

  /**
   * Creates a sandbox, a whole simulator of its own inside this dubsim (its clock,
   * accounts, data, rules and journal), with an id made here (PUT /_sim/sandboxes/{id}),
   * and resolves to a Sandbox. Its clock is frozen at start (a Date or RFC 3339 string;
   * default: the dubsim's now) unless time_scale > 0; seed sets its generated ids. Delete
   * it with sandbox.delete(). A dubsim without sandboxes answers 404, one at its cap 429
   * SandboxLimitError.
   */
  async sandbox({ start, time_scale, seed } = {}) {
    const body = defined({
      start: start instanceof Date ? start.toISOString() : start,
      time_scale,
      seed,
    });
    // An id already taken (one chance in 2**80) is a 409: draw another.
    for (let attempt = 0; ; attempt++) {
      try {
        const info = await this.call("PUT", `/_sim/sandboxes/${await sandboxId()}`, body);
        return new Sandbox(this, info);
      } catch (e) {
        if (!(e instanceof DubsimError) || e.status !== 409 || attempt === 2) throw e;
      }
    }
  }

  /** The sandboxes of this dubsim, oldest first (GET /_sim/sandboxes). */
  async sandboxes() {
    return (await this.call("GET", "/_sim/sandboxes")).sandboxes;
  }
}

// Lower-case Crockford base32: the alphabet of sandbox ids.
const SANDBOX_ID_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

/** A sandbox id: 16 characters from the platform's cryptographic random source. */
async function sandboxId() {
  // Node 18 has Web Crypto as a global only behind a flag.
  const c = globalThis.crypto ?? (await import("node:crypto")).webcrypto;
  const b = c.getRandomValues(new Uint8Array(16));
  return Array.from(b, (x) => SANDBOX_ID_ALPHABET[x & 31]).join("");
}

/**
 * A sandbox of a dubsim, made by client.sandbox(): its id; baseUrl, the dubsim's address as
 * the client reaches it plus /sbx/<id>, where the sandbox serves every interface and its
 * control API; platformUrl and studioUrl, each interface of the sandbox alone; controlUrl
 * and dashboardUrl; keys, each fixture API key ("dubsim-pro")
 * mapped to the sandbox's key for that account, which reaches the sandbox at the dubsim's
 * own address too; client, a DubsimClient of the sandbox's control API (same token,
 * timeout and fetch): sb.client.clock.advance(600) moves this sandbox's clock only; info,
 * the creation's answer.
 */
export class Sandbox {
  constructor(owner, info) {
    this.owner = owner;
    this.info = info;
    this.id = info.id;
    this.baseUrl = `${owner.baseUrl}/sbx/${info.id}`;
    this.platformUrl = this.baseUrl + PLATFORM_PREFIX;
    this.studioUrl = this.baseUrl + STUDIO_PREFIX;
    this.controlUrl = `${this.baseUrl}/_sim`;
    this.dashboardUrl = `${this.baseUrl}/_sim/ui`;
    this.keys = { ...(info.api_keys ?? {}) };
    this.client = new DubsimClient({
      baseUrl: this.baseUrl,
      token: owner.token,
      timeoutMs: owner.timeoutMs,
      fetch: owner.fetch,
    });
  }

  /** The sandbox's key for the fixture key name; throws a RangeError if there is none. */
  key(name) {
    const k = this.keys[name];
    if (k === undefined) throw new RangeError(`dubsim: sandbox ${this.id} has no account for the key ${name}`);
    return k;
  }

  /**
   * Deletes the sandbox and its data (DELETE /_sim/sandboxes/{id}); rejects with a 404
   * DubsimError when it is gone, unless missingOk (for an after hook: a sandbox deleted
   * already, or expired).
   */
  async delete({ missingOk = false } = {}) {
    try {
      await this.owner.call("DELETE", `/_sim/sandboxes/${seg(this.id)}`);
    } catch (e) {
      if (!(missingOk && e instanceof DubsimError && e.status === 404)) throw e;
    }
  }
}

/** The simulated clock: the calls of /_sim/clock (client.clock). */
export class ClockAPI {
  constructor(client) {
    this.client = client;
  }

  /** Reads the clock: now, time_scale and frozen. */
  get() {
    return this.client.call("GET", "/_sim/clock");
  }

  /**
   * Moves simulated time forward and applies every transition that became due, each at its
   * own due time; waits for the downloads the new time depends on (a 504 DubsimError names
   * those still running after --advance-wait).
   */
  advance(seconds) {
    return this.client.call("POST", "/_sim/clock/advance", { seconds });
  }

  /**
   * Moves to the earliest pending transition (or applies it if already due); the answer's
   * transition says which. 409 ConflictError when nothing is pending.
   */
  nextDue() {
    return this.client.call("POST", "/_sim/clock/advance", { next_due: true });
  }

  /**
   * Moves simulated time forward to a Date or RFC 3339 string (to the millisecond). A time
   * in the past rejects with a RangeError and changes nothing. With a running clock, time
   * also moves between the two calls it takes.
   */
  async advanceTo(when) {
    const target = when instanceof Date ? when.getTime() : Date.parse(when);
    if (Number.isNaN(target)) throw new TypeError(`dubsim: not a time: ${String(when)}`);
    const now = Date.parse((await this.get()).now);
    if (target < now) {
      throw new RangeError(
        `dubsim: cannot advance to ${new Date(target).toISOString()}: the clock is already at ${new Date(now).toISOString()}`,
      );
    }
    return this.advance((target - now) / 1000);
  }

  /** Sets the speed of simulated time from now on (0 stops it); ends a freeze. */
  setScale(time_scale) {
    return this.client.call("POST", "/_sim/clock/scale", { time_scale });
  }

  /** Stops simulated time. */
  freeze() {
    return this.client.call("POST", "/_sim/clock/freeze");
  }

  /** Restarts simulated time stopped by freeze, at the scale it had. */
  resume() {
    return this.client.call("POST", "/_sim/clock/resume");
  }
}

/** Accounts: the calls of /_sim/accounts and the reset of one (client.accounts). */
export class AccountsAPI {
  constructor(client) {
    this.client = client;
  }

  /**
   * Adds an isolated account and its studio user. Fields left out take defaults: a
   * generated key (dsk_...), the plan none, no balance, a new studio company and a
   * generated email.
   */
  create(spec = {}) {
    return this.client.call("POST", "/_sim/accounts", spec);
  }

  /**
   * Changes a key's external-bucket credentials (storage) and studio rate limit
   * (rate_limit): a field left out stays, null removes it.
   */
  update(apiKey, patch) {
    return this.client.call("PATCH", `/_sim/accounts/${seg(apiKey)}`, patch);
  }

  /** Deletes one account's projects and idempotency keys and gives it back its initial balance. */
  async reset(apiKey) {
    await this.client.call("POST", "/_sim/reset", { api_key: apiKey });
  }
}

/** Forced outcomes of projects, artifacts and videos (client.outcomes). */
export class OutcomesAPI {
  constructor(client) {
    this.client = client;
  }

  /**
   * Decides how the current run of a platform project in progress ends: "error" (with
   * error_message) at its due time, or at once with now; "ready" completes it now. 409
   * ConflictError when it is not in progress.
   */
  forceProject(projectId, outcome) {
    return this.client.call("POST", `/_sim/projects/${seg(projectId)}/outcome`, outcome);
  }

  /**
   * Decides how a studio artifact's processing ends (upload_failed with the message, or
   * upload_completed with size and duration_seconds, else the planned ones); at once with
   * now. 409 when it has already finished.
   */
  forceArtifact(artifactId, outcome) {
    return this.client.call("POST", `/_sim/artifacts/${seg(artifactId)}/outcome`, outcome);
  }

  /**
   * Gives a studio video a status (new, in_progress, completed) now; with auto its
   * automatic lifecycle continues from there, else it stays.
   */
  setVideoStatus(videoId, status, { auto = false } = {}) {
    return this.client.call("POST", `/_sim/videos/${seg(videoId)}/status`, { status, auto });
  }

  /**
   * Adds a rule: the next count (default 1) projects, or artifacts with resource
   * "artifact", created by api_key (any when left out) whose source URL matches the glob
   * source_url_pattern (any) end with outcome.
   */
  addRule(spec) {
    return this.client.call("POST", "/_sim/outcomes", spec);
  }

  /** The forced-outcome rules not used up. */
  async rules() {
    return (await this.client.call("GET", "/_sim/outcomes")).rules;
  }

  /** Deletes a forced-outcome rule (404 when it is gone). */
  async removeRule(id) {
    await this.client.call("DELETE", `/_sim/outcomes/${seg(id)}`);
  }
}

/** HTTP fault rules: the calls of /_sim/faults (client.faults). */
export class FaultsAPI {
  constructor(client) {
    this.client = client;
  }

  /**
   * Adds a fault rule (the JSON schema of docs/control-api.md), evaluated after the ones
   * already there, and resolves to it as listed.
   */
  add(rule) {
    return this.client.call("POST", "/_sim/faults", rule);
  }

  /**
   * The fault rules in evaluation order; ended ones (state "spent" or "expired") stay
   * listed until removed or cleared.
   */
  async list() {
    return (await this.client.call("GET", "/_sim/faults")).rules;
  }

  /** Deletes a fault rule (404 when it is gone). */
  async remove(id) {
    await this.client.call("DELETE", `/_sim/faults/${seg(id)}`);
  }

  /** Deletes every fault rule and resolves to how many there were. */
  async clear() {
    return (await this.client.call("DELETE", "/_sim/faults")).removed;
  }
}

/** The request journal and the conformance report (client.journal). */
export class JournalAPI {
  constructor(client) {
    this.client = client;
  }

  /**
   * The recorded requests, newest first, that the filter selects: path exact or a glob,
   * status a code (404, 0 for aborted) or a class ("4xx"), since a sequence id. Control
   * calls that change state are recorded too.
   */
  async requests({ method, path, status, api_key, since, limit } = {}) {
    const q = query({ method, path, status, key: api_key, since, limit });
    return (await this.client.call("GET", "/_sim/requests" + q)).requests;
  }

  /** Empties the journal (sequence ids carry on). */
  async clear() {
    await this.client.call("DELETE", "/_sim/requests");
  }

  /**
   * Counts the journal's requests that the matcher selects against its expectation (count,
   * at_least or at_most; at least one when none is given). A failed check does not reject:
   * see ok, and near_misses for why requests did not match. In headers, "" means absent.
   */
  verify(matcher) {
    return this.client.call("POST", "/_sim/requests/verify", defined(matcher));
  }

  /**
   * The conformance report of apiKey's requests in the journal; with {text: true} the
   * report for a person, as a string.
   */
  report(apiKey, { text = false } = {}) {
    if (text) {
      return this.client.call("GET", "/_sim/report" + query({ api_key: apiKey, format: "text" }), undefined, {
        text: true,
      });
    }
    return this.client.call("GET", "/_sim/report" + query({ api_key: apiKey }));
  }
}
