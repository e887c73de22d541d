// launch starts the chromium of this suite (Debian's, CHROMIUM, headless),
// kept off the network (this machine has none) and quiet: no background
// services, no component updates, no sync. A browser that dies while it
// starts (it happened while the rest of `go test ./...` loaded the
// machine) is started again, at most three times in all; each failure is
// printed, and a browser that never starts still fails the test with its
// logs.
import { chromium } from 'playwright-core';

export const launch = async () => {
  if (!process.env.CHROMIUM) throw new Error('CHROMIUM is not set');
  const options = {
    executablePath: process.env.CHROMIUM, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-default-apps', '--disable-extensions',
      '--metrics-recording-only', '--no-default-browser-check', '--autoplay-policy=no-user-gesture-required'],
  };
  for (let attempt = 1; ; attempt++) {
    try {
      return await chromium.launch(options);
    } catch (e) {
      if (attempt === 3) throw e;
      console.log(`chromium did not start (attempt ${attempt} of 3): ${String(e.message).split('\n')[0]}`);
    }
  }
};
