// podnet serve over HTTP, no browser: a bounded load test (200 requests
// from 8 concurrent clients, none may fail, resident memory must stay
// flat), and bad requests answered 4xx with the server still up.
// node http.test.mjs PODNET
import net from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { startServer, stopServer, check, summary } from './serve_util.mjs';

const podnet = process.argv[2];
// --sanitized: podnet is an ASan build, whose quarantine keeps freed memory resident; the RSS bounds are skipped.
const sanitized = process.argv.includes('--sanitized');
const s = await startServer(podnet);

// A raw request (fetch would normalize the path): the status code of the answer.
function raw(text) {
  return new Promise(resolve => {
    const sock = net.connect(s.port, '127.0.0.1', () => sock.write(text));
    let got = '';
    sock.on('data', d => { got += d; });
    sock.on('end', () => { const m = got.match(/^HTTP\/1\.1 (\d+)/); resolve(m ? Number(m[1]) : 0); });
    sock.on('error', () => resolve(-1));
    sock.setTimeout(5000, () => { sock.destroy(); resolve(-2); });
  });
}
const rss = () => Number(fs.readFileSync(`/proc/${s.proc.pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)[1]) / 1024;

try {
  const paths = ['/api/scenarios', '/assets/podnet.js', '/design', '/api/runs', '/assets/vendor/echarts.min.js'];
  const load = async rounds => {
    let ok = 0, bad = 0, next = 0;
    const client = async () => {
      while (next < rounds) {
        const p = paths[next++ % paths.length];
        const r = await fetch(s.url + p);
        await r.arrayBuffer();
        if (r.status === 200) ++ok; else ++bad;
      }
    };
    await Promise.all(Array.from({ length: 8 }, client));
    return { ok, bad };
  };
  await load(40);  // warm-up: thread pool and allocator reach their working size
  const before = rss();
  const t0 = Date.now();
  const { ok, bad } = await load(200);
  const after = rss();
  console.log(`load: 200 requests from 8 clients in ${Date.now() - t0} ms; RSS ${before.toFixed(1)} -> ${after.toFixed(1)} MiB`);
  check(ok === 200 && bad === 0, `200 requests from 8 concurrent clients all answered 200 (${ok} ok, ${bad} not)`);
  if (sanitized) console.log(`skip resident memory bounds: ASan build (quarantine), grew ${(after - before).toFixed(1)} MiB`);
  else check(after - before < 16, `resident memory flat under load (grew ${(after - before).toFixed(1)} MiB < 16 MiB)`);
  // A second round of 200: a leak would grow again by about as much; flat memory stays within a few MiB.
  const again = await load(200), last = rss();
  console.log(`load again: 200 requests, ${again.bad} failed; RSS ${after.toFixed(1)} -> ${last.toFixed(1)} MiB`);
  check(again.ok === 200 && (sanitized || last - after < 8),
        `second 200 requests: none failed, RSS grew ${(last - after).toFixed(1)} MiB < 8 MiB${sanitized ? ' (bound skipped: ASan)' : ''}`);

  // A second server on the port in use must refuse to start (cpp-httplib's default SO_REUSEPORT let it start and
  // take half the connections).
  let second = null;
  try {
    execFileSync(podnet, ['serve', '--port', String(s.port)], { timeout: 5000, stdio: ['ignore', 'pipe', 'pipe'] });
    second = 0;
  } catch (e) {
    second = e.signal ? e.signal : e.status;
    if (e.signal) console.log('second serve still running after 5 s: ' + e.signal);
    else console.log('second serve on the same port: exit ' + e.status + ': ' + String(e.stderr).trim());
  }
  check(second === 2, `a second podnet serve on port ${s.port} exits with an error (got ${second})`);
  check(await raw('GET /assets/../../../../etc/passwd HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n') === 404, 'path traversal ../ -> 404');
  check(await raw('GET /assets/..%2f..%2fetc%2fpasswd HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n') === 404, 'path traversal %2f -> 404');
  check(await raw('GET /../../etc/passwd HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n') === 404, 'traversal outside /assets -> 404');
  check(await raw('BLAH\r\n\r\n') === 400, 'malformed request line -> 400');
  check(await raw('GET /design\r\n\r\n') === 400, 'request line without a version -> 400');
  check(await raw('GET /design HTTP/9.9\r\n\r\n') === 400, 'unknown HTTP version -> 400');
  check(await raw('POST /api/runs HTTP/1.1\r\nContent-Length: abc\r\n\r\n') === 400, 'non-numeric Content-Length -> 400');
  const big = 'x'.repeat(2 * 1024 * 1024);
  let r = await fetch(s.url + '/api/runs', { method: 'POST', body: big });
  check(r.status === 413, `2 MiB upload -> 413 (got ${r.status})`);
  r = await fetch(s.url + '/api/runs', { method: 'POST', body: '{not json' });
  check(r.status === 400, `malformed JSON -> 400 (got ${r.status})`);
  r = await fetch(s.url + '/api/runs', { method: 'POST', body: JSON.stringify({ study: 'rm -rf' }) });
  check(r.status === 400, `unknown study -> 400 (got ${r.status})`);
  r = await fetch(s.url + '/api/runs', { method: 'POST', body: JSON.stringify({ study: 'design', scenario: '/etc/passwd' }) });
  check(r.status === 400 && /not a built-in scenario/.test((await r.json()).error), 'a scenario path (server file) -> 400');
  r = await fetch(s.url + '/api/runs', { method: 'POST', body: JSON.stringify({ study: 'bench', scenario: 'aipod-16k', min: '1MiB', max: '1KiB' }) });
  check(r.status === 400, `bench sizes min > max -> 400 (got ${r.status})`);
  r = await fetch(s.url + '/api/runs', { method: 'POST', body: JSON.stringify({ study: 'bench', scenario: 'aipod-16k', algo: 'fastest' }) });
  check(r.status === 400 && /'algo': 'fastest' is not an algorithm/.test((await r.json()).error), `bench unknown algo -> 400 (got ${r.status})`);
  r = await fetch(s.url + '/api/runs', { method: 'POST', body: JSON.stringify({ study: 'bench', scenario: 'aipod-16k', op: 'allreduc' }) });
  check(r.status === 400 && /'op': 'allreduc' is not a collective \(did you mean allreduce\?\)/.test((await r.json()).error), `bench misspelt op -> 400 with the nearest (got ${r.status})`);
  // plan-upgrade's tier is checked before the run is accepted (it was accepted, 202, then failed).
  r = await fetch(s.url + '/api/runs', { method: 'POST', body: JSON.stringify({ study: 'plan-upgrade', scenario: 'leafspine-8k', tier: 'spines' }) });
  check(r.status === 400 && /'spines' is not a switch tier/.test((await r.json()).error), `plan-upgrade unknown tier -> 400 (got ${r.status})`);
  // A number field given text (a form's text box) is parsed as the CLI parses it: the field, the text, what it takes.
  r = await fetch(s.url + '/api/runs', { method: 'POST', body: JSON.stringify({ study: 'inference', scenario: 'leafspine-8k', rate: 'fast' }) });
  check(r.status === 400 && /'rate': 'fast' is not valid; expected a number/.test((await r.json()).error), `inference rate 'fast' -> 400 naming it (got ${r.status})`);
  r = await fetch(s.url + '/api/runs', { method: 'POST', body: JSON.stringify({ study: 'bench', scenario: 'aipod-16k', routing: 'teleport' }) });
  check(r.status === 400 && /network\.routing/.test((await r.json()).error), `bench unknown routing -> 400 naming network.routing (got ${r.status})`);
  r = await fetch(s.url + '/api/runs', { method: 'POST', body: JSON.stringify({ study: 'bench', scenario: 'aipod-16k', gpus: '0-99999' }) });
  check(r.status === 400 && /'gpus': GPU list '0-99999'/.test((await r.json()).error), `bench GPUs beyond the fabric -> 400 naming 'gpus' (got ${r.status})`);
  for (const gpus of ['', '7', 7]) {
    r = await fetch(s.url + '/api/runs', { method: 'POST', body: JSON.stringify({ study: 'bench', scenario: 'aipod-16k', gpus }) });
    check(r.status === 400 && /'gpus'/.test((await r.json()).error), `bench gpus ${JSON.stringify(gpus)} -> 400 naming 'gpus' (got ${r.status})`);
  }
  r = await fetch(s.url + '/api/runs', { method: 'POST', body: JSON.stringify({ study: 'diagnose', scenario: 'aipod-16k', duration: 'soon' }) });
  check(r.status === 400 && /'duration': 'soon' is not a duration/.test((await r.json()).error), `diagnose bad duration -> 400 (got ${r.status})`);
  r = await fetch(s.url + '/api/runs', { method: 'POST', body: JSON.stringify({ study: 'train', scenario: 'aipod-16k', sweep: 'yes' }) });
  check(r.status === 400, `train sweep not a boolean -> 400 (got ${r.status})`);
  // A scenario of several jobs on the train page: refused now, pointing at the jobs page (podnet train runs it as jobs).
  r = await fetch(s.url + '/api/runs', { method: 'POST', body: JSON.stringify({ study: 'train', scenario: 'two-jobs' }) });
  check(r.status === 400 && /several jobs on one fabric: open it on the jobs page/.test((await r.json()).error), `train with a jobs scenario -> 400 naming the jobs page (got ${r.status})`);
  // Refused now, not accepted (202) and then failed or silently ignored.
  r = await fetch(s.url + '/api/runs', { method: 'POST', body: JSON.stringify({ study: 'design', scenario: 'aipod-16k', sets: ['topology.gpus=60'] }) });
  check(r.status === 400 && /not a whole number of 8-GPU servers/.test((await r.json()).error), `a rule between keys (60 GPUs of 8-GPU servers) -> 400 (got ${r.status})`);
  // inference's form fields set scenario keys, checked before the run like --set.
  r = await fetch(s.url + '/api/runs', { method: 'POST', body: JSON.stringify({ study: 'inference', scenario: 'leafspine-8k', model: 'gpt5' }) });
  check(r.status === 400 && /'model'.*gpt5/.test((await r.json()).error), `inference with an unknown model -> 400 naming the field (got ${r.status})`);
  r = await fetch(s.url + '/api/runs', { method: 'POST', body: JSON.stringify({ study: 'inference', scenario: 'leafspine-8k', model: 'llama3-405b', tp: 1 }) });
  check(r.status === 400 && /weights of llama3-405b .* need .* GB per GPU/.test((await r.json()).error),
    `inference with weights that do not fit a GPU -> 400 before the run (got ${r.status})`);
  r = await fetch(s.url + '/api/runs', { method: 'POST', body: JSON.stringify({ study: 'inference', scenario: 'leafspine-8k', target_tpot: '0s' }) });
  check(r.status === 400 && /target_tpot/.test((await r.json()).error), `inference with a zero latency target -> 400 (got ${r.status})`);
  // A key naming a file would have the server read its own files for a client.
  r = await fetch(s.url + '/api/runs', { method: 'POST', body: JSON.stringify({ study: 'inference', scenario: 'leafspine-8k', sets: ['inference.lengths_file=/etc/passwd'] }) });
  check(r.status === 400 && /'inference.lengths_file': names a file on the server/.test((await r.json()).error),
    `inference with a lengths file -> 400, the server reads no file for a client (got ${r.status})`);
  r = await fetch(s.url + '/inference');
  check(r.status === 200 && /podnet\.startApp/.test(await r.text()), `GET /inference: a page for the registry's inference study (got ${r.status})`);
  r = await fetch(s.url + '/api/runs', { method: 'POST', body: JSON.stringify({ study: 'design', scenario: 'aipod-16k', gpus: 64 }) });
  check(r.status === 400 && /'gpus': not a field of a design run/.test((await r.json()).error), `an unknown field -> 400 naming it (got ${r.status})`);
  r = await fetch(s.url + '/api/runs', { method: 'POST', body: JSON.stringify({ study: 'design', scenario: 'aipod-16k', yaml: 'schema_version: 1' }) });
  check(r.status === 400 && /both given/.test((await r.json()).error), `yaml and scenario both -> 400 (got ${r.status})`);
  r = await fetch(s.url + '/api/compare', { method: 'POST', body: JSON.stringify({ a: { document: { rows: [] }, file: '../x.json' }, b: { run: 1 } }) });
  check(r.status === 400 && /^x\.json: not a podnet result document/.test((await r.json()).error), `compare a non-result document -> 400 naming it (got ${r.status})`);
  r = await fetch(s.url + '/api/compare', { method: 'POST', body: JSON.stringify({ a: { run: 999999 }, b: { run: 1 } }) });
  check(r.status === 400 && /no run 999999/.test((await r.json()).error), `compare an unknown run -> 400 (got ${r.status})`);
  r = await fetch(s.url + '/api/compare', { method: 'POST', body: '[1, 2]' });
  check(r.status === 400, `compare a body that is not an object -> 400 (got ${r.status})`);
  // Round 3 of the bad-input campaign: none of these may crash or hold the server.
  r = await fetch(s.url + '/api/runs', { method: 'POST', body: '{"study": "design", "study": "bench", "scenario": "aipod-16k"}' });
  check(r.status === 400 && /'study' is given twice/.test((await r.json()).error), `a key given twice -> 400 naming it (got ${r.status})`);
  r = await fetch(s.url + '/api/compare', { method: 'POST', body: '{"a": {"document": ' + '['.repeat(200000) + ']'.repeat(200000) + '}, "b": {"run": 1}}' });
  check(r.status === 400 || r.status === 413, `compare a 200,000-level document -> 400/413, no crash (got ${r.status})`);
  r = await fetch(s.url + '/api/compare', { method: 'POST', body: '{"a": {"document": ' + '['.repeat(1000) + ']'.repeat(1000) + '}, "b": {"run": 1}}' });
  check(r.status === 400 && /nested over 64 levels/.test((await r.json()).error), `compare a 1,000-level document -> 400 (got ${r.status})`);
  for (const [name, yaml] of [['self alias', 'x: &a [*a]\n'], ['billion laughs', 'a0: &a0 [x,x,x,x,x,x,x,x,x,x]\n' +
      [1, 2, 3, 4, 5, 6, 7, 8, 9].map(i => `a${i}: &a${i} [${Array(10).fill('*a' + (i - 1)).join(',')}]\n`).join('')]]) {
    const t0 = Date.now();
    r = await fetch(s.url + '/api/runs', { method: 'POST', body: JSON.stringify({ study: 'design', yaml, file: 'bomb.yaml' }) });
    check(r.status === 400 && Date.now() - t0 < 2000, `upload a YAML ${name} -> 400 in ${Date.now() - t0} ms (got ${r.status})`);
  }
  for (const [method, route] of [['DELETE', '/api/runs'], ['PUT', '/api/compare'], ['GET', '/api/compare'], ['POST', '/design']]) {
    r = await fetch(s.url + route, { method });
    check(r.status === 405 && r.headers.get('allow'), `${method} ${route} -> 405 with Allow: ${r.headers.get('allow')} (got ${r.status})`);
  }
  r = await fetch(s.url + '/api/runs/999999/trace');
  check(r.status === 404, `trace of an unknown run -> 404 (got ${r.status})`);
  r = await fetch(s.url + '/api/runs/999999');
  check(r.status === 404, `unknown run -> 404 (got ${r.status})`);
  r = await fetch(s.url + '/api/runs/99999999999999');
  check(r.status === 404, `over-long run id -> 404 (got ${r.status})`);
  // Concurrency bound: --max-runs 2 (default); a third concurrent study is 429.
  const long = { study: 'bench', scenario: 'aipod-16k', min: '8B', max: '1GiB' };
  const a = await fetch(s.url + '/api/runs', { method: 'POST', body: JSON.stringify(long) });
  const b = await fetch(s.url + '/api/runs', { method: 'POST', body: JSON.stringify(long) });
  const c = await fetch(s.url + '/api/runs', { method: 'POST', body: JSON.stringify(long) });
  check(a.status === 202 && b.status === 202 && c.status === 429, `third concurrent study -> 429 (got ${a.status}, ${b.status}, ${c.status})`);
  for (const x of [a, b]) {
    const { id } = await x.json();
    const k = await fetch(`${s.url}/api/runs/${id}/cancel`, { method: 'POST' });
    check(k.status === 202, `cancel run ${id} -> 202`);
    let st;
    for (let i = 0; i < 100; ++i) {
      st = await (await fetch(`${s.url}/api/runs/${id}`)).json();
      if (st.state !== 'running' && st.state !== 'queued') break;
      await new Promise(res => setTimeout(res, 100));
    }
    check(st.state === 'cancelled', `run ${id} cancelled (state ${st.state})`);
    const res = await fetch(`${s.url}/api/runs/${id}/result`);
    check(res.status === 409, `result of a cancelled run -> 409 (got ${res.status})`);
  }
  r = await fetch(s.url + '/api/scenarios');
  check(r.status === 200, 'the server still answers after every bad request');
  // Determinism: the same --html twice is byte-identical (the run context carries no wall time).
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'podnet-html-'));
  const pages = [1, 2].map(i => {
    const f = path.join(dir, `d${i}.html`);
    execFileSync(podnet, ['design', 'aipod-16k', '--html', f], { stdio: 'ignore' });
    return fs.readFileSync(f);
  });
  check(pages[0].length > 0 && pages[0].equals(pages[1]), `design --html twice: byte-identical (${pages[0].length} bytes)`);
  fs.rmSync(dir, { recursive: true, force: true });
} finally {
  stopServer(s);
}
process.exit(summary());
