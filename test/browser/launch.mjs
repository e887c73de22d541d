// launch gives one script of this suite a chromium (Debian's, CHROMIUM,
// headless). Under `go test` the scripts share one browser that the Go test
// started (server.mjs, BROWSER_WS): each script works in contexts of its
// own, and a chromium start costs seconds of CPU. Run alone, a script
// starts its own. A browser that dies while it starts (it happened while
// the rest of `go test ./...` loaded the machine) is started again, at most
// three times in all; each failure is printed, and a browser that never
// starts still fails the test with its logs.
import { chromium } from 'playwright-core';

// sharedFlags are the flags any script asks for; the shared browser has
// them all.
export const sharedFlags = ['--metrics-recording-only', '--no-default-browser-check', '--autoplay-policy=no-user-gesture-required'];

const options = (more) => ({
  executablePath: process.env.CHROMIUM, headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--disable-default-apps', '--disable-extensions', ...more],
});

export const retry = async (start) => {
  if (!process.env.CHROMIUM) throw new Error('CHROMIUM is not set');
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (e) {
      if (attempt === 3) throw e;
      console.log(`chromium did not start (attempt ${attempt} of 3): ${String(e.message).split('\n')[0]}`);
    }
  }
};

// more: further chromium flags of one script (each one of sharedFlags).
export const launch = async (...more) => {
  const unknown = more.filter((f) => !sharedFlags.includes(f));
  if (unknown.length) throw new Error(`flags missing from sharedFlags: ${unknown.join(' ')}`);
  if (process.env.BROWSER_WS) return chromium.connect(process.env.BROWSER_WS);
  return retry(() => chromium.launch(options(more)));
};

// launchServer starts the shared browser.
export const launchServer = () => retry(() => chromium.launchServer(options(sharedFlags)));
