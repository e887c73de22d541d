// The browser scenario of browser_test.go: Debian's chromium, driven by
// playwright-core, against a dubsim the Go test started (frozen clock) and
// filled (one platform project, one refused request). Every step checks
// what a person would see; a failure names the step.
// Environment: DUBSIM_URL, PROJECT_ID, PROJECT_NAME, API_KEY, ARTIFACT_ID,
// STUDIO_PROJECT_URL, STUDIO_PROJECT_NAME, SCREENSHOTS (optional).
const timeout = 10_000;

export default async ({ env, step, check, problems, newContext, shot }) => {
  const base = env('DUBSIM_URL');
  const projectID = env('PROJECT_ID');
  const artifactID = env('ARTIFACT_ID');
  const projectName = env('PROJECT_NAME');
  const apiKey = env('API_KEY');
  const studioURL = env('STUDIO_PROJECT_URL');
  const studioName = env('STUDIO_PROJECT_NAME');
  const control = async (p) => {
    const res = await fetch(base + p);
    if (!res.ok) throw new Error(`GET ${p}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const offsite = [];

  const context = await newContext({ viewport: { width: 1366, height: 768 } });
  // Offline: anything not on dubsim's own address is refused and reported.
  const own = new URL(base).host;
  await context.route('**/*', (route) => {
    const u = new URL(route.request().url());
    if (u.host === own || u.protocol === 'data:') return route.continue();
    offsite.push(u.href);
    return route.abort();
  });
  const page = await context.newPage();
  page.setDefaultTimeout(timeout);
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  // The one expected 404: a dubsim without sandboxes answers the
  // dashboard's GET /_sim/sandboxes so, and the panel stays hidden.
  const expected404 = (m) => /status of 404/.test(m.text()) && new URL(m.location().url || base).pathname === '/_sim/sandboxes';
  page.on('console', (m) => { if (m.type() === 'error' && !expected404(m)) problems.push(`console error: ${m.text()} (${m.location().url})`); });

  const row = page.locator(`tr[data-project-id="${projectID}"]`);
  const rowStatus = row.locator('.status');

  await step('the dashboard lists the new project as in_progress', async () => {
    await page.goto(base + '/_sim/ui/');
    check((await page.title()) === 'dubsim dashboard', `title is ${await page.title()}`);
    await rowStatus.filter({ hasText: /^in_progress$/ }).waitFor();
    await page.locator(`tr[data-artifact-id="${artifactID}"] td.status`).filter({ hasText: /^created$/ }).waitFor();
    await page.locator('#clock-now').filter({ hasText: /\d{4}-\d\d-\d\dT/ }).waitFor();
    check(await page.locator('#sandboxes').isHidden(), 'no Sandboxes panel without sandboxes');
    await shot(page, '01-dashboard.png', { fullPage: true });
  });

  await step('keyboard: the first Tab reaches the skip link', async () => {
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => document.activeElement?.textContent?.trim());
    check(focused === 'Skip to content', `first focus is ${JSON.stringify(focused)}`);
  });

  await step('every control has a label and every button a name', async () => {
    const missing = await page.evaluate(() => {
      const out = [];
      for (const el of document.querySelectorAll('input, select, textarea')) {
        if (el.type === 'hidden') continue;
        if (!(el.labels?.length || el.getAttribute('aria-label') || el.getAttribute('aria-labelledby'))) out.push(`${el.tagName}#${el.id}`);
      }
      for (const b of document.querySelectorAll('button, a[href]')) {
        if (!(b.textContent.trim() || b.getAttribute('aria-label'))) out.push(`${b.tagName} ${b.outerHTML.slice(0, 80)}`);
      }
      if (!document.documentElement.lang) out.push('html without lang');
      return out;
    });
    check(missing.length === 0, `unlabelled: ${missing.join(', ')}`);
  });

  await step('text contrast is at least 4.5:1 (3:1 for large text)', async () => {
    const low = await page.evaluate(contrastAudit);
    check(low.length === 0, `low contrast:\n  ${low.join('\n  ')}`);
  });

  await step('Advance to next due transition starts the artifact upload, nothing else', async () => {
    await page.getByRole('button', { name: 'Advance to next due transition', exact: true }).click();
    await page.locator(`tr[data-artifact-id="${artifactID}"] td.status`).filter({ hasText: /^upload_started$/ }).waitFor();
    await page.locator('#status-message').filter({ hasText: artifactID }).waitFor();
    check((await rowStatus.textContent()) === 'in_progress', 'the project moved too');
  });

  await step('Advance 1 hour (pressed with the keyboard) completes the project and the artifact', async () => {
    const before = await page.locator('#clock-now').textContent();
    const button = page.getByRole('button', { name: 'Advance 1 hour', exact: true });
    await button.focus();
    await page.keyboard.press('Enter');
    await rowStatus.filter({ hasText: /^ready$/ }).waitFor();
    await page.locator(`tr[data-artifact-id="${artifactID}"] td.status`).filter({ hasText: /^upload_completed$/ }).waitFor();
    const after = await page.locator('#clock-now').textContent();
    check(after !== before, `the clock still shows ${after}`);
    const p = await control(`/_sim/projects/${projectID}`);
    check(p.status === 'ready', `the API says ${p.status}`);
    await shot(page, '02-after-advance.png', { fullPage: true });
  });

  await step('the project detail shows timeline, scripts and playable audio', async () => {
    const p = await control(`/_sim/projects/${projectID}`);
    await row.getByRole('button', { name: new RegExp(`^Details`) }).click();
    const detail = page.locator('#project-detail');
    await detail.waitFor({ state: 'visible' });
    await detail.getByRole('heading', { name: projectName }).first().waitFor();
    await detail.getByText(p.source_script[0].text, { exact: false }).first().waitFor();
    await detail.getByText(p.target_script[0].text, { exact: false }).first().waitFor();
    // The timeline keeps the estimate given at creation next to the actual completion.
    const events = detail.locator('.event-list');
    await events.getByText('estimated completion').first().waitFor();
    await events.getByText(/^completed$/).first().waitFor();
    const created = p.history.find((e) => e.kind === 'created');
    check(created && created.estimated_completion, `no estimate kept in ${JSON.stringify(p.history)}`);
    const audio = detail.locator('audio');
    await audio.waitFor();
    const seconds = await audio.evaluate((a) => new Promise((resolve, reject) => {
      a.preload = 'metadata';
      a.addEventListener('loadedmetadata', () => resolve(a.duration), { once: true });
      a.addEventListener('error', () => reject(new Error(`audio error ${a.error?.code}`)), { once: true });
      a.load();
    }));
    check(Math.abs(seconds - p.duration_ms / 1000) < 0.1, `audio plays ${seconds} s, project lasts ${p.duration_ms} ms`);
    await detail.scrollIntoViewIfNeeded();
    await shot(page, '03-project-detail.png', { fullPage: true });
  });

  await step('the journal shows the refused request with its body and the rule behind it', async () => {
    const journal = page.locator('#journal');
    // The refused request itself: '400' alone also matches a duration
    // such as "400.3 ms" of a newer row (an advance that waited).
    const entry = journal.locator('tbody.refused[data-seq]').filter({ hasText: 'xx-XX' }).first();
    await entry.waitFor();
    const summary = entry.locator('summary').first();
    if (await summary.count()) await summary.click();
    await journal.getByText('xx-XX', { exact: false }).first().waitFor();
    await journal.getByText(/ValidationError/).first().waitFor();
    await journal.getByText(/documented/i).first().waitFor();
    await journal.scrollIntoViewIfNeeded();
    await shot(journal, '04-journal.png');
  });

  await step('a fault rule is added with the form and removed with its button', async () => {
    const faults = page.locator('#faults');
    await page.locator('#fault-method').selectOption('GET');
    await page.locator('#fault-path').fill('/api/v1/balance');
    await page.locator('#fault-type').selectOption('error');
    await page.locator('#fault-status').fill('503');
    await page.locator('#fault-error').fill('ServiceUnavailableError');
    await page.locator('#fault-message').fill('Try again later');
    await faults.getByRole('button', { name: 'Add fault rule' }).click();
    await faults.locator('td, li').filter({ hasText: '/api/v1/balance' }).first().waitFor();
    const rules = (await control('/_sim/faults')).rules;
    check(rules.length === 1 && rules[0].path === '/api/v1/balance' && rules[0].action.status === 503,
      `the API has ${JSON.stringify(rules)}`);
    await faults.scrollIntoViewIfNeeded();
    await shot(faults, '05-faults.png');
    await faults.getByRole('button', { name: `Remove fault ${rules[0].id}` }).click();
    await faults.locator('td, li').filter({ hasText: '/api/v1/balance' }).first().waitFor({ state: 'detached' });
    check((await control('/_sim/faults')).rules.length === 0, 'the rule is still there');
  });

  await step('the conformance report of the key lists its findings', async () => {
    await page.locator('#report-key').selectOption(apiKey);
    await page.getByRole('button', { name: 'Show report' }).click();
    const report = page.locator('#report-body');
    await report.getByText('post-without-idempotency-key').first().waitFor();
    await report.scrollIntoViewIfNeeded();
    await shot(page.locator('#report'), '06-report.png');
  });

  await step('the studio section links to the projectUrl, which opens the project page', async () => {
    const href = new URL(studioURL).pathname;
    await page.locator(`#studio a[href="${href}"]`).first().waitFor();
    const res = await page.goto(studioURL);
    check(res.status() === 200, `projectUrl answered ${res.status()}`);
    const h1 = (await page.locator('h1').textContent()).trim();
    check(h1 === studioName, `h1 is ${h1}`);
    await page.getByRole('heading', { name: 'Glossaries' }).waitFor();
    await page.getByRole('heading', { name: /^Videos/ }).waitFor();
    const low = await page.evaluate(contrastAudit);
    check(low.length === 0, `low contrast on the project page:\n  ${low.join('\n  ')}`);
    await shot(page, '07-studio-project.png', { fullPage: true });
  });

  await step('nothing left dubsim\'s address and no script error happened', async () => {
    check(offsite.length === 0, `requests to other hosts: ${offsite.join(', ')}`);
    check(problems.length === 0, problems.join('\n'));
  });
};

