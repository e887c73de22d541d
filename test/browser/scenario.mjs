// What every scenario of this suite shares: its environment, its steps
// (each printed with its time; the first that fails names the scenario's
// failure), the problems its pages report, and the browser contexts it
// opens, closed at its end. A scenario passes when every step passed and
// no problem was reported; it then prints ALL STEPS PASSED.
import path from 'node:path';

// run runs scenario (a module's default export) in browser with env (the
// variables the Go test gave it), printing with log.
export const run = async (browser, env, log, scenario) => {
  let current = 'start';
  const problems = [];
  const contexts = [];
  const t = {
    problems,
    log,
    // env is the variable k, which the scenario needs.
    env: (k) => {
      const v = env[k];
      if (!v) throw new Error(`${k} is not set`);
      return v;
    },
    step: async (name, fn) => {
      current = name;
      const start = Date.now();
      await fn();
      log(`ok   ${name} (${Date.now() - start} ms)`);
    },
    check: (cond, msg) => { if (!cond) throw new Error(msg); },
    // until polls fn every 100 ms until it is true, for at most ms.
    until: async (what, fn, ms = 10_000) => {
      const end = Date.now() + ms;
      for (;;) {
        if (await fn()) return;
        if (Date.now() > end) throw new Error(`timed out: ${what}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    newContext: async (options) => {
      const c = await browser.newContext(options);
      contexts.push(c);
      return c;
    },
    // shot saves a screenshot of target (a page or a locator) as name in
    // SCREENSHOTS, only when the Go test was asked to keep them: nobody
    // compares them, and a full page costs a PNG encoding of its height.
    shot: async (target, name, options) => {
      if (env.SCREENSHOTS) await target.screenshot({ ...options, path: path.join(env.SCREENSHOTS, name) });
    },
  };
  try {
    await scenario(t);
    t.check(problems.length === 0, problems.join('\n'));
    log('ALL STEPS PASSED');
    return true;
  } catch (e) {
    log(`FAIL ${current}: ${e.message}`);
    for (const p of problems) log(p);
    return false;
  } finally {
    for (const c of contexts) await c.close().catch(() => {});
  }
};
