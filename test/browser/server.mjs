// server.mjs starts the chromium that the scripts of this suite share
// (launch.mjs), prints its WebSocket address on one line, and stops it when
// its standard input ends.
import { launchServer } from './launch.mjs';

const server = await launchServer();
console.log(server.wsEndpoint());
process.stdin.on('end', async () => {
  await server.close();
  process.exit(0);
});
process.stdin.resume();
