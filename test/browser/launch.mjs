// launch starts Debian's chromium (CHROMIUM) headless for one script of
// this suite. A browser that dies while it starts (it happened while the
// rest of `go test ./...` loaded the machine) is started again, at most
// three times in all; each failure is printed, and a browser that never
// starts still fails the test with its logs.
import { chromium } from 'playwright-core';

// more: further chromium flags of one script.
export const launch = async (...more) => {
  const executablePath = process.env.CHROMIUM;
  if (!executablePath) throw new Error('CHROMIUM is not set');
  for (let attempt = 1; ; attempt++) {
    try {
      return await chromium.launch({
        executablePath, headless: true,
        args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
          '--disable-component-update', '--disable-sync', '--disable-default-apps', '--disable-extensions', ...more],
      });
    } catch (e) {
      if (attempt === 3) throw e;
      console.log(`chromium did not start (attempt ${attempt} of 3): ${String(e.message).split('\n')[0]}`);
    }
  }
};
