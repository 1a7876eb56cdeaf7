// Shared plumbing of the interop scripts: how they talk to the Go test that runs them.
// Each prints one JSON object per line on stdout ({"authorize": url}, {"result": …});
// the Go side answers by driving a browser, never by writing to the script. A script's
// loopback callback server receives where the browser lands.
import http from 'node:http';

export function say(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

export function need(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

// callback listens on 127.0.0.1 (an ephemeral port unless given) and resolves, for each
// request to path, the full URL the browser landed on; other paths answer 404 (a browser
// also asks for /favicon.ico).
export async function callback(path, port = 0) {
  const waiting = [];
  const landed = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, `http://127.0.0.1:${server.address().port}`);
    if (url.pathname !== path) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' }).end('<title>done</title>You may close this window.');
    const w = waiting.shift();
    if (w) w(url);
    else landed.push(url);
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}${path}`,
    next: () => (landed.length ? Promise.resolve(landed.shift()) : new Promise((resolve) => waiting.push(resolve))),
    close: () => server.close(),
  };
}

// run reports a script's failure as a line and a non-zero exit, so the Go test prints it.
export function run(main) {
  main().then(() => process.exit(0), (err) => {
    say({ error: String(err && err.stack || err) });
    process.exit(1);
  });
}
