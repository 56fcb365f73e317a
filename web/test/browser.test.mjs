// podnet's dashboard in a real browser: Debian's Chromium, headless, driven
// by playwright-core (which uses /usr/bin/chromium and never downloads a
// browser). Loads every page of a `podnet serve` on loopback, runs studies
// from the pages and checks what a person would see; then the same checks
// on --html reports opened from disk. Screenshots go to OUT_DIR.
// node browser.test.mjs PODNET OUT_DIR
import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer, stopServer, check, summary } from './serve_util.mjs';

const [podnet, outDir] = process.argv.slice(2);
fs.mkdirSync(outDir, { recursive: true });
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'podnet-chromium-'));
const run = args => execFileSync(podnet, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });

// The numbers the pages must show, from the CLI's own JSON.
const designJson = JSON.parse(run(['design', 'aipod-16k', '--format', 'json']));
// Sizes 1 MiB .. 16 MiB doubling: 1, 2, 4, 8, 16 MiB = 5 points.
const kSizes = 5;
const designHtml = path.join(outDir, 'design.html'), benchHtml = path.join(outDir, 'bench.html');
run(['design', 'aipod-16k', '--html', designHtml]);
const benchJson = JSON.parse(run(['bench', 'aipod-16k', '--min', '1MiB', '--max', '16MiB', '--format', 'json', '--html', benchHtml]));
check(benchJson.rows.length === kSizes, `CLI bench has ${kSizes} rows`);
const trainHtml = path.join(outDir, 'train.html'), relHtml = path.join(outDir, 'reliability.html');
const trainJson = JSON.parse(run(['train', 'aipod-16k', '--format', 'json', '--html', trainHtml]));
const relJson = JSON.parse(run(['reliability', 'aipod-16k', '--format', 'json', '--html', relHtml]));
const badYaml = path.join(outDir, 'bad.yaml');
// Line 5 holds the bad value.
fs.writeFileSync(badYaml, 'schema_version: 1\nname: bad\ntopology:\n  family: rail_clos\n  gpus: lots\n');

const browser = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium', headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
const page = await browser.newPage();
const errors = [];
page.on('pageerror', e => errors.push(e.message));

// Leaves of bom as {key: value}, as the page's data-key cells are named.
function leaves(obj, prefix, out = {}) {
  for (const [k, v] of Object.entries(obj)) {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) leaves(v, prefix + k + '.', out);
    else out[prefix + k] = v;
  }
  return out;
}
const seriesLength = sel => page.evaluate(s => {
  const div = document.querySelector(s);
  const c = div && window.echarts.getInstanceByDom(div);
  return c ? c.getOption().series[0].data.length : -1;
}, sel);
async function checkBom(where) {
  const shown = await page.$$eval('table.bom td[data-key]', tds => Object.fromEntries(tds.map(t => [t.dataset.key, JSON.parse(t.dataset.value)])));
  const want = leaves(designJson.bom, 'bom.');
  const bad = Object.keys(want).filter(k => shown[k] !== want[k]);
  check(Object.keys(want).length > 10 && bad.length === 0, `${where}: all ${Object.keys(want).length} BOM numbers equal podnet design --format json${bad.length ? ' (differ: ' + bad.join(', ') + ')' : ''}`);
}
async function waitState(states) {
  await page.waitForFunction(s => s.includes(document.querySelector('#status').dataset.state), states, { timeout: 120000 });
  return page.$eval('#status', e => e.dataset.state);
}

