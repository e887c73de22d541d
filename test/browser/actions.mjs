// The actions and paging scenario of actions_test.go: chromium against a
// dubsim with more than one page of platform projects (frozen clock). Each
// action is driven through the dashboard and its effect read back through
// the control API; an idle dashboard must not read /_sim/state.
// Environment: DUBSIM_URL, PROJECT_ID, ARTIFACT_ID, VIDEO_ID, API_KEY,
// PROJECTS (how many projects the Go test made).
import fs from 'node:fs';

const timeout = 10_000;
const IDLE_MS = 3000; // the explicit idleness window

export default async ({ env, step, check, until, problems, newContext }) => {
  const base = env('DUBSIM_URL');
  const projectID = env('PROJECT_ID');
  const artifactID = env('ARTIFACT_ID');
  const videoID = env('VIDEO_ID');
  const apiKey = env('API_KEY');
  const total = Number(env('PROJECTS'));
  const control = async (method, p, body) => {
    const res = await fetch(base + '/_sim' + p, { method, headers: { 'Content-Type': 'application/json' }, body: body && JSON.stringify(body) });
    if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
    return res.json();
  };

  const context = await newContext({ viewport: { width: 1366, height: 900 }, acceptDownloads: true });
  const page = await context.newPage();
  page.setDefaultTimeout(timeout);
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('dialog', (d) => d.accept());
  const stateReads = [];
  page.on('request', (r) => { if (new URL(r.url()).pathname === '/_sim/state') stateReads.push(r.url()); });
  const caption = page.locator('#projects-body caption');

  await step('the first page shows 50 projects and a next page', async () => {
    await page.goto(base + '/_sim/ui/');
    await caption.filter({ hasText: 'page 1 (50 shown' }).waitFor();
    check(await page.locator('#projects-body tbody tr').count() === 50, 'rows on page 1');
    check(stateReads.every((u) => u.includes('limit=50')), `a state read without limit=50: ${stateReads}`);
    await page.locator('#projects-next:not([disabled])').waitFor();
  });
  await step('next and previous page', async () => {
    await page.click('#projects-next');
    await caption.filter({ hasText: `page 2 (${total - 50} shown` }).waitFor();
    check(stateReads.some((u) => u.includes('cursor=')), 'page 2 read with a cursor');
    await page.locator('#projects-next[disabled]').waitFor();
    await page.click('#projects-prev');
    await caption.filter({ hasText: 'page 1 (50 shown' }).waitFor();
  });
  await step(`no /_sim/state read while idle (${IDLE_MS} ms), one after a change`, async () => {
    // Settled: no state read for 500 ms (the page's own last refresh done).
    let seen = -1;
    await until('the page settled', async () => {
      const n = stateReads.length;
      if (n === seen) return true;
      seen = n;
      await new Promise((r) => setTimeout(r, 500));
      return false;
    });
    const before = stateReads.length;
    await new Promise((r) => setTimeout(r, IDLE_MS));
    check(stateReads.length === before, `${stateReads.length - before} state reads while idle`);
    await control('POST', '/clock/advance', { seconds: 1 });
    await until('a state read after the clock moved', () => stateReads.length > before);
  });
  await step('create an account', async () => {
    await page.fill('#account-key', 'ui-made');
    await page.fill('#account-name', 'Made in the dashboard');
    await page.selectOption('#account-plan', 'enterprise');
    await page.fill('#account-balance', '42');
    await page.click('#account-form button[type=submit]');
    await until('the account exists', async () => (await control('GET', '/state?api_key=ui-made&limit=1')).accounts.some((a) => a.api_key === 'ui-made' && a.plan === 'enterprise' && a.balance_minutes === 42));
    await page.locator('tr[data-api-key="ui-made"]').waitFor();
  });
  await step('force a project outcome', async () => {
    await page.selectOption('#outcome-resource', 'project');
    await page.fill('#outcome-id', projectID);
    await page.selectOption('#outcome-outcome', 'error');
    await page.fill('#outcome-message', 'Forced from the dashboard');
    await page.click('#outcome-form button[type=submit]');
    await until('the project is in error', async () => {
      const p = await control('GET', `/projects/${projectID}`);
      return p.status === 'error' && p.error_message === 'Forced from the dashboard';
    });
  });
  await step('force an artifact outcome', async () => {
    await page.selectOption('#outcome-resource', 'artifact');
    await page.fill('#outcome-id', artifactID);
    await page.selectOption('#outcome-outcome', 'ready');
    await page.click('#outcome-form button[type=submit]');
    await until('the artifact completed', async () => (await control('GET', '/studio')).artifacts.some((a) => a.id === artifactID && a.status === 'upload_completed'));
  });
  await step('set a video status', async () => {
    await page.fill('#video-id', videoID);
    await page.selectOption('#video-status', 'completed');
    await page.click('#video-form button[type=submit]');
    await until('the video is completed', async () => (await control('GET', '/studio')).videos.some((v) => v.id === videoID && v.status === 'completed'));
  });
  await step('journal verify', async () => {
    await page.selectOption('#verify-method', 'POST');
    await page.fill('#verify-path', '/api/v1/projects');
    await page.fill('#verify-count', String(total));
    await page.selectOption('#verify-count-kind', 'count');
    await page.click('#verify-form button[type=submit]');
    await page.locator('#verify-result [data-verify-ok="true"]').waitFor();
    await page.fill('#verify-count', String(total + 1));
    await page.click('#verify-form button[type=submit]');
    await page.locator('#verify-result [data-verify-ok="false"]').waitFor();
  });
  await step('export the journal as HAR and JSON', async () => {
    const journal = await control('GET', '/requests?limit=0');
    for (const [id, kind] of [['#export-har', 'har'], ['#export-json', 'json']]) {
      const [dl] = await Promise.all([page.waitForEvent('download'), page.click(id)]);
      check(dl.suggestedFilename().endsWith('.' + kind), `file name ${dl.suggestedFilename()}`);
      const doc = JSON.parse(fs.readFileSync(await dl.path(), 'utf8'));
      if (kind === 'har') {
        check(doc.log.version === '1.2', 'HAR version');
        check(doc.log.entries.length === journal.requests.length, `HAR has ${doc.log.entries.length} entries, journal ${journal.requests.length}`);
        const posts = doc.log.entries.filter((e) => e.request.method === 'POST' && new URL(e.request.url).pathname === '/api/v1/projects');
        check(posts.length === total, `HAR has ${posts.length} project creations`);
        check(posts[0].request.postData?.text.includes('source_lang'), 'HAR keeps the request body');
        check(posts[0].request.headers.some((h) => h.name === 'Authorization' && h.value === `Bearer ${apiKey}`), 'HAR has the API key');
        check(doc.log.entries.every((e, i, a) => i === 0 || a[i - 1]._seq < e._seq), 'HAR entries oldest first');
      } else {
        check(doc.requests.length === journal.requests.length, 'JSON export has every entry');
      }
    }
  });
  await step('reset one account', async () => {
    await page.selectOption('#reset-key', apiKey);
    await page.click('#reset-form button[type=submit]');
    await until('the account has no project', async () => (await control('GET', `/state?api_key=${apiKey}&limit=1`)).projects.length === 0);
    await page.locator('#projects-body').filter({ hasText: 'No platform project yet' }).waitFor();
  });
  await step('reset everything', async () => {
    await page.selectOption('#reset-key', '');
    await page.click('#reset-form button[type=submit]');
    await until('the made account is gone', async () => !(await control('GET', '/state?limit=1')).accounts.some((a) => a.api_key === 'ui-made'));
    await page.locator('tr[data-api-key="ui-made"]').waitFor({ state: 'detached' });
  });
};
