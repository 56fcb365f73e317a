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
import { pageLayout, RAW_KEY } from './layout.mjs';

const [podnet, outDir] = process.argv.slice(2);
fs.mkdirSync(outDir, { recursive: true });
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'podnet-chromium-'));
const run = args => execFileSync(podnet, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });

// The numbers the pages must show, from the CLI's own JSON.
const designJson = JSON.parse(run(['design', 'aipod-16k', '--format', 'json']));
const designCli = run(['design', 'aipod-16k']);
// Sizes 1 MiB .. 16 MiB doubling: 1, 2, 4, 8, 16 MiB = 5 points.
const kSizes = 5;
const designHtml = path.join(outDir, 'design.html'), benchHtml = path.join(outDir, 'bench.html');
run(['design', 'aipod-16k', '--html', designHtml]);
const benchJson = JSON.parse(run(['bench', 'aipod-16k', '--min', '1MiB', '--max', '16MiB', '--format', 'json', '--html', benchHtml]));
check(benchJson.rows.length === kSizes, `CLI bench has ${kSizes} rows`);
const trainHtml = path.join(outDir, 'train.html'), relHtml = path.join(outDir, 'reliability.html');
const trainJson = JSON.parse(run(['train', 'aipod-16k', '--format', 'json', '--html', trainHtml]));
const relJson = JSON.parse(run(['reliability', 'aipod-16k', '--format', 'json', '--html', relHtml]));
// A second bench series (ring only, analytical engine) to overlay and compare; both documents saved for the compare page.
const benchA = path.join(outDir, 'bench-auto.json'), benchB = path.join(outDir, 'bench-ring.json');
fs.writeFileSync(benchA, JSON.stringify(benchJson));
// One GPU per server of the first 128 servers (the page's GPUs field): 128 of the 16,384 NIC links carry bytes.
const ringGpus = '0-1023:8';
const ringJson = JSON.parse(run(['bench', 'aipod-16k', '--min', '1MiB', '--max', '16MiB', '--algo', 'ring', '--engine', 'analytical', '--gpus', ringGpus, '--format', 'json']));
check(ringJson.bench.gpus === 128, `CLI bench --gpus ${ringGpus} runs 128 GPUs`);
fs.writeFileSync(benchB, JSON.stringify(ringJson));
const diffJson = JSON.parse(run(['diff', benchA, benchB, '--format', 'json']));
// train with the scaling sweep and the trace, small enough for CI: DP 8 (sweep DP 1, 2, 4, 8 at 4 NIC caps: as built,
// 20, 10 and 5 GB/s; the default 50 GB/s is these 400G NICs' own speed, left out), plain
// 1F1B (the default's interleave 8 does not fit in 80 GB at DP 8: the optimizer shard grows as DP shrinks).
const trainSets = ['workload.dp=8', 'workload.interleave=1', 'network.engine=analytical'];
const sweepTrace = path.join(outDir, 'sweep-trace.json'), sweepHtml = path.join(outDir, 'train-sweep.html');
const sweepJson = JSON.parse(run(['train', 'aipod-16k', ...trainSets.flatMap(x => ['--set', x]), '--sweep', '--format', 'json',
  '--trace', sweepTrace, '--html', sweepHtml]));
