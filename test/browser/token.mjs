// The control-token scenario of token_test.go: Debian's chromium, driven by
// playwright-core, against a dubsim started with a control token (frozen
// clock). The dashboard must ask for the token, say when a token is
// refused, load once the right one is given, send it with its actions, and
// never put it in an address.
// Environment: DUBSIM_URL, CONTROL_TOKEN, PROJECT_ID, SCREENSHOTS (optional).
const wrong = 'not-the-token-0123';
const timeout = 10_000;

export default async ({ env, step, check, problems, newContext, shot }) => {
  const base = env('DUBSIM_URL');
  const token = env('CONTROL_TOKEN');
  const projectID = env('PROJECT_ID');
  const urls = []; // every address the page asked for
  const controlCalls = []; // {method, url, auth} of every /_sim/ call but the dashboard's files

  const context = await newContext({ viewport: { width: 1366, height: 768 } });
  const own = new URL(base).host;
  await context.route('**/*', (route) => {
    const u = new URL(route.request().url());
    if (u.host === own || u.protocol === 'data:') return route.continue();
    problems.push(`offsite request: ${u.href}`);
    return route.abort();
  });
  const page = await context.newPage();
  page.setDefaultTimeout(timeout);
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('request', (r) => {
    urls.push(r.url());
    const u = new URL(r.url());
    if (u.pathname.startsWith('/_sim/') && !u.pathname.startsWith('/_sim/ui/')) {
      controlCalls.push({ method: r.method(), path: u.pathname, auth: r.headers().authorization || '' });
    }
  });

  // Dialogs: each one is recorded and answered by the next answer queued
  // (a string accepts with it, null cancels). An unexpected dialog fails.
  const dialogs = [];
  const answers = [];
  let dialogSeen = () => {};
  page.on('dialog', async (d) => {
    dialogs.push({ type: d.type(), message: d.message() });
    const a = answers.shift();
    if (a === undefined) problems.push(`unexpected ${d.type()}: ${d.message()}`);
    if (d.type() === 'prompt' && typeof a === 'string') await d.accept(a);
    else await d.dismiss();
    dialogSeen();
  });
  const nextDialog = (answer) => new Promise((resolve, reject) => {
    answers.push(answer);
    const n = dialogs.length;
    const t = setTimeout(() => reject(new Error(`no dialog within ${timeout} ms (dialogs so far: ${JSON.stringify(dialogs)})`)), timeout);
    dialogSeen = () => { if (dialogs.length > n) { clearTimeout(t); resolve(dialogs[n]); } };
  });

  await step('the dashboard asks for the token when it loads', async () => {
    const asked = nextDialog(wrong);
    await page.goto(base + '/_sim/ui/');
    const d = await asked;
    check(d.type === 'prompt', `a ${d.type}, not a prompt`);
    check(/control token|--control-token/i.test(d.message), `the prompt says ${JSON.stringify(d.message)}`);
  });

  await step('a wrong token is refused: the dashboard says so, and asks again', async () => {
    const again = nextDialog(null); // cancelled: the refusal stays on the page
    const d = await again;
    check(/refused|wrong|not accepted/i.test(d.message), `the second prompt does not say the token was refused: ${JSON.stringify(d.message)}`);
    const err = page.locator('#clock-error');
    await err.filter({ hasText: /token/i }).waitFor();
    const text = await err.textContent();
    check(!text.includes(wrong), 'the error repeats the token');
    await shot(page, 'token-01-refused.png', { fullPage: true });
    const sent = controlCalls.filter((c) => c.auth === `Bearer ${wrong}`);
    check(sent.length > 0, 'the wrong token was never sent');
  });

  await step('after a cancel the dashboard does not ask again by itself', async () => {
    const n = dialogs.length;
    await page.waitForTimeout(2500); // two refresh periods
    check(dialogs.length === n, `asked again ${dialogs.length - n} times`);
  });

  // When the right token was given, and how many dialogs there were then.
  let given;
  await step('the right token loads the dashboard', async () => {
    const asked = nextDialog(token);
    await page.reload();
    await asked;
    given = { at: Date.now(), dialogs: dialogs.length };
    await page.locator('#clock-now').filter({ hasText: /\d{4}-\d\d-\d\dT/ }).waitFor();
    await page.locator(`tr[data-project-id="${projectID}"] .status`).filter({ hasText: /^in_progress$/ }).waitFor();
    await page.locator('#clock-error').filter({ hasText: /^$/ }).waitFor({ state: 'attached' });
    await shot(page, 'token-02-loaded.png', { fullPage: true });
  });

  await step('Advance 1 hour sends the token and completes the project', async () => {
    const before = await page.locator('#clock-now').textContent();
    await page.getByRole('button', { name: 'Advance 1 hour', exact: true }).click();
    await page.locator(`tr[data-project-id="${projectID}"] .status`).filter({ hasText: /^ready$/ }).waitFor();
    const after = await page.locator('#clock-now').textContent();
    check(after !== before, `the clock still shows ${after}`);
    const adv = controlCalls.filter((c) => c.method === 'POST' && c.path === '/_sim/clock/advance');
    check(adv.length === 1, `${adv.length} advance calls`);
    check(adv[0].auth === `Bearer ${token}`, `the advance sent ${JSON.stringify(adv[0].auth)}`);
  });

  await step('the project audio plays with the token', async () => {
    await page.locator(`tr[data-project-id="${projectID}"]`).getByRole('button', { name: /^Details/ }).click();
    const detail = page.locator('#project-detail');
    await detail.waitFor({ state: 'visible' });
    await detail.getByRole('button', { name: 'Load audio', exact: true }).click();
    const audio = detail.locator('audio');
    await audio.waitFor();
    const src = await audio.getAttribute('src');
    check(src && src.startsWith('blob:'), `the player's source is ${src}`);
    const wav = controlCalls.filter((c) => c.path === `/_sim/projects/${projectID}/audio.wav`);
    check(wav.length === 1 && wav[0].auth === `Bearer ${token}`, `the audio was fetched as ${JSON.stringify(wav)}`);
    const ok = await audio.evaluate((a) => new Promise((resolve) => {
      if (a.readyState >= 1) return resolve(a.duration > 0);
      a.addEventListener('loadedmetadata', () => resolve(a.duration > 0), { once: true });
      a.addEventListener('error', () => resolve(false), { once: true });
    }));
    check(ok, 'the audio did not load');
  });

  // The wait starts when the token was given, so the two steps above run
  // inside it: a prompt at any time fails the scenario (problems).
  await step('one prompt was enough: calls refused before it do not ask again (2.5 s, past the stream\'s 2 s reconnect)', async () => {
    await page.waitForTimeout(Math.max(0, given.at + 2500 - Date.now()));
    check(dialogs.length === given.dialogs, `asked ${dialogs.length - given.dialogs} more times after the right token: ${JSON.stringify(dialogs.slice(given.dialogs))}`);
  });

  await step('a reload keeps the token for the tab: no prompt', async () => {
    const n = dialogs.length;
    await page.reload();
    await page.locator('#clock-now').filter({ hasText: /\d{4}-\d\d-\d\dT/ }).waitFor();
    await page.waitForTimeout(1500);
    check(dialogs.length === n, 'asked again after a reload');
  });

  await step('the token is in no address', async () => {
    const leaks = [...urls, page.url()].filter((u) => u.includes(token) || u.includes(wrong));
    check(leaks.length === 0, `addresses with the token: ${leaks.join(', ')}`);
    const state = await page.evaluate(() => [location.href, document.referrer, history.length].join(' '));
    check(!state.includes(token), `the page's address: ${state}`);
  });

  await step('every control call after the right token carried it', async () => {
    const i = controlCalls.findIndex((c) => c.auth === `Bearer ${token}`);
    check(i >= 0, 'no call carried the token');
    const bare = controlCalls.slice(i).filter((c) => c.auth !== `Bearer ${token}` && c.path !== '/_sim/health');
    check(bare.length === 0, `calls without the token: ${JSON.stringify(bare.slice(0, 5))}`);
  });
};