const s = await startServer(podnet);
try {
  for (const p of ['design', 'bench', 'train', 'reliability']) {
    const t0 = Date.now();
    await page.goto(`${s.url}/${p}`);
    await page.waitForSelector('#app[data-ready="1"]', { timeout: 10000 });
    const n = await page.$$eval('#scenario option', o => o.length);
    check(n >= 5, `/${p} loads with the ${n} built-in scenarios (${Date.now() - t0} ms)`);
    await page.screenshot({ path: path.join(outDir, `serve-${p}.png`) });
  }

  // design: run aipod-16k from the page.
  await page.goto(`${s.url}/design`);
  await page.waitForSelector('#app[data-ready="1"]');
  await page.selectOption('#scenario', 'aipod-16k');
  let t0 = Date.now();
  await page.click('#run');
  check(await waitState(['done', 'failed', 'rejected']) === 'done', 'design study runs from the page');
  await page.waitForSelector('#result .chart.fabric');
  const marks = await seriesLength('#result .chart.fabric');
  const drawn = (await (await fetch(`${s.url}/api/runs/1/result`)).json()).drawing.nodes.length;
  check(marks > 0 && marks === drawn, `design: fabric drawn with ${marks} marks (= the drawing's ${drawn} aggregates)`);
  console.log(`design aipod-16k (16,384 GPUs): run + render ${Date.now() - t0} ms`);
  await checkBom('serve design');
  await page.screenshot({ path: path.join(outDir, 'serve-design-result.png'), fullPage: true });

  // The largest design the issue names: 131,072 GPUs draws aggregated (at most 200 marks, report/html.hpp).
  await page.fill('#sets', 'topology.gpus=131072');
  t0 = Date.now();
  await page.click('#run');
  check(await waitState(['done', 'failed', 'rejected']) === 'done', 'design of 131,072 GPUs runs from the page');
  await page.waitForFunction(() => document.querySelector('#result').dataset.run === '2');
  const big = await seriesLength('#result .chart.fabric');
  check(big > 0 && big <= 200, `design 131,072 GPUs: drawn aggregated, ${big} marks (<= 200)`);
  const bigGpus = await page.$eval('table.bom td[data-key="bom.gpus"]', t => JSON.parse(t.dataset.value));
  check(bigGpus === 131072, `design 131,072 GPUs: the BOM shows ${bigGpus} GPUs`);
  console.log(`design 131,072 GPUs: run + render ${Date.now() - t0} ms`);
  await page.screenshot({ path: path.join(outDir, 'serve-design-131k.png'), fullPage: true });

  // bench: 1 MiB .. 16 MiB from the page.
  await page.goto(`${s.url}/bench`);
  await page.waitForSelector('#app[data-ready="1"]');
  await page.selectOption('#scenario', 'aipod-16k');
  await page.fill('#min', '1MiB');
  await page.fill('#max', '16MiB');
  await page.fill('#factor', '2');
  await page.click('#run');
  check(await waitState(['done', 'failed', 'rejected']) === 'done', 'bench study runs from the page');
  await page.waitForSelector('#result .chart.busbw');
  check(await seriesLength('#result .chart.busbw') === kSizes, `bench: busbw chart has ${kSizes} points (one per size)`);
  const busbw = await page.$$eval('#result table.bench-rows td[data-col="busbw_gbyte_per_s"]', t => t.map(x => JSON.parse(x.dataset.value)));
  check(JSON.stringify(busbw) === JSON.stringify(benchJson.rows.map(r => r.busbw_gbyte_per_s)), 'bench: busbw column equals podnet bench --format json');
  check(await page.$$eval('#runs li', l => l.length) === 1, 'bench: the finished run is listed');
  await page.screenshot({ path: path.join(outDir, 'serve-bench-result.png'), fullPage: true });

  // A bad uploaded YAML: its file:line error on the page.
  await page.setInputFiles('#upload', badYaml);
  await page.click('#run');
  check(await waitState(['done', 'failed', 'rejected']) === 'rejected', 'bad YAML upload is rejected');
  const err = await page.$eval('#error', e => e.textContent);
  check(/bad\.yaml:5: topology\.gpus/.test(err), `bad YAML: the page shows its file:line error ("${err}")`);
  await page.screenshot({ path: path.join(outDir, 'serve-bad-yaml.png') });

  // reliability from the page: its figures drawn as tables.
  await page.goto(`${s.url}/reliability`);
  await page.waitForSelector('#app[data-ready="1"]');
  await page.selectOption('#scenario', 'aipod-16k');
  await page.click('#run');
  check(await waitState(['done', 'failed', 'rejected']) === 'done', 'reliability study runs from the page');
  const comps = Object.keys(relJson.by_component).length;
  check(await seriesLength('#result .chart.interruptions') === comps, `reliability: interruptions chart has the ${comps} components`);
  // 49 intervals, τ*/8 .. 8τ* (report::goodput_curve).
  check(await seriesLength('#result .chart.goodput') === 49, 'reliability: goodput curve of 49 intervals drawn');
  await page.screenshot({ path: path.join(outDir, 'serve-reliability-result.png'), fullPage: true });
} finally {
  stopServer(s);
}

// The same checks on the --html reports, opened from disk (no server).
let t0 = Date.now();
await page.goto('file://' + designHtml);
await page.waitForSelector('.chart.fabric');
const marks = await seriesLength('.chart.fabric');
check(marks > 0, `design.html: fabric drawn (${marks} marks, ${Date.now() - t0} ms)`);
await checkBom('design.html');
await page.screenshot({ path: path.join(outDir, 'html-design.png'), fullPage: true });
await page.goto('file://' + benchHtml);
await page.waitForSelector('.chart.busbw');
check(await seriesLength('.chart.busbw') === kSizes, `bench.html: busbw chart has ${kSizes} points`);
await page.screenshot({ path: path.join(outDir, 'html-bench.png'), fullPage: true });

await page.goto('file://' + trainHtml);
await page.waitForSelector('.chart.breakdown');
const parts = Object.values(trainJson.breakdown_ms).filter(v => v > 0).length;
const bars = await page.evaluate(() => window.echarts.getInstanceByDom(document.querySelector('.chart.breakdown')).getOption().series.length);
check(bars === parts, `train.html: iteration breakdown has the ${parts} non-zero parts of breakdown_ms`);
const iter = await page.$eval('td[data-key="iteration_time_ms"]', t => JSON.parse(t.dataset.value));
check(iter === trainJson.iteration_time_ms, 'train.html: iteration time equals podnet train --format json');
await page.screenshot({ path: path.join(outDir, 'html-train.png'), fullPage: true });
await page.goto('file://' + relHtml);
await page.waitForSelector('.chart.goodput');
check(await seriesLength('.chart.goodput') === 49, 'reliability.html: goodput curve drawn');
await page.screenshot({ path: path.join(outDir, 'html-reliability.png'), fullPage: true });

check(errors.length === 0, 'no JavaScript error on any page' + (errors.length ? ': ' + errors.join('; ') : ''));
await browser.close();
fs.rmSync(profile, { recursive: true, force: true });
process.exit(summary());