check(sweepJson.sweep.length === 16, `CLI train sweep has 16 points (DP 1, 2, 4, 8 x 4 caps), got ${sweepJson.sweep.length}`);
// diagnose: the golden scenario with three hidden faults (a dropping uplink, a corrupting spine, a slow optic).
const faultsYaml = path.join(path.dirname(new URL(import.meta.url).pathname), '../../tests/golden/diagnose-faults/scenario.yaml');
const diagHtml = path.join(outDir, 'diagnose.html');
const diagJson = JSON.parse(run(['diagnose', faultsYaml, '--duration', '60s', '--format', 'json', '--html', diagHtml]));
const diagSuspects = diagJson.suspects.map(x => x.component).concat(diagJson.latency.suspects.map(x => x.component));
check(diagSuspects.length >= 3, `CLI diagnose finds ${diagSuspects.length} suspects`);
// A sweep (two design points) read back as a page.
const sweepDb = path.join(outDir, 'sweep.db'), sweepPage = path.join(outDir, 'sweep.html');
fs.rmSync(sweepDb, { force: true });
execFileSync(podnet, ['sweep', 'aipod-16k', '--study', 'design', '--vary', 'topology.gpus=2048,4096,8192', '--results', sweepDb], { stdio: 'ignore' });
const sweepResults = JSON.parse(run(['sweep', '--results', sweepDb, '--format', 'json', '--html', sweepPage]));
// Transports side by side (bench --compare-cc): a 16-to-1 incast of 1 MiB flows, lossy, under DCTCP and RCCC.
const cmpArgs = ['leafspine-8k', '--op', 'incast', '--gpus', '0-128:8', '--min', '1MiB', '--max', '1MiB', '--set', 'network.pfc=false'];
const cmpHtml = path.join(outDir, 'bench-compare.html');
const cmpJson = JSON.parse(run(['bench', ...cmpArgs, '--compare-cc', 'dctcp,rccc', '--format', 'json', '--html', cmpHtml]));
check(cmpJson.rows.length === 2 && cmpJson.rows.every(r => r.fct_cdf_us.length === 101), 'CLI bench --compare-cc: two transports, a 101-point FCT distribution each');
const badYaml = path.join(outDir, 'bad.yaml');
// inference with a latency target, the same fields as the page fills.
const infArgs = { model: 'llama3-70b', replicas: '2', rate: '4', requests: '200', target_ttft: '1s', target_tpot: '30ms' };
const infHtml = path.join(outDir, 'inference.html');
const infJson = JSON.parse(run(['inference', 'leafspine-8k', '--set', 'workload.model=llama3-70b', '--replicas', '2', '--rate', '4',
  '--requests', '200', '--target-ttft', '1s', '--target-tpot', '30ms', '--format', 'json', '--html', infHtml]));
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
  // Unit prices as design prints them: fibre at $2/m (it read $2.00/m on the page).
  const cliFibre = (designCli.match(/fibre \d+G\s+[\d,]+ m\s+(\S+)/) || [])[1];
  const pageText = await page.$eval('table.cost-items', t => t.textContent).catch(() => '');
  check(cliFibre && pageText.includes(cliFibre), `${where}: fibre's unit price reads ${cliFibre}, as podnet design prints it`);
}
// The fabric drawing's suspects as the page drew them: red marks and red edges.
const redOnFabric = sel => page.evaluate(s => {
  const o = window.echarts.getInstanceByDom(document.querySelector(s)).getOption().series[0];
  return { marks: o.data.filter(d => d.suspects).map(d => Number(d.id)).sort((a, b) => a - b),
    edges: o.links.filter(l => l.suspects).map(l => l.source + '-' + l.target).sort() };
}, sel);
function expectedRed(suspects) {
  const marks = [...new Set(suspects.flatMap(x => x.marks))].sort((a, b) => a - b);
  const edges = [...new Set(suspects.filter(x => x.edge).map(x => x.edge[0] + '-' + x.edge[1]))].sort();
  return { marks, edges };
}
async function checkDiagnose(where, suspects) {
  const shown = await page.$$eval('table.suspects td[data-col="component"]', t => t.map(x => JSON.parse(x.dataset.value)));
  check(JSON.stringify(shown) === JSON.stringify(diagSuspects), `${where}: the ${shown.length} suspects equal podnet diagnose --format json`);
  const red = await redOnFabric('.chart.fabric'), want = expectedRed(suspects);
  check(red.marks.length > 0 && JSON.stringify(red) === JSON.stringify(want),
    `${where}: suspects drawn on the fabric (${red.marks.length} red marks, ${red.edges.length} red edges)`);
}
const benchSeries = sel => page.evaluate(s => window.echarts.getInstanceByDom(document.querySelector(s)).getOption().series.map(x => ({ name: x.name, data: x.data })), sel);
// Each cell: the mean over the links that carried bytes, how many did, of how many; the colour scale fixed at 0-1.
async function checkHeatmap(where, doc) {
  const opt = await page.evaluate(() => {
    const o = window.echarts.getInstanceByDom(document.querySelector('.chart.heatmap')).getOption();
    return { data: o.series[0].data, min: o.visualMap[0].min, max: o.visualMap[0].max };
  });
  const util = doc.link_class_utilization;
  const want = util.flatMap((u, y) => u.used_mean_utilization.map((v, x) => [x, y, v, u.used_links[x], u.links]));
  const got = opt.data.map(d => (Array.isArray(d) ? d : d.value).slice(0, 5));
  check(want.length === util.length * kSizes && JSON.stringify(got) === JSON.stringify(want) && opt.min === 0 && opt.max === 1,
    `${where}: utilization heatmap has ${util.length} tiers x ${kSizes} sizes equal to link_class_utilization's used_mean_utilization and used_links, colour scale 0-100 %`);
  return util;
}
// What a person sees: no chart text overlapping another or cut off at the chart's edge, no section wider than the
// page, and no raw JSON key (dotted snake_case paths, _gbyte, _usd, sweep columns) in the page's or the charts' text.
async function checkLayout(where) {
  const l = await page.evaluate(pageLayout);
  const raw = (l.visibleText + '\n' + l.chartText.join('\n')).split('\n').filter(x => RAW_KEY.test(x));
  check(l.overlaps.length === 0, `${where}: no overlapping text in ${l.charts} chart(s) (${l.texts} texts)` + (l.overlaps.length ? ': ' + l.overlaps.slice(0, 3).join('; ') : ''));
  check(l.clipped.length === 0, `${where}: no clipped text or label` + (l.clipped.length ? ': ' + l.clipped.slice(0, 3).join('; ') : ''));
  check(raw.length === 0, `${where}: no raw JSON key shown` + (raw.length ? ': ' + raw.slice(0, 3).join(' | ') : ''));
}
// Efficiency (%) against GPUs; caps with the very same efficiencies share one line named after each of them.
async function checkSweep(where) {
  const series = await page.evaluate(() => window.echarts.getInstanceByDom(document.querySelector('.chart.sweep')).getOption().series);
  const capName = c => c > 0 ? c.toLocaleString('en-US') + ' GB/s per GPU' : 'as built';
  let bad = 0, caps = 0;
  for (const cap of [...new Set(sweepJson.sweep.map(r => r.cap_gbytes_per_second))]) {
    ++caps;
    const line = series.find(x => x.name.split(' = ').includes(capName(cap)));
    const want = sweepJson.sweep.filter(r => r.cap_gbytes_per_second === cap).map(r => [r.gpus, 100 * r.efficiency]);
    if (!line || JSON.stringify(line.data.map(d => [d[0], d[1]])) !== JSON.stringify(want)) ++bad;
  }
  // Lines left are all different: no line hides another.
  const keys = series.map(x => JSON.stringify(x.data.map(d => d[1])));
  check(caps === 4 && bad === 0 && new Set(keys).size === keys.length,
    `${where}: scaling chart: efficiency of each of the 4 NIC caps equal to podnet train --sweep --format json, in ${series.length} distinct line(s) (${series.map(x => x.name).join(' | ')})`);
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
  // Drawing alone (fetch the finished result, render the page); printed, not asserted
  // (docs/contributing/validation/dashboard.md).
  const drawMs = id => page.evaluate(async id => {
    const t = performance.now();
    const p = await (await fetch('/api/runs/' + id + '/result')).json();
    window.podnet.render(document.querySelector('#result'), p);
    return Math.round(performance.now() - t);
  }, id);
  console.log(`design aipod-16k (16,384 GPUs): fetch + render the result ${await drawMs(1)} ms`);
  await checkBom('serve design');
  // The whole fabric's oversubscription beside the leaf's, as podnet design prints it.
  const wholeFabric = /oversubscription, whole fabric\s+(\S+)/.exec(run(['design', 'aipod-16k']))[1];
  const wholeRow = await page.$$eval('#result table tr', rows => rows.map(r => r.textContent).find(t => t.includes('oversubscription, whole fabric')) || '');
  check(wholeRow.includes(wholeFabric), `design: the whole fabric's oversubscription shown as the CLI's ${wholeFabric} ("${wholeRow}")`);
  await checkLayout('serve design');
  const costPanel = await page.$eval('#result section#cost h2', e => e.textContent).catch(() => '');
  check(/^Cost/.test(costPanel), `design: cost has its own panel ("${costPanel}")`);
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
  console.log(`design 131,072 GPUs: run + render ${Date.now() - t0} ms; fetch + render the result ${await drawMs(2)} ms`);
  await checkLayout('serve design 131,072 GPUs');
  await page.screenshot({ path: path.join(outDir, 'serve-design-131k.png'), fullPage: true });

  // bench: 1 MiB .. 16 MiB from the page.
  await page.goto(`${s.url}/bench`);
  await page.waitForSelector('#app[data-ready="1"]');
  // The form's defaults are the CLI's (podnet bench --help: 8B to 1GiB, factor 2).
  const benchDefaults = await page.$$eval('#min, #max, #factor', l => l.map(x => x.value));
  check(JSON.stringify(benchDefaults) === JSON.stringify(['8B', '1GiB', '2']), `bench: the form's sizes default as the CLI's (${benchDefaults})`);
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
  const hot = await page.$$eval('#result table.hottest tr', r => r.length - 1);
  check(hot === benchJson.hottest_links.length && hot > 0, `bench: the ${hot} hottest links listed`);
  await checkHeatmap('bench', benchJson);
  // The setup's two algorithm rows read apart (both read "algorithm(s) auto").
  const setupText = await page.$eval('#result', e => e.textContent);
  check(setupText.includes('algorithm asked for (--algo)') && setupText.includes("algorithms NCCL's tuner may pick"),
    'bench: the setup tells the algorithm asked for from the tuner\'s allowed set');
  await checkLayout('serve bench');
  await page.screenshot({ path: path.join(outDir, 'serve-bench-result.png'), fullPage: true });

  // A second series: ring only; then overlay the first run on it.
  await page.fill('#algo', 'ring');
  await page.fill('#engine', 'analytical');
  await page.fill('#gpus', ringGpus);
  await page.click('#run');
  check(await waitState(['done', 'failed', 'rejected']) === 'done', `bench (ring, analytical engine, GPUs ${ringGpus}) runs from the page`);
  await page.waitForFunction(() => document.querySelector('#result').dataset.run === '4');
  const ringUtil = await checkHeatmap('bench --gpus', ringJson);
  const nicLeaf = ringUtil.find(u => u.link_class === 'nic-leaf');
  check(nicLeaf && nicLeaf.used_links.every(n => n === 256) && nicLeaf.links === 32768,
    `bench --gpus ${ringGpus}: the heatmap's nic-leaf row counts 256 of 32,768 directed links used (128 NICs, both directions)`);
  const cellText = await page.$$eval('#result table.bench-rows td[data-col="bytes"]', t => t.map(x => x.textContent));
  check(JSON.stringify(cellText) === JSON.stringify(['1 MiB', '2 MiB', '4 MiB', '8 MiB', '16 MiB']), `bench: sizes shown as ${cellText.join(', ')}`);
  await checkLayout('serve bench --gpus');
  await page.screenshot({ path: path.join(outDir, 'serve-bench-gpus.png'), fullPage: true });
  await page.check('#runs input.overlay[data-run="3"]');
  await page.waitForFunction(() => document.querySelector('#result').dataset.overlays === '1');
  const series = await benchSeries('#result .chart.busbw');
  const overlay = series.find(x => x.name.startsWith('busbw #3'));
  check(series.length === 3 && overlay && JSON.stringify(overlay.data.map(d => d[1])) === JSON.stringify(benchJson.rows.map(r => r.busbw_gbyte_per_s)) &&
    JSON.stringify(series[0].data.map(d => d[1])) === JSON.stringify(ringJson.rows.map(r => r.busbw_gbyte_per_s)),
    `bench: ring busbw (analytical) and run #3 (auto, flow) overlaid on one chart (${series.map(x => x.name).join(' | ')}), each equal to podnet bench --format json`);
  await checkLayout('serve bench overlay');
  await page.screenshot({ path: path.join(outDir, 'serve-bench-overlay.png'), fullPage: true });

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
  // Components ranked by expected interruptions; the top 6 shown, the others behind the toggle.
  const ranked = () => page.$$eval('#result table.components tr[data-component]', r => r.filter(x => x.offsetParent !== null).map(x => x.dataset.component));
  const relWant = Object.entries(relJson.by_component).sort((a, b) => b[1].expected_interruptions - a[1].expected_interruptions ||
    b[1].expected_failures - a[1].expected_failures || a[1].order - b[1].order).map(([k]) => k);
  const relTop = await ranked();
  await page.click('#show-all-components');
  const relAll = await ranked();
  check(JSON.stringify(relTop) === JSON.stringify(relWant.slice(0, 6)) && JSON.stringify(relAll) === JSON.stringify(relWant),
    `reliability: the top ${relTop.length} components by expected interruptions shown, all ${relAll.length} after "show all"`);
  await checkLayout('serve reliability');
  // No number in scientific notation (the interruption rate read 2.21e-2 per hour).
  const relText = await page.$eval('#result', e => e.textContent);
  // The advised goodput with the table's two decimals (81.36%, not 81.4%).
  check(/advised: every [\d.,]+ min, goodput \d+\.\d\d%/.test(relText), 'reliability: the curve\'s advised goodput has the table\'s two decimals');
  check(!/\d\.\d+e[-+]\d/.test(relText), 'reliability: no figure in scientific notation');
  // The figures as podnet reliability prints them: the total stall (it read 1.561 s beside the CLI's 1.6 s), a
  // switch's stall and the shares (0.72% beside 0.7%).
  const relCli = run(['reliability', 'aipod-16k']);
  const stall = (relCli.match(/stalling the job in total\s+(\S+ \S+)/) || [])[1];
  const switchStall = (relCli.match(/spine switches .*?no: (\S+ s) stall/) || [])[1];
  const leafShare = (relCli.match(/leaf switches\s+\S+\s+\S+\s+yes\s+(\S+%)/) || [])[1];
  check(stall && relText.includes(stall) && switchStall && relText.includes(switchStall + ' stall') && leafShare &&
    relText.includes(leafShare), `reliability: the stall (${stall}), a switch's stall (${switchStall}) and a share (${leafShare}) read as the CLI's`);
  await page.screenshot({ path: path.join(outDir, 'serve-reliability-result.png'), fullPage: true });

  // train with the sweep and the trace (run 6).
  await page.goto(`${s.url}/train`);
  await page.waitForSelector('#app[data-ready="1"]');
  // Every option of podnet train is on the form, at its default (--failures is on unless turned off).
  const trainBoxes = await page.$$eval('#allow_oom, #failures', l => l.map(x => x.id + '=' + x.checked));
  check(JSON.stringify(trainBoxes) === JSON.stringify(['allow_oom=false', 'failures=true']), `train: the form has the CLI's options at their defaults (${trainBoxes})`);
  await page.selectOption('#scenario', 'aipod-16k');
  await page.fill('#sets', trainSets.join(', '));
  await page.check('#sweep');
  await page.check('#trace');
  await page.click('#run');
  check(await waitState(['done', 'failed', 'rejected']) === 'done', 'train with sweep and trace runs from the page');
  await page.waitForSelector('#result .chart.sweep');
  await checkSweep('train page');
  await checkLayout('serve train sweep');
  // FLOPs per iteration with an SI prefix, not 6.06e+18.
  const trainText = await page.$eval('#result', e => e.textContent);
  check(/FLOPs per iteration: model[^\n]*?[0-9.]+ [PEZ]FLOP/.test(trainText) && !/\d\.\d+e[-+]\d/.test(trainText),
    'train: FLOPs per iteration with an SI prefix, no figure in scientific notation');
  const href = await page.$eval('#trace-link', a => a.getAttribute('href'));
  const tr = await fetch(s.url + href);
  const trace = Buffer.from(await tr.arrayBuffer());
  check(tr.status === 200 && /attachment/.test(tr.headers.get('content-disposition')) && trace.equals(fs.readFileSync(sweepTrace)),
    `train: the trace link downloads the Perfetto trace, byte-identical to podnet train --trace (${trace.length} bytes)`);
  await page.screenshot({ path: path.join(outDir, 'serve-train-sweep.png'), fullPage: true });

  // diagnose: the golden scenario uploaded, 60 s of probing.
  await page.goto(`${s.url}/diagnose`);
  await page.waitForSelector('#app[data-ready="1"]');
  const diagFields = await page.$$eval('#probe, #duration, #round, #rate, #evaluate, #fault_kind', l => l.map(x => x.value));
  check(JSON.stringify(diagFields) === JSON.stringify(['rail', '300s', '10s', '1000', '0', 'link']), `diagnose: the form has the CLI's options at their defaults (${diagFields})`);
  await page.setInputFiles('#upload', faultsYaml);
  await page.fill('#duration', '60s');
  await page.click('#run');
  check(await waitState(['done', 'failed', 'rejected']) === 'done', 'diagnose runs from the page');
  await page.waitForSelector('#result table.suspects');
  const diagRun = await page.$eval('#result', e => e.dataset.run);
  const diagPayload = await (await fetch(`${s.url}/api/runs/${diagRun}/result`)).json();
  await checkDiagnose('diagnose page', diagPayload.suspects);
  await checkLayout('serve diagnose');
  await page.screenshot({ path: path.join(outDir, 'serve-diagnose.png'), fullPage: true });

  // compare: the two CLI bench documents uploaded, then the two server runs (3: auto, 4: ring).
  await page.goto(`${s.url}/compare`);
  await page.waitForSelector('#app[data-ready="1"]');
  // Preselected: the newest run and the newest before it of the same study, or nothing (two studies do not compare).
  const pre = await page.$$eval('#cmp-a, #cmp-b', l => l.map(x => x.selectedOptions[0].textContent));
  check((pre[0] === '(none)' && pre[1] === '(none)') || (pre[0] !== '(none)' && pre[0].split(' ')[1] === pre[1].split(' ')[1]),
    `compare: the runs preselected are of one study (${pre.join(' | ')})`);
  await page.setInputFiles('#cmp-file-a', benchA);
  await page.setInputFiles('#cmp-file-b', benchB);
  await page.click('#compare');
  await page.waitForSelector('#result[data-compared]');
  const changedRows = () => page.$$eval('#result table.changed tr', rows => rows.slice(1).map(r =>
    Object.fromEntries([...r.querySelectorAll('td[data-col]')].map(td => [td.dataset.col, JSON.parse(td.dataset.value)]))));
  const want = diffJson.studies.bench.changed;
  const fromFiles = await changedRows();
  const byField = xs => [...xs].sort((x, y) => (x.field < y.field ? -1 : x.field > y.field ? 1 : 0));
  check(want.length > 0 && JSON.stringify(byField(fromFiles)) === JSON.stringify(byField(want.map(c => ({ field: c.field, a: c.a, b: c.b, delta: c.delta ?? null, ratio: c.ratio ?? null })))),
    `compare (uploaded documents): the ${fromFiles.length} changed fields equal podnet diff --format json`);
  // In podnet diff's order: the largest relative change first.
  const rels = fromFiles.filter(c => typeof c.ratio === 'number').map(c => Math.abs(Math.log(c.ratio)));
  check(rels.every((r, i) => i === 0 || r <= rels[i - 1] + 1e-12), `compare: the changed fields ordered by relative change, largest first`);
  const bars = await seriesLength('#result .chart.ratios');
  check(bars === Math.min(25, want.filter(c => c.ratio > 0).length), `compare: ${bars} bars of B / A`);
  const labels = await page.$$eval('#result table.changed td[data-col="field"]', t => t.map(x => x.textContent));
  // The labels podnet diff prints for the same figures (its JSON carries them).
  check(labels.includes('bus bandwidth at 2 MiB') && labels.includes('algorithm bandwidth at 16 MiB') && want.every(c => labels.includes(c.label)),
    `compare: fields labelled by metric and size as podnet diff labels them (${labels.slice(0, 4).join(', ')}, ...)`);
  // B - A reads as podnet diff prints it (the difference of the values as shown): each row's number in the CLI's row.
  const diffText = run(['diff', benchA, benchB, '--all']);
  const deltas = await page.$$eval('#result table.changed tr', rows => rows.slice(1).map(r =>
    [r.querySelector('td[data-col="field"]').textContent, r.querySelector('td[data-col="delta"]').textContent]));
  const cliRow = label => (diffText.split('\n').find(l => l.trim().startsWith(label + '  ')) || '');
  const escaped = t => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const mismatched = deltas.filter(([label, d]) => d && !new RegExp('\\s' + escaped(d) + '(\\s|$)').test(cliRow(label)));
  check(deltas.length > 0 && mismatched.length === 0,
    `compare: every B - A reads as podnet diff prints it (${deltas.length} rows${mismatched.length ? '; differs: ' + mismatched.slice(0, 3).map(x => x.join(' ')).join('; ') : ''})`);
  await checkLayout('serve compare');
  await page.screenshot({ path: path.join(outDir, 'serve-compare-files.png'), fullPage: true });
  await page.setInputFiles('#cmp-file-a', []);
  await page.setInputFiles('#cmp-file-b', []);
  await page.selectOption('#cmp-a', '3');
  await page.selectOption('#cmp-b', '4');
  await page.click('#compare');
  await page.waitForFunction(() => document.querySelector('#result').dataset.compared === '1' && /#3/.test(document.querySelector('#result h2').textContent));
  const fromRuns = await changedRows();
  check(JSON.stringify(fromRuns) === JSON.stringify(fromFiles), `compare (runs #3 and #4): the same ${fromRuns.length} changed fields as the documents`);
  await page.selectOption('#cmp-b', String(diagRun));
  await page.click('#compare');
  await page.waitForFunction(() => document.querySelector('#result').dataset.compared === 'error');
  check(/cannot compare the bench result with the diagnose result/.test(await page.$eval('#error', e => e.textContent)), 'compare: two studies refused with a message');

  // inference: a page the registry gives (no page code of its own but the renderer), its form from GET /api/studies.
  await page.goto(`${s.url}/inference`);
  await page.waitForSelector('#app[data-ready="1"]');
  const navLinks = await page.$$eval('header nav a', a => a.map(x => x.textContent));
  check(navLinks.includes('inference') && navLinks.includes('compare') && navLinks.includes('design'),
    `the header links every study of the registry (${navLinks.join(', ')})`);
  const infFields = await page.$$eval('#run-form input[data-type]', i => i.map(x => x.id));
  check(['model', 'replicas', 'rate', 'target_ttft', 'target_tpot'].every(f => infFields.includes(f)), `inference: the form has the registry's fields (${infFields.join(', ')})`);
  await page.selectOption('#scenario', 'leafspine-8k');
  for (const [k, v] of Object.entries(infArgs)) await page.fill('#' + k, v);
  await page.click('#run');
  check(await waitState(['done', 'failed', 'rejected']) === 'done', 'inference runs from the page');
  await page.waitForSelector('#result table.target');
  const pageRate = await page.$eval('#result td[data-key="target.rate_per_s"]', td => JSON.parse(td.dataset.value));
  const pageP99 = await page.$eval('#result td[data-key="latency.ttft_ms.p99"]', td => JSON.parse(td.dataset.value));
  check(pageRate === infJson.target.rate_per_s && pageP99 === infJson.latency.ttft_ms.p99,
    `inference: the page's rate at the target (${pageRate} requests/s) and p99 TTFT (${pageP99} ms) equal podnet inference --format json`);
  const infText = await page.$eval('#result', e => e.textContent);
  check(/highest rate meeting it/.test(infText) && /time to first token/.test(infText) && !/ttft_ms/.test(infText.split('All figures')[0]),
    'inference: the result reads in words, not JSON keys');
  check(/communication share/.test(infText) && /on NVLink/.test(infText) && !/network share/.test(infText),
    'inference: the communication share is called so, and the page says where it runs (NVLink), as the CLI does');
  await checkLayout('serve inference');
  await page.screenshot({ path: path.join(outDir, 'serve-inference.png'), fullPage: true });

  // plan-upgrade: no page code of its own; the page shows the CLI's report (its plans and the recommended one).
  await page.goto(`${s.url}/plan-upgrade`);
  await page.waitForSelector('#app[data-ready="1"]');
  await page.selectOption('#scenario', 'leafspine-8k');
  for (const [k, v] of [['tier', 'spine'], ['batches', '1,4'], ['runs', '1']]) await page.fill('#' + k, v);
  await page.click('#run');
  check(await waitState(['done', 'failed', 'rejected']) === 'done', 'plan-upgrade runs from the page');
  await page.waitForSelector('#result pre.report-text');
  const report = await page.$eval('#result pre.report-text', e => e.textContent);
  const cli = run(['plan-upgrade', 'leafspine-8k', '--tier', 'spine', '--batches', '1,4', '--runs', '1']);
  check(report === cli && /recommended: /.test(report),
    'plan-upgrade: the page shows the report podnet plan-upgrade prints, the recommended plan with it');
  // Its details in words: the recommended plan by name, not the key "best", its extra time in s or min (seconds of
  // extra time read "0.00 h"), and --runs 0 as every step.
  const details = await page.$eval('#result', e => e.textContent);
  check(details.includes('recommended plan: extra training time') && !/\bbest: /.test(details) && !/0\.00 h/.test(details),
    'plan-upgrade: the details name the recommended plan and give its extra time in seconds or minutes');
  // Slowdowns as the CLI prints them (1.000x) in the plans' table too, not a bare 1: each of the 2 plans has a worst
  // and a mean, and the recommended plan's two besides.
  // The plans on a chart, one point each (2 batch sizes: 1 one at a time, 4 packed and spread = 3 plans), above the report.
  const planPoints = await seriesLength('#result .chart.upgrade');
  const upgradeDoc = JSON.parse(run(['plan-upgrade', 'leafspine-8k', '--tier', 'spine', '--batches', '1,4', '--runs', '1', '--format', 'json']));
  check(planPoints === upgradeDoc.plans.length && planPoints > 1, `plan-upgrade: the chart has a point per plan (${planPoints})`);
  const slowCells = await page.$$eval('#result td', t => t.map(x => x.textContent.trim()).filter(x => /^\d+\.\d{3}x$/.test(x)).length);
  check(slowCells >= 6, `plan-upgrade: ${slowCells} slowdowns read as 1.000x (at least 6: 2 plans x worst and mean, and the recommended plan's)`);
  const cmpNav = await (async () => { await page.goto(`${s.url}/compare`); await page.waitForFunction(() => document.querySelectorAll('header nav a').length > 6); return page.$$eval('header nav a', a => a.map(x => x.textContent)); })();
  check(['jobs', 'inference', 'plan-upgrade'].every(n => cmpNav.includes(n)), `compare: the header links every study too (${cmpNav.join(', ')})`);

  // bench with transports to compare: the flows' completion times as CDFs, one line per transport.
  await page.goto(`${s.url}/bench`);
  await page.waitForSelector('#app[data-ready="1"]');
  await page.selectOption('#scenario', 'leafspine-8k');
  for (const [k, v] of [['op', 'incast'], ['gpus', '0-128:8'], ['min', '1MiB'], ['max', '1MiB'], ['compare_cc', 'dctcp,rccc'], ['sets', 'network.pfc=false']])
    await page.fill('#' + k, v);
  await page.click('#run');
  check(await waitState(['done', 'failed', 'rejected']) === 'done', 'bench with transports to compare runs from the page');
  await page.waitForSelector('#result .chart.fct-cdf');
  await checkCdf('serve bench --compare-cc', '#result .chart.fct-cdf');
  const p50 = await page.$$eval('#result table.compare-rows td[data-col="fct_p50_us"]', t => t.map(x => JSON.parse(x.dataset.value)));
  check(JSON.stringify(p50) === JSON.stringify(cmpJson.rows.map(r => r.fct_p50_us)), `bench --compare-cc: the FCT p50 column (${p50.join(', ')} us) equals the CLI's`);
  await checkLayout('serve bench --compare-cc');
  await page.screenshot({ path: path.join(outDir, 'serve-bench-compare.png'), fullPage: true });
} finally {
  stopServer(s);
}

// One line per transport, its points (FCT, % of flows) equal to the document's fct_cdf_us.
async function checkCdf(where, sel) {
  const series = await benchSeries(sel);
  const ok = series.length === 2 && series.every((x, i) => x.name === cmpJson.rows[i].transport &&
    JSON.stringify(x.data) === JSON.stringify(cmpJson.rows[i].fct_cdf_us.map((v, q) => [v, q])));
  check(ok, `${where}: the FCT CDF has one line per transport (${series.map(x => x.name).join(', ')}), equal to podnet bench --compare-cc --format json`);
  // The time axis's ticks as drawn: no two alike (times 467.1 to 467.9 us read "467" five times).
  const ticks = await page.evaluate(s => {
    const c = window.echarts.getInstanceByDom(document.querySelector(s));
    const axis = c.getModel().getComponent('xAxis').axis;
    const f = c.getOption().xAxis[0].axisLabel.formatter;
    return axis.scale.getTicks().map(t => f(t.value));
  }, sel);
  check(ticks.length >= 2 && new Set(ticks).size === ticks.length, `${where}: the FCT axis's ${ticks.length} ticks all differ (${ticks.join(' | ')})`);
}

// The same checks on the --html reports, opened from disk (no server).
let t0 = Date.now();
await page.goto('file://' + designHtml);
await page.waitForSelector('.chart.fabric');
const marks = await seriesLength('.chart.fabric');
check(marks > 0, `design.html: fabric drawn (${marks} marks, ${Date.now() - t0} ms)`);
await checkBom('design.html');
await checkLayout('design.html');
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
await checkLayout('train.html');
// Every figure of the document, folded under Details, is labelled too.
await page.evaluate(() => { for (const d of document.querySelectorAll('details')) d.open = true; });
await checkLayout('train.html with all figures open');
await page.screenshot({ path: path.join(outDir, 'html-train.png'), fullPage: true });
await page.goto('file://' + relHtml);
await page.waitForSelector('.chart.goodput');
check(await seriesLength('.chart.goodput') === 49, 'reliability.html: goodput curve drawn');
await checkLayout('reliability.html');
await page.evaluate(() => { for (const d of document.querySelectorAll('details')) d.open = true; });
await checkLayout('reliability.html with all figures open');
await page.screenshot({ path: path.join(outDir, 'html-reliability.png'), fullPage: true });

await page.goto('file://' + sweepHtml);
await page.waitForSelector('.chart.sweep');
await checkSweep('train-sweep.html');
await checkLayout('train-sweep.html');
await page.screenshot({ path: path.join(outDir, 'html-train-sweep.png'), fullPage: true });
await page.goto('file://' + diagHtml);
await page.waitForSelector('table.suspects');
await checkDiagnose('diagnose.html', JSON.parse(await page.$eval('#podnet-data', e => e.textContent)).suspects);
await checkLayout('diagnose.html');
await page.screenshot({ path: path.join(outDir, 'html-diagnose.png'), fullPage: true });
await page.goto('file://' + benchHtml);
await page.waitForSelector('.chart.heatmap');
await checkHeatmap('bench.html', benchJson);
await checkLayout('bench.html');

await page.goto('file://' + cmpHtml);
await page.waitForSelector('.chart.fct-cdf');
await checkCdf('bench-compare.html', '.chart.fct-cdf');
await checkLayout('bench-compare.html');
await page.screenshot({ path: path.join(outDir, 'html-bench-compare.png'), fullPage: true });

await page.goto('file://' + sweepPage);
await page.waitForSelector('table.sweep-points');
const capex = await page.$$eval('table.sweep-points td[data-col="cost.capex_usd"]', t => t.map(x => JSON.parse(x.dataset.value)));
check(capex.length === 3 && JSON.stringify(capex) === JSON.stringify(sweepResults.points.map(p => p['cost.capex_usd'])),
  `sweep.html: the ${capex.length} points' capex equal podnet sweep --results --format json`);
const metricCharts = await page.$$eval('.chart.sweep-metric', d => d.length);
check(metricCharts >= 5, `sweep.html: one chart per headline figure (${metricCharts})`);
// Money on a chart's axis reads as money: the capex chart's labels start with $ (they read 121,845,760).
const capexAxis = await page.evaluate(() => {
  for (const box of document.querySelectorAll('.chart.sweep-metric')) {
    const h = box.parentElement.querySelector('h3');
    if (!h || !/capex/.test(h.textContent)) continue;
    const c = window.echarts.getInstanceByDom(box);
    const axis = c.getModel().getComponent('yAxis').axis;
    const f = c.getOption().yAxis[0].axisLabel.formatter;
    return axis.scale.getTicks().map(t => f(t.value));
  }
  return [];
});
check(capexAxis.length >= 2 && capexAxis.every(t => t.startsWith('$')), `sweep.html: the capex chart's axis reads in dollars (${capexAxis.join(' | ')})`);
await checkLayout('sweep.html');
await page.screenshot({ path: path.join(outDir, 'html-sweep.png'), fullPage: true });

await page.goto('file://' + infHtml);
await page.waitForSelector('table.target');
const htmlRate = await page.$eval('td[data-key="target.rate_per_s"]', td => JSON.parse(td.dataset.value));
check(htmlRate === infJson.target.rate_per_s, `inference.html: the rate at the target (${htmlRate} requests/s) equals podnet inference --format json`);
await checkLayout('inference.html');
await page.evaluate(() => { for (const d of document.querySelectorAll('details')) d.open = true; });
await checkLayout('inference.html with all figures open');
await page.screenshot({ path: path.join(outDir, 'html-inference.png'), fullPage: true });

check(errors.length === 0, 'no JavaScript error on any page' + (errors.length ? ': ' + errors.join('; ') : ''));
await browser.close();
fs.rmSync(profile, { recursive: true, force: true });
process.exit(summary());
