// Tests of dubsim-control.js against a real dubsim:
//
//   DUBSIM_URL=http://127.0.0.1:8080 node --test test/
//
// DUBSIM_URL names the dubsim to use (required: the tests do not start one);
// DUBSIM_CONTROL_TOKEN its control token when it was started with one. The tests freeze the
// clock, reset the simulator and clear its fault rules: use a dubsim of their own.
// clients/clients_test.go runs them against the real binary, with and without a token.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, beforeEach, describe, test } from "node:test";

import * as dubsim from "../dubsim-control.js";
import { DubsimClient, DubsimError, OUTCOME_ERROR, USER_AGENT } from "../dubsim-control.js";

const BASE = process.env.DUBSIM_URL;
const SHORT_VIDEO = "https://media.dubsim.test/short.mp4"; // 12 s, 1 minute charged

/** One call of the simulated service's API (not the control API). */
async function platform(method, path, key, body) {
  return api(BASE.replace(/\/+$/, ""), method, path, key, body);
}

/** One call of the simulated service's API at base. */
async function api(base, method, path, key, body) {
  const headers = { Authorization: `Bearer ${key}` };
  const init = { method, headers };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const resp = await fetch(base + path, init);
  const text = await resp.text();
  return { status: resp.status, body: text ? JSON.parse(text) : null };
}

async function createProject(key, url = SHORT_VIDEO) {
  const { status, body } = await platform("POST", "/api/v1/projects", key, {
    source_lang: "en",
    target_lang: "fr-FR",
    source_video_url: url,
  });
  assert.equal(status, 200, `create project: ${JSON.stringify(body)}`);
  return String(body.project_id);
}

async function projectStatus(key, id) {
  const { status, body } = await platform("GET", `/api/v1/projects/${id}`, key);
  assert.equal(status, 200, `get project ${id}: ${JSON.stringify(body)}`);
  return body;
}

/** Rejects with a DubsimError of that status (and error name, when given). */
async function rejectsWith(promise, status, error) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof DubsimError, `not a DubsimError: ${e}`);
    assert.equal(e.status, status, e.message);
    if (error !== undefined) assert.equal(e.error, error, e.message);
    return true;
  });
}