// contrastAudit runs in the page: every visible element with its own text,
// its colour against the background it is drawn on (ancestors' backgrounds
// composed), against WCAG 2 AA.
function contrastAudit() {
  const parse = (c) => {
    const m = c.match(/rgba?\(([^)]+)\)/);
    if (!m) return [0, 0, 0, 0];
    const p = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, under) => {
    const a = top[3];
    return [0, 1, 2].map((i) => top[i] * a + under[i] * (1 - a)).concat(1);
  };
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) layers.push(c);
      if (c[3] >= 1) break;
    }
    let bg = [255, 255, 255, 1];
    for (let i = layers.length - 1; i >= 0; i--) bg = over(layers[i], bg);
    return bg;
  };
  const lum = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const out = [];
  for (const el of document.body.querySelectorAll('*')) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own) continue;
    const st = getComputedStyle(el);
    const r = el.getBoundingClientRect();
    if (st.visibility === 'hidden' || st.display === 'none' || r.width < 2 || r.height < 2 || el.closest('[hidden]')) continue;
    if (el.closest('.visually-hidden, .sr-only') || (r.right < 0 || r.bottom < 0)) continue;
    const bg = background(el);
    const fg = over(parse(st.color), bg);
    const [l1, l2] = [lum(fg), lum(bg)].sort((a, b) => b - a);
    const ratio = (l1 + 0.05) / (l2 + 0.05);
    const size = parseFloat(st.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(st.fontWeight) >= 700);
    if (ratio < (large ? 3 : 4.5)) {
      out.push(`${ratio.toFixed(2)} ${el.tagName.toLowerCase()}${el.id ? '#' + el.id : ''}.${[...el.classList].join('.')} "${el.textContent.trim().slice(0, 40)}"`);
    }
    if (out.length >= 15) break;
  }
  return out;
}
