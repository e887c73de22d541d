// The sandboxes scenario of sandboxes_test.go: chromium against a default
// dubsim with two sandboxes (A frozen at 2026-05-01T00:00:00Z with a
// project "Sandbox A only"; the default with "Default only"). The default
// dashboard lists both; Open leads to A's dashboard, which shows A's data,
// sends every request below /sbx/A and whose actions change A only; the
// alias /_sim/sandboxes/A/ui/ is the same dashboard; Delete removes B.
// Environment: DUBSIM_URL, SBX_A, SBX_B.
const timeout = 10_000;

export default async ({ env, step, check, until, problems, newContext }) => {
  const base = env('DUBSIM_URL');
  const A = env('SBX_A');
  const B = env('SBX_B');
  const control = async (method, p) => {
    const res = await fetch(base + p, { method, headers: { 'X-Dubsim-Control': '1' } });
    return { status: res.status, body: res.status === 204 ? null : await res.json() };
  };

  const context = await newContext({ viewport: { width: 1366, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(timeout);
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  // Inside a sandbox GET /_sim/sandboxes is a 404 (no panel): expected.
  const expected404 = (m) => /status of 404/.test(m.text()) && new URL(m.location().url || base).pathname === `/sbx/${A}/_sim/sandboxes`;
  page.on('console', (m) => { if (m.type() === 'error' && !expected404(m)) problems.push(`console error: ${m.text()} (${m.location().url})`); });
  page.on('dialog', (d) => d.accept());
  const paths = [];
  page.on('request', (r) => { const u = new URL(r.url()); if (u.origin === new URL(base).origin) paths.push(u.pathname); });
  const projects = page.locator('#projects-body');
  const row = (id) => page.locator(`#sandboxes tr[data-sandbox-id="${id}"]`);

  await step('the default dashboard lists both sandboxes and its own project only', async () => {
    await page.goto(base + '/_sim/ui/');
    await row(A).waitFor();
    await row(B).waitFor();
    check(await page.locator('#nav-sandboxes').isVisible(), 'the Sandboxes link is in the navigation');
    const sum = await page.locator('#sandboxes-summary').textContent();
    check(sum.startsWith('2 of at most 200 sandboxes'), `summary: ${sum}`);
    const href = await row(A).getByRole('link', { name: `Open the dashboard of sandbox ${A}` }).getAttribute('href');
    check(href === `/sbx/${A}/_sim/ui/`, `Open links ${href}`);
    check((await row(A).textContent()).includes('frozen'), 'A is frozen');
    await projects.filter({ hasText: 'Default only' }).waitFor();
    check(!(await projects.textContent()).includes('Sandbox A only'), 'the default shows a sandbox project');
  });

  let defaultNow, bNow;
  await step('Open leads to sandbox A: its project and clock, no panel, every request below /sbx/A', async () => {
    defaultNow = (await control('GET', '/_sim/state?limit=1')).body.now;
    bNow = (await control('GET', `/_sim/sandboxes/${B}`)).body.clock.now;
    await row(A).getByRole('link', { name: /^Open/ }).click();
    await page.waitForURL(`${base}/sbx/${A}/_sim/ui/`);
    paths.length = 0;
    await page.reload();
    await projects.filter({ hasText: 'Sandbox A only' }).waitFor();
    check(!(await projects.textContent()).includes('Default only'), 'sandbox A shows the default project');
    await page.locator('#clock-now').filter({ hasText: /^2026-05-01T00:00:00/ }).waitFor();
    check(await page.locator('#sandboxes').isHidden(), 'no Sandboxes panel inside a sandbox');
    check(paths.length > 0 && paths.every((p) => p.startsWith(`/sbx/${A}/`)), `requests outside /sbx/${A}: ${paths.filter((p) => !p.startsWith(`/sbx/${A}/`))}`);
  });

  await step('an action there (advance 1 hour) changes sandbox A only', async () => {
    await page.getByRole('button', { name: 'Advance 1 hour' }).click();
    await page.locator('#clock-now').filter({ hasText: /^2026-05-01T01:00:00/ }).waitFor();
    const a = (await control('GET', `/sbx/${A}/_sim/state?limit=1`)).body.now;
    check(a.startsWith('2026-05-01T01:00:00'), `A's clock: ${a}`);
    const d = (await control('GET', '/_sim/state?limit=1')).body.now;
    check(d === defaultNow, `the default's clock moved: ${defaultNow} -> ${d}`);
    const b = (await control('GET', `/_sim/sandboxes/${B}`)).body.clock.now;
    check(b === bNow, `B's clock moved: ${bNow} -> ${b}`);
  });

  await step('the alias /_sim/sandboxes/A/ui/ is the same dashboard', async () => {
    paths.length = 0;
    await page.goto(`${base}/_sim/sandboxes/${A}/ui/`);
    await projects.filter({ hasText: 'Sandbox A only' }).waitFor();
    await page.locator('#clock-now').filter({ hasText: /^2026-05-01T01:00:00/ }).waitFor();
    const off = paths.filter((p) => !p.startsWith(`/sbx/${A}/`) && !p.startsWith(`/_sim/sandboxes/${A}/ui/`));
    check(off.length === 0, `requests outside sandbox A: ${off}`);
  });

  await step('reset everything in sandbox A leaves the default alone', async () => {
    await page.selectOption('#reset-key', '');
    await page.click('#reset-form button[type=submit]');
    await until('A has no project', async () => (await control('GET', `/sbx/${A}/_sim/state?limit=5`)).body.projects.length === 0);
    await projects.filter({ hasText: 'No platform project yet' }).waitFor();
    const d = (await control('GET', '/_sim/state?limit=5')).body.projects.map((p) => p.name);
    check(d.includes('Default only'), `the default lost its project: ${d}`);
  });

  await step('Delete in the default dashboard removes sandbox B', async () => {
    await page.goto(base + '/_sim/ui/');
    await row(B).getByRole('button', { name: `Delete sandbox ${B}` }).click();
    await row(B).waitFor({ state: 'detached' });
    check((await control('GET', `/_sim/sandboxes/${B}`)).status === 404, 'B still exists');
    check((await control('GET', `/_sim/sandboxes/${A}`)).status === 200, 'A is gone');
    await row(A).waitFor();
    const sum = await page.locator('#sandboxes-summary').textContent();
    check(sum.startsWith('1 of at most'), `summary: ${sum}`);
  });
};