test("the declarations name the module's exports and methods, no more, no less", () => {
  const dts = readFileSync(new URL("../dubsim-control.d.ts", import.meta.url), "utf8");
  const declared = [...dts.matchAll(/^export declare (?:const|class) (\w+)/gm)].map((m) => m[1]);
  assert.deepEqual(declared.sort(), Object.keys(dubsim).sort());
  for (const [, name, body] of dts.matchAll(/^export declare class (\w+)[^{]*\{([\s\S]*?)^\}/gm)) {
    const methods = new Set([...body.matchAll(/^ {2}(?!private |constructor)(\w+)\(/gm)].map((m) => m[1]));
    const actual = Object.getOwnPropertyNames(dubsim[name].prototype).filter((n) => n !== "constructor");
    assert.deepEqual([...methods].sort(), actual.sort(), name);
  }
});

describe("dubsim control client", { skip: !BASE && "DUBSIM_URL names no running dubsim" }, () => {
  const sim = new DubsimClient(); // DUBSIM_URL and DUBSIM_CONTROL_TOKEN
  let key;

  before(async () => {
    await sim.clock.freeze();
    await sim.faults.clear();
  });

  beforeEach(async () => {
    key = (await sim.accounts.create({ plan: "pro", balance_minutes: 100 })).api_key;
  });

  after(async () => {
    await sim.faults.clear();
  });

  test("health and work", async () => {
    const h = await sim.health();
    assert.equal(h.status, "ok");
    assert.ok(Array.isArray(await sim.work()));
  });

  test("clock", async () => {
    assert.equal((await sim.clock.freeze()).frozen, true);
    const start = Date.parse((await sim.clock.get()).now);
    const moved = await sim.clock.advance(90);
    assert.equal(Date.parse(moved.now) - start, 90_000);
    const target = new Date(start + 3_600_250);
    assert.equal(Date.parse((await sim.clock.advanceTo(target)).now), target.getTime());
    await assert.rejects(sim.clock.advanceTo(new Date(start).toISOString()), RangeError);
    try {
      const ck = await sim.clock.setScale(60);
      assert.equal(ck.frozen, false);
      assert.equal(ck.time_scale, 60);
      assert.equal((await sim.clock.freeze()).frozen, true);
      const resumed = await sim.clock.resume();
      assert.equal(resumed.frozen, false);
      assert.equal(resumed.time_scale, 60);
    } finally {
      await sim.clock.freeze();
    }
  });

  test("a project becomes ready when the clock passes its due time", async () => {
    const id = await createProject(key);
    assert.equal((await projectStatus(key, id)).status, "in_progress");
    await sim.clock.advance(3600);
    assert.equal((await projectStatus(key, id)).status, "ready");
    const st = await sim.state({ api_key: key });
    assert.deepEqual(st.projects.map((p) => p.status), ["ready"]);
    assert.deepEqual(st.accounts.map((a) => a.balance_minutes), [99]);
  });

  test("next due", async () => {
    const id = await createProject(key);
    const ck = await sim.clock.nextDue();
    assert.equal(ck.transition.to, "ready");
    await sim.clock.advance(3600);
    assert.equal((await projectStatus(key, id)).status, "ready");
    await rejectsWith(sim.clock.nextDue(), 409, "ConflictError");
  });

  test("force a project's outcome", async () => {
    const id = await createProject(key);
    const forced = await sim.outcomes.forceProject(id, {
      outcome: OUTCOME_ERROR,
      error_message: "No speech detected",
      now: true,
    });
    assert.equal(forced.status, "error");
    const got = await projectStatus(key, id);
    assert.deepEqual([got.status, got.error_message], ["error", "No speech detected"]);
    await rejectsWith(sim.outcomes.forceProject(id, { outcome: "ready" }), 409);
  });

  test("outcome rules", async () => {
    const rule = await sim.outcomes.addRule({
      outcome: "error",
      api_key: key,
      count: 1,
      error_message: "TTS quota exceeded",
    });
    const other = await sim.outcomes.addRule({ outcome: "ready", api_key: key, source_url_pattern: "*/never/*" });
    let ids = (await sim.outcomes.rules()).map((r) => r.id);
    assert.ok(ids.includes(rule.id) && ids.includes(other.id), ids.join(","));
    await sim.outcomes.removeRule(other.id);
    const id = await createProject(key);
    await sim.clock.advance(3600);
    const got = await projectStatus(key, id);
    assert.deepEqual([got.status, got.error_message], ["error", "TTS quota exceeded"]);
    ids = (await sim.outcomes.rules()).map((r) => r.id);
    assert.ok(!ids.includes(rule.id), "used up");
    assert.ok(!ids.includes(other.id), "removed");
    await rejectsWith(sim.outcomes.removeRule(other.id), 404, "NotFoundError");
  });

  test("studio artifact outcome and video status", async () => {
    const art = await platform("POST", "/api/v1/artifacts/create", key, {
      name: "Clip",
      type: "video",
      url: "https://media.dubsim.test/clip.mp4",
    });
    assert.equal(art.status, 200, JSON.stringify(art.body));
    const forced = await sim.outcomes.forceArtifact(art.body.id, {
      outcome: "ready",
      now: true,
      size: 1234,
      duration_seconds: 42.5,
    });
    assert.equal(forced.status, "upload_completed");
    const proj = await platform("POST", "/api/v1/projects", key, { name: "Launch" });
    assert.equal(proj.status, 200, JSON.stringify(proj.body));
    const video = await platform("POST", `/api/v1/projects/${proj.body.id}/videos/create`, key, {
      name: "Teaser",
      workflowType: "dubbing",
      sourceArtifactId: art.body.id,
      sourceLanguage: "en",
      targetLanguages: ["es-ES"],
    });
    assert.equal(video.status, 200, JSON.stringify(video.body));
    assert.equal(video.body.status, "new");
    const v = await sim.outcomes.setVideoStatus(video.body.id, "completed");
    assert.deepEqual([v.video_id, v.status], [video.body.id, "completed"]);
  });

  test("faults", async () => {
    const fault = await sim.faults.add({
      method: "POST",
      path: "/api/v1/projects",
      api_key: key,
      count: 1,
      action: { type: "error", status: 503, message: "Try again later" },
    });
    assert.deepEqual([fault.state, fault.remaining, fault.hits], ["active", 1, 0]);
    const refused = await platform("POST", "/api/v1/projects", key, {
      source_lang: "en",
      target_lang: "fr-FR",
      source_video_url: SHORT_VIDEO,
    });
    assert.equal(refused.status, 503);
    assert.equal(refused.body.message, "Try again later");
    const listed = (await sim.faults.list()).find((f) => f.id === fault.id);
    assert.deepEqual([listed?.state, listed?.hits], ["spent", 1]);
    await sim.faults.remove(fault.id);
    assert.ok(!(await sim.faults.list()).some((f) => f.id === fault.id));
    await sim.faults.add({ path: "/api/v1/voices", action: { type: "latency", latency_ms: 1 } });
    await sim.faults.add({ path: "/api/v1/options", action: { type: "drop" } });
    assert.equal(await sim.faults.clear(), 2);
    assert.deepEqual(await sim.faults.list(), []);
  });

  test("journal, verify and report", async () => {
    await sim.journal.clear();
    await sim.faults.add({
      method: "POST",
      path: "/api/v1/projects",
      api_key: key,
      count: 1,
      action: { type: "error", status: 503 },
    });
    await platform("POST", "/api/v1/projects", key, {
      source_lang: "en",
      target_lang: "fr-FR",
      source_video_url: SHORT_VIDEO,
    });
    await createProject(key);
    const reqs = await sim.journal.requests({ api_key: key, method: "POST", path: "/api/v1/projects" });
    assert.deepEqual(reqs.map((r) => r.status), [200, 503]); // newest first
    assert.notEqual(reqs[1].fault, "");
    assert.equal((await sim.journal.requests({ api_key: key, status: "5xx" })).length, 1);
    assert.equal((await sim.journal.requests({ api_key: key, limit: 1 })).length, 1);
    const controls = await sim.journal.requests({ path: "/_sim/requests" });
    assert.deepEqual(controls, [], "the journal's own calls are not recorded");
    const mine = await sim.journal.requests({ path: "/_sim/faults" });
    assert.equal(mine[0]?.headers["User-Agent"], USER_AGENT);

    const ok = await sim.journal.verify({ method: "POST", path: "/api/v1/projects", api_key: key, count: 2 });
    assert.equal(ok.ok, true, JSON.stringify(ok));
    assert.equal(ok.matched, 2);
    const missed = await sim.journal.verify({
      method: "POST",
      path: "/api/v1/projects",
      api_key: key,
      headers: { "Idempotency-Key": "k-1" },
    });
    assert.equal(missed.ok, false);
    assert.equal(missed.near_misses.length, 2);

    const report = await sim.journal.report(key);
    assert.equal(report.api_key, key);
    assert.equal(report.summary.requests, 2);
    assert.ok(report.findings.some((f) => f.rule === "post-without-idempotency-key"));
    const text = await sim.journal.report(key, { text: true });
    assert.equal(typeof text, "string");
    assert.ok(text.includes(key) && text.includes("post-without-idempotency-key"), text);
  });

  test("accounts", async () => {
    const acct = await sim.accounts.create({
      plan: "enterprise",
      balance_minutes: 50,
      retranslation_enabled: true,
      user_email: "qa@example.test",
    });
    assert.match(acct.api_key, /^dsk_/);
    assert.deepEqual([acct.plan, acct.balance_minutes, acct.user_email], ["enterprise", 50, "qa@example.test"]);
    const updated = await sim.accounts.update(acct.api_key, { rate_limit: { per_minute: 5, per_day: 100 } });
    assert.deepEqual(updated.rate_limit, { per_minute: 5, per_day: 100 });
    assert.equal(updated.storage, null);
    assert.equal((await sim.accounts.update(acct.api_key, { rate_limit: null })).rate_limit, null);

    await createProject(acct.api_key);
    assert.equal((await sim.state({ api_key: acct.api_key })).accounts[0].balance_minutes, 49);
    await sim.accounts.reset(acct.api_key);
    const st = await sim.state({ api_key: acct.api_key });
    assert.equal(st.accounts[0].balance_minutes, 50);
    assert.deepEqual(st.projects, []);
  });

  test("state pages", async () => {
    const ids = [await createProject(key), await createProject(key), await createProject(key)];
    const first = await sim.state({ api_key: key, limit: 2 });
    assert.equal(first.truncated, true);
    assert.equal(first.projects.length, 2);
    const rest = await sim.state({ api_key: key, limit: 2, cursor: first.next_cursor });
    assert.equal(rest.projects.length, 1);
    assert.equal(rest.next_cursor, undefined);
    const seen = [];
    for await (const p of sim.projects({ api_key: key, page_size: 1 })) seen.push(p.id);
    assert.deepEqual(seen.sort(), ids.sort());
  });

  test("load fixtures", async () => {
    const teamKey = `team-js-${key.slice(-8)}`;
    const loaded = await sim.loadFixtures({ accounts: [{ api_key: teamKey, plan: "pro", balance_minutes: 40 }] });
    assert.ok(loaded.accounts >= 1, JSON.stringify(loaded));
    await createProject(teamKey);
    assert.equal((await sim.state({ api_key: teamKey })).accounts[0].balance_minutes, 39);
  });

  test("reset", async () => {
    await createProject(key);
    await sim.outcomes.addRule({ outcome: "error", api_key: key });
    await sim.reset();
    const st = await sim.state();
    assert.ok(!st.accounts.some((a) => a.api_key === key));
    assert.ok(st.accounts.length > 0);
    assert.ok(st.accounts.every((a) => a.fixture), "only the fixture accounts remain");
    assert.deepEqual(st.projects, []);
    assert.deepEqual(await sim.outcomes.rules(), []);
  });

  test("errors carry the status and the control API's error body", async () => {
    await assert.rejects(sim.outcomes.forceProject("999999999", { outcome: "ready" }), (e) => {
      assert.ok(e instanceof DubsimError);
      assert.deepEqual([e.name, e.method, e.path, e.status, e.error, e.apiMessage], [
        "DubsimError",
        "POST",
        "/_sim/projects/999999999/outcome",
        404,
        "NotFoundError",
        "Project not found",
      ]);
      assert.match(e.body, /"NotFoundError"/);
      assert.match(e.message, /404 NotFoundError/);
      return true;
    });
    await rejectsWith(sim.faults.add({ path: "/x", action: { type: "no-such-action" } }), 400, "ValidationError");
    await rejectsWith(sim.outcomes.setVideoStatus("000000000000000000000000", "completed"), 404);
    await rejectsWith(sim.outcomes.forceArtifact("000000000000000000000000", { outcome: "error", now: true }), 404);
  });

  test("the base of each interface alone, for the dubsim and a sandbox", async () => {
    assert.equal(sim.platformUrl, `${sim.baseUrl}/platform`);
    assert.equal(sim.studioUrl, `${sim.baseUrl}/studio`);
    // The docs' minimal studio create: the platform's (without its required fields) under
    // platformUrl, the studio's under studioUrl.
    let r = await api(sim.platformUrl, "POST", "/api/v1/projects", key, { name: "Marketing" });
    assert.deepEqual(r, { status: 400, body: { error: "ValidationError", message: "source_lang is required" } });
    r = await api(sim.studioUrl, "POST", "/api/v1/projects", key, { name: "Marketing" });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.projectUrl, `${sim.studioUrl}/projects/${r.body.id}`);
    const sb = await sim.sandbox();
    try {
      assert.equal(sb.platformUrl, `${sb.baseUrl}/platform`);
      assert.equal(sb.studioUrl, `${sb.baseUrl}/studio`);
      r = await api(sb.platformUrl, "GET", "/api/v1/balance", sb.key("dubsim-pro"));
      assert.equal(r.status, 200, JSON.stringify(r.body));
    } finally {
      await sb.delete({ missingOk: true });
    }
  });

  test("a sandbox: its own clock, data and journal, deleted", async () => {
    const defaultNow = (await sim.clock.get()).now;
    const start = new Date("2030-01-02T03:04:05Z");
    const sb = await sim.sandbox({ start });
    assert.match(sb.id, /^[0-9a-hjkmnp-tv-z]{16}$/);
    assert.equal(sb.baseUrl, `${sim.baseUrl}/sbx/${sb.id}`);
    assert.equal(sb.controlUrl, `${sb.baseUrl}/_sim`);
    assert.equal(sb.client.baseUrl, sb.baseUrl);
    assert.equal(sb.client.token, sim.token);
    const sbKey = sb.key("dubsim-pro");
    assert.equal(sbKey, `sbx_${sb.id}_dubsim-pro`);
    assert.throws(() => sb.key("nobody"), RangeError);
    assert.ok((await sim.sandboxes()).some((s) => s.id === sb.id));
    const ck = await sb.client.clock.get();
    assert.deepEqual([Date.parse(ck.now), ck.frozen], [start.getTime(), true]);

    const id = await createProject(sbKey); // by its key, at the shared address
    assert.equal((await projectStatus(sbKey, id)).status, "in_progress");
    const after = await sb.client.clock.advance(3600);
    assert.equal(Date.parse(after.now), start.getTime() + 3600e3);
    assert.equal((await projectStatus(sbKey, id)).status, "ready");
    assert.equal((await sim.clock.get()).now, defaultNow, "the default clock stands");
    const api = (await sb.client.journal.requests({ path: "/api/*" })).map((r) => [r.method, r.path, r.api_key]);
    assert.deepEqual(api, [
      ["GET", `/api/v1/projects/${id}`, sbKey],
      ["GET", `/api/v1/projects/${id}`, sbKey],
      ["POST", "/api/v1/projects", sbKey],
    ]);
    assert.deepEqual(await sim.journal.requests({ api_key: sbKey }), [], "the default journal has none of them");

    await sb.delete();
    assert.ok(!(await sim.sandboxes()).some((s) => s.id === sb.id));
    await rejectsWith(sb.delete(), 404, "NotFoundError");
    await sb.delete({ missingOk: true });
  });

  test("sandbox options: time scale and seed", async () => {
    const running = await sim.sandbox({ time_scale: 60 });
    const ck = await running.client.clock.get();
    assert.deepEqual([ck.frozen, ck.time_scale], [false, 60]);
    await running.delete();
    const project = async (seed) => {
      const sb = await sim.sandbox({ start: "2030-01-01T00:00:00Z", seed });
      try {
        return await createProject(sb.key("dubsim-pro"));
      } finally {
        await sb.delete();
      }
    };
    assert.equal(await project(7), await project(7));
    assert.notEqual(await project(7), await project(8));
  });

  test("sandboxes in parallel", async () => {
    const base = Date.parse("2030-01-01T00:00:00Z");
    const ids = await Promise.all(
      Array.from({ length: 16 }, async (_, i) => {
        const start = base + i * 86400e3;
        const sb = await sim.sandbox({ start: new Date(start) });
        try {
          const k = sb.key("dubsim-pro");
          const id = await createProject(k);
          const now = (await sb.client.clock.advance(3600)).now;
          assert.equal(Date.parse(now), start + 3600e3);
          assert.equal((await projectStatus(k, id)).status, "ready");
          const keys = new Set((await sb.client.journal.requests({ path: "/api/*" })).map((r) => r.api_key));
          assert.deepEqual([...keys], [k]);
          return sb.id;
        } finally {
          await sb.delete();
        }
      }),
    );
    assert.equal(new Set(ids).size, 16);
    const left = new Set((await sim.sandboxes()).map((s) => s.id));
    assert.ok(!ids.some((id) => left.has(id)), "every sandbox deleted");
  });

  test("control token", async (t) => {
    const token = process.env.DUBSIM_CONTROL_TOKEN ?? "";
    if (!token) {
      t.skip("dubsim runs without a control token (DUBSIM_CONTROL_TOKEN is empty)");
      return;
    }
    assert.equal(sim.token, token);
    for (const wrong of ["", `${token}-wrong`]) {
      const other = new DubsimClient({ token: wrong });
      assert.equal((await other.health()).status, "ok"); // open to all
      await rejectsWith(other.clock.get(), 401, "UnauthorizedError");
    }
    assert.ok((await new DubsimClient({ token }).clock.get()).now);
  });
});
