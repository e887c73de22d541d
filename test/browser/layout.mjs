// The layout scenario of layout_test.go: chromium at 1400×1000 against a
// dubsim with a full page of platform projects and a journal. What a person
// opens the dashboard for (the projects and the requests) must start on the
// first screen, before the action forms; the positions measured are printed
// as JSON, the first screen is saved as FIRST_SCREEN (a PNG) and the whole
// page in SCREENSHOTS when it is set.
// Environment: DUBSIM_URL, FIRST_SCREEN, SCREENSHOTS (optional).
// Generous: the machine running the test may be busy; nothing here is timed.
const timeout = 30_000;
const width = 1400;
const height = 1000;

export default async ({ env, step, check, problems, newContext, shot, log }) => {
  const base = env('DUBSIM_URL');
  const firstScreen = env('FIRST_SCREEN');

  const context = await newContext({ viewport: { width, height } });
  const page = await context.newPage();
  page.setDefaultTimeout(timeout);
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));

  await step('the dashboard has drawn every section', async () => {
    await page.goto(base + '/_sim/ui/');
    await page.locator('#projects-body tbody tr[data-project-id]').first().waitFor();
    await page.locator('#journal-body tbody[data-seq]').first().waitFor();
    await page.locator('#studio-body table').first().waitFor();
    await page.locator('#accounts-body table').waitFor();
    await page.locator('#clock-now').filter({ hasText: /\d{4}-\d\d-\d\dT/ }).waitFor();
    // Nothing still loading: a section that fills in later would move the others.
    await page.waitForFunction(() => ![...document.querySelectorAll('main p.muted')].some((p) => p.textContent === 'Loading…'));
  });

  // Positions in page coordinates, read at the top of the page.
  const boxes = await page.evaluate(() => {
    window.scrollTo(0, 0);
    const at = (sel) => {
      const el = document.querySelector(sel);
      if (!el) return null;
      const r = el.getBoundingClientRect();
      return { top: Math.round(r.top + scrollY), left: Math.round(r.left), right: Math.round(r.right), bottom: Math.round(r.bottom + scrollY) };
    };
    const out = {};
    for (const sel of ['#projects', '#projects-body table', '#projects-body tbody tr[data-project-id]', '#journal',
      '#journal-body tbody[data-seq]', '#studio', '#accounts', '#clock', '#actions', '#faults', '#report',
      '#scale-form', '#reset-form', '#account-form', '#outcome-form', '#video-form', '#fault-form']) out[sel] = at(sel);
    out.page = { height: document.documentElement.scrollHeight };
    return out;
  });
  log('POSITIONS ' + JSON.stringify(boxes));

  await step('a screenshot of the first screen (and of the whole page with SCREENSHOTS)', async () => {
    await page.screenshot({ path: firstScreen, timeout: 2 * timeout });
    await shot(page, 'layout-full.png', { fullPage: true, timeout: 2 * timeout });
  });

  const content = { 'the projects table': '#projects-body table', 'the first project': '#projects-body tbody tr[data-project-id]',
    'the request journal': '#journal', 'the first request': '#journal-body tbody[data-seq]' };
  const forms = ['#scale-form', '#reset-form', '#account-form', '#outcome-form', '#video-form', '#fault-form'];

  await step(`the projects and the requests start on the first screen (top < ${height})`, async () => {
    for (const [name, sel] of Object.entries(content)) {
      check(boxes[sel].top < height, `${name} (${sel}) starts at ${boxes[sel].top}`);
    }
  });

  // Before in reading order: above the form, or in a column left of it.
  await step('the projects (platform and studio) and the requests come before every action form', async () => {
    for (const [name, sel] of Object.entries({ ...content, 'the studio section': '#studio' })) {
      for (const f of forms) {
        const c = boxes[sel], a = boxes[f];
        check(c.top < a.top || c.right <= a.left, `${name} ${JSON.stringify(c)} is below ${f} ${JSON.stringify(a)} and not left of it`);
      }
    }
  });
};
