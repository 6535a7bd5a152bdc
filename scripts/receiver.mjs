#!/usr/bin/env node
// A webhook receiver for trying formsvc without internet: answers 200 to every request on
// http://127.0.0.1:$PORT (default 9999) and prints each one (method, path, Service-* headers, body).
// Usage: node scripts/receiver.mjs, then --webhook-url http://127.0.0.1:9999/hook
import http from 'node:http';

const port = Number(process.env.PORT || 9999);
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const service = Object.entries(req.headers)
      .filter(([k]) => k.startsWith('service-'))
      .map(([k, v]) => `${k}: ${v}`);
    process.stdout.write(`${req.method} ${req.url}\n${service.join('\n')}\n${Buffer.concat(chunks).toString()}\n\n`);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
});
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`receiving webhooks on http://127.0.0.1:${server.address().port}/hook\n`);
});
