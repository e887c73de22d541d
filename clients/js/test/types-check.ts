// Compiled, never run: `npm run typecheck` (tsc --strict, see tsconfig.json) checks that the
// hand-written declarations in dubsim-control.d.ts describe every call the way the tests
// and the README use it, and that wrong uses do not compile (@ts-expect-error lines).

import {
  DubsimClient,
  PLATFORM_PREFIX,
  STUDIO_PREFIX,
  DubsimError,
  OUTCOME_ERROR,
  OUTCOME_READY,
  Sandbox,
  type Account,
  type Clock,
  type Fault,
  type Forced,
  type JournalRequest,
  type OutcomeRule,
  type Report,
  type SandboxInfo,
  type State,
  type VerifyResult,
  type VideoStatus,
  type Work,
} from "../dubsim-control.js";

export async function everyCall(): Promise<void> {
  const sim = new DubsimClient({ baseUrl: "http://localhost:8080", token: "t", timeoutMs: 5000 });
  const env = new DubsimClient();

  const up: string = (await env.health()).status;
  const work: Work[] = await sim.work();
  await sim.reset();
  const st: State = await sim.state({ api_key: "k", limit: 10, cursor: "c" });
  const next: string | undefined = st.next_cursor;
  for await (const p of sim.projects({ api_key: "k", page_size: 100 })) {
    const status: string = p.status;
    void status;
  }
  const loaded: Record<string, number> = await sim.loadFixtures({ accounts: [{ api_key: "team-a", plan: "pro" }] });

  const ck: Clock = await sim.clock.get();
  const frozen: boolean = (await sim.clock.freeze()).frozen;
  await sim.clock.resume();
  await sim.clock.setScale(60);
  const now: string = (await sim.clock.advance(600)).now;
  await sim.clock.advanceTo(new Date());
  await sim.clock.advanceTo("2030-01-01T00:00:00Z");
  const to: string = (await sim.clock.nextDue()).transition.to;

  const acct: Account = await sim.accounts.create({ plan: "pro", balance_minutes: 100 });
  await sim.accounts.update(acct.api_key, { rate_limit: { per_minute: 5 }, storage: null });
  await sim.accounts.reset(acct.api_key);

  const forced: Forced = await sim.outcomes.forceProject("802323387", { outcome: OUTCOME_ERROR, error_message: "x", now: true });
  await sim.outcomes.forceArtifact("a", { outcome: OUTCOME_READY, size: 1, duration_seconds: 2 });
  const video: VideoStatus = await sim.outcomes.setVideoStatus("v", "completed", { auto: true });
  const rule: OutcomeRule = await sim.outcomes.addRule({ outcome: "error", api_key: acct.api_key, count: 2 });
  const rules: OutcomeRule[] = await sim.outcomes.rules();
  await sim.outcomes.removeRule(rule.id);

  const fault: Fault = await sim.faults.add({
    method: "POST",
    path: "/api/v1/projects",
    count: 1,
    action: { type: "error", status: 503, message: "Try again later" },
  });
  await sim.faults.add({ action: { type: "latency", distribution: "lognormal", median_ms: 300, sigma: 0.8 } });
  const state: "active" | "spent" | "expired" = fault.state;
  const faults: Fault[] = await sim.faults.list();
  await sim.faults.remove(fault.id);
  const removed: number = await sim.faults.clear();

  const reqs: JournalRequest[] = await sim.journal.requests({ api_key: acct.api_key, status: "4xx", limit: 5 });
  const ua: string | undefined = reqs[0]?.headers["User-Agent"];
  await sim.journal.clear();
  const verdict: VerifyResult = await sim.journal.verify({ method: "POST", path: "/api/v1/projects", count: 1 });
  const report: Report = await sim.journal.report(acct.api_key);
  const text: string = await sim.journal.report(acct.api_key, { text: true });
  const anything: unknown = await sim.call("GET", "/_sim/studio");

  const sb: Sandbox = await sim.sandbox({ start: new Date(), time_scale: 0, seed: 7 });
  await sim.sandbox({ start: "2030-01-01T00:00:00Z" });
  await sim.sandbox();
  const sbKey: string = sb.key("dubsim-pro");
  const sbKeys: Record<string, string> = sb.keys;
  const sbUrls: [string, string, string, string, string, string] = [sb.id, sb.baseUrl, sb.platformUrl, sb.studioUrl, sb.controlUrl, sb.dashboardUrl];
  const simUrls: [string, string, string] = [sim.baseUrl, sim.platformUrl, sim.studioUrl];
  const prefixes: ["/platform", "/studio"] = [PLATFORM_PREFIX, STUDIO_PREFIX];
  const sbNow: string = (await sb.client.clock.advance(60)).now;
  const listed: SandboxInfo[] = await sim.sandboxes();
  const sbInfo: string | undefined = sb.info.api_keys["dubsim-pro"];
  await sb.delete();
  await sb.delete({ missingOk: true });
  // @ts-expect-error: the start is a Date or a string
  await sim.sandbox({ start: 0 });
  // @ts-expect-error: a sandbox's keys are read, not replaced
  sb.keys = {};
  void [sbKey, sbKeys, sbUrls, sbNow, listed, sbInfo];

  try {
    await sim.clock.get();
  } catch (e) {
    if (e instanceof DubsimError) {
      const fields: [number, string, string, string] = [e.status, e.error, e.apiMessage, e.body];
      void fields;
    }
  }

  // @ts-expect-error: an outcome is "ready" or "error"
  await sim.outcomes.addRule({ outcome: "done" });
  // @ts-expect-error: a fault rule needs an action
  await sim.faults.add({ path: "/x" });
  // @ts-expect-error: seconds are a number
  await sim.clock.advance("600");
  // @ts-expect-error: the text report is a string, not a Report
  const wrong: Report = await sim.journal.report("k", { text: true });

  void [up, work, next, loaded, ck, frozen, now, to, forced, video, rules, state, faults, removed, ua, verdict, report, text, anything, wrong];
}
