// Runs test/support/future-host.ts in its own process, as a GPU host is (e2e specs spawn it with tsx): prints
// one JSON line with how to reach it, stops on SIGTERM.
import { startFutureHost } from './future-host';

void startFutureHost().then((fh) => {
  process.stdout.write(
    JSON.stringify({ port: fh.port, user: fh.user, keyFile: fh.keyFile, home: fh.home }) + '\n',
  );
  const stop = (): void => void fh.stop().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
});
