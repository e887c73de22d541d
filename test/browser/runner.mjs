// runner.mjs runs the scenarios of this suite (scenario.mjs) in one node
// process and one chromium, each in browser contexts of its own: a node
// start with playwright-core costs about 1.3 s of CPU and a chromium start
// about 2 s more, and one process drives the browser without relaying
// every message through another.
//
// Under go test it serves http://127.0.0.1:PORT, which it prints on one
// line: POST /NAME.mjs with the scenario's environment as a JSON object
// runs it and answers its output as it goes; it stops when its standard
// input ends. Run by hand, `node runner.mjs NAME.mjs` runs one scenario
// with the process's environment (DUBSIM_URL, CHROMIUM, ...: see the
// scenario) and exits 1 when it fails.
import http from 'node:http';
import { launch } from './launch.mjs';
import { run } from './scenario.mjs';

const scenarios = new Set(['actions.mjs', 'dashboard.mjs', 'layout.mjs', 'sandboxes.mjs', 'token.mjs']);
const load = async (name) => {
  if (!scenarios.has(name)) throw new Error(`no scenario ${name}: one of ${[...scenarios].join(', ')}`);
  return (await import(`./${name}`)).default;
};

if (process.argv[2]) {
  const scenario = await load(process.argv[2]);
  const browser = await launch();
  try {
    const ok = await run(browser, process.env, console.log, scenario);
    process.exitCode = ok ? 0 : 1;
  } finally {
    await browser.close();
  }
} else {
  // A scenario that failed may leave a promise to reject later (a dialog
  // it no longer waits for): said on stderr, not the end of the others.
  process.on('unhandledRejection', (e) => console.error('unhandled rejection:', e));
  const browser = await launch();
  const server = http.createServer(async (req, res) => {
    try {
      const name = new URL(req.url, 'http://runner').pathname.slice(1);
      const scenario = await load(name);
      let body = '';
      for await (const chunk of req) body += chunk;
      const env = JSON.parse(body);
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
      await run(browser, env, (line) => res.write(line + '\n'), scenario);
    } catch (e) {
      if (!res.headersSent) res.writeHead(400, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.write(`FAIL runner: ${e.message}\n`);
    }
    res.end();
  });
  server.listen(0, '127.0.0.1', () => console.log(`http://127.0.0.1:${server.address().port}`));
  process.stdin.on('end', async () => {
    server.close();
    await browser.close();
    process.exit(0);
  });
  process.stdin.resume();
}
