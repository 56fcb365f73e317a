// podnet's dashboard: draws a result payload {kind, document, drawing} with
// Apache ECharts (window.echarts), in a self-contained `--html` report
// (podnet.renderReport) and in `podnet serve`'s pages (podnet.startApp).
// Every number shown comes from the `--format json` document; cells carry
// the raw value in data-value so tests compare them with the JSON.
(function () {
  'use strict';

  function el(tag, attrs, children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'text') e.textContent = v;
      else e.setAttribute(k, v);
    }
    for (const c of children || []) e.appendChild(c);
    return e;
  }

  function fmt(v) {
    if (typeof v === 'number') return Number.isInteger(v) ? v.toLocaleString('en-US') : v.toLocaleString('en-US', { maximumFractionDigits: 4 });
    if (v === null || v === undefined) return '-';
    return String(v);
  }

  // Text for ECharts' HTML tooltips (names come from scenario and document files).
  function esc(v) {
    return String(v).replace(/[&<>"']/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
  }

  function bytesLabel(b) {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (b >= 1024 && i < units.length - 1 && b % 1024 === 0) { b /= 1024; ++i; }
    return b + ' ' + units[i];
  }

  function section(parent, title, id) {
    const s = el('section', id ? { id: id } : {}, [el('h2', { text: title })]);
    parent.appendChild(s);
    return s;
  }

  // The scalar leaves of an object as rows "a.b.c | value".
  function flatten(obj, prefix, out) {
    for (const k of Object.keys(obj).sort()) {
      const v = obj[k], key = prefix ? prefix + '.' + k : k;
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) flatten(v, key, out);
      else if (!Array.isArray(v)) out.push([key, v]);
    }
    return out;
  }

  function keyValueTable(obj, prefix, cls) {
    const t = el('table', { class: cls || 'kv' });
    for (const [k, v] of flatten(obj, '', [])) {
      t.appendChild(el('tr', {}, [el('th', { text: k }),
        el('td', { class: typeof v === 'number' ? 'num' : '', 'data-key': prefix + k, 'data-value': JSON.stringify(v), text: fmt(v) })]));
    }
    return t;
  }

  function rowsTable(rows, columns, cls) {
    const t = el('table', { class: cls || 'rows' });
    t.appendChild(el('tr', {}, columns.map(c => el('th', { text: c }))));
    for (const r of rows) {
      t.appendChild(el('tr', {}, columns.map(c => el('td', {
        class: typeof r[c] === 'number' ? 'num' : '', 'data-col': c, 'data-value': JSON.stringify(r[c] === undefined ? null : r[c]),
        text: typeof r[c] === 'object' && r[c] !== null ? JSON.stringify(r[c]) : fmt(r[c])
      }))));
    }
    return t;
  }

  function chart(parent, cls) {
    const div = el('div', { class: 'chart ' + (cls || '') });
    parent.appendChild(div);
    const c = window.echarts.init(div, null, { renderer: 'canvas' });
    window.addEventListener('resize', () => c.resize());
    return c;
  }

  // The aggregated fabric (report::fabric_drawing); `suspects` (report::suspects_on_drawing) are drawn
  // red: their marks enlarged with a red border, their edges red and thick.
  function drawFabric(parent, drawing, suspects) {
    parent.appendChild(el('p', { class: 'muted', text: 'Drawn by tier, one mark per ' + drawing.granularity +
      ' (mark size grows with the devices in it; edge width with the links between two marks). Scroll to zoom, drag to pan.' }));
    const levels = drawing.level_names;
    const hitMark = new Map(), hitEdge = new Map();
    for (const s of suspects || []) {
      for (const m of s.marks) hitMark.set(m, (hitMark.get(m) || []).concat([s.component]));
      if (s.edge) { const k = s.edge[0] + '-' + s.edge[1]; hitEdge.set(k, (hitEdge.get(k) || []).concat([s.component])); }
    }
    const c = chart(parent, 'fabric');
    c.setOption({
      animation: false,
      tooltip: {
        formatter: p => {
          const sus = p.data.suspects ? p.data.suspects.map(x => '<br>suspect: ' + esc(x)).join('') : '';
          return (p.dataType === 'edge'
            ? fmt(p.data.links) + ' links, ' + fmt(p.data.gbps) + ' Gb/s per direction'
            : esc(p.data.name) + ': ' + fmt(p.data.count) + (p.data.level === 0 ? ' servers, ' + fmt(p.data.gpus) + ' GPUs' : ' switches')) + sus;
        }
      },
      legend: { data: levels },
      series: [{
        type: 'graph', layout: 'none', roam: true, large: true,
        categories: levels.map(n => ({ name: n })),
        label: { show: drawing.nodes.length <= 40, position: 'right', fontSize: 10 },
        data: drawing.nodes.map(n => {
          const d = {
            id: String(n.id), name: n.name, x: n.x, y: n.y, category: n.level, level: n.level, count: n.count, gpus: n.gpus,
            symbolSize: Math.max(6, Math.min(40, 4 * Math.sqrt(n.count)))
          };
          if (hitMark.has(n.id)) {
            d.suspects = hitMark.get(n.id);
            d.symbolSize = Math.max(14, d.symbolSize);
            d.itemStyle = { borderColor: '#d00000', borderWidth: 4 };
          }
          return d;
        }),
        links: drawing.edges.map(e => {
          const d = {
            source: String(e.source), target: String(e.target), links: e.links, gbps: e.gbps,
            lineStyle: { width: Math.max(0.5, Math.min(6, Math.log10(1 + e.links))), opacity: 0.35 }
          };
          const k = e.source + '-' + e.target;
          if (hitEdge.has(k)) {
            d.suspects = hitEdge.get(k);
            d.lineStyle = { width: 5, opacity: 1, color: '#d00000' };
          }
          return d;
        })
      }]
    });
    return c;
  }

  function renderDesign(root, doc, drawing) {
    const topo = doc.topology || {};
    const head = section(root, 'Fabric: ' + fmt(topo.family) + ', ' + fmt(doc.bom && doc.bom.gpus) + ' GPUs', 'fabric');
    if (drawing) drawFabric(head, drawing, null);
    const bom = section(root, 'Bill of materials', 'bom');
    bom.appendChild(keyValueTable(doc.bom || {}, 'bom.', 'bom'));
    const lim = section(root, 'Limits, bisection, diameter', 'limits');
    const facts = {};
    for (const k of Object.keys(doc)) if (!['bom', 'run', 'notes', 'schema_version'].includes(k)) facts[k] = doc[k];
    lim.appendChild(keyValueTable(facts, '', 'facts'));
    if (doc.notes) lim.appendChild(el('ul', {}, doc.notes.map(n => el('li', { text: n }))));
  }

  // What tells one bench result from another in a legend.
  function benchLabel(doc, prefix) {
    const b = doc.bench || {};
    return (prefix ? prefix + ' ' : '') + fmt(doc.run && doc.run.scenario) + ' ' + fmt(b.op) + ' ' + fmt(b.algorithm) + ', ' +
      fmt(b.engine) + ', ' + fmt(b.routing);
  }

  // bench: busbw (and algbw) against size, with `overlays` [{label, document}] as more busbw series;
  // the rows; the hottest links; utilization per link class and size as a heatmap.
  function renderBench(root, doc, overlays) {
    const b = doc.bench || {};
    const s = section(root, 'busbw against message size: ' + fmt(b.op) + ' on ' + fmt(b.gpus) + ' GPUs (' + fmt(b.engine) + ' engine, ' + fmt(b.routing) + ')', 'busbw');
    const rows = doc.rows || [];
    const series = [
      { name: 'busbw', type: 'line', showSymbol: true, data: rows.map(r => [r.bytes, r.busbw_gbyte_per_s]) },
      { name: 'algbw', type: 'line', showSymbol: true, lineStyle: { type: 'dashed' }, data: rows.map(r => [r.bytes, r.algbw_gbyte_per_s]) }
    ];
    for (const o of overlays || [])
      series.push({ name: 'busbw ' + o.label, type: 'line', showSymbol: true, data: (o.document.rows || []).map(r => [r.bytes, r.busbw_gbyte_per_s]) });
    const c = chart(s, 'busbw');
    c.setOption({
      animation: false,
      tooltip: { trigger: 'axis', valueFormatter: v => fmt(v) + ' GB/s' },
      legend: { data: series.map(x => x.name), type: 'scroll' },
      xAxis: { type: 'log', logBase: 2, name: 'bytes', axisLabel: { formatter: v => bytesLabel(v) } },
      yAxis: { type: 'value', name: 'GB/s' },
      series: series
    });
    if (overlays && overlays.length)
      s.appendChild(el('p', { class: 'muted', text: 'busbw = this result; busbw #N = the finished bench results overlaid.' }));
    const cols = ['bytes', 'time_us', 'algbw_gbyte_per_s', 'busbw_gbyte_per_s', 'algorithm', 'protocol', 'channels', 'nccl_model_us'];
    for (const k of ['baseline_time_us', 'slowdown']) if (rows.some(r => k in r)) cols.push(k);
    section(root, 'Rows', 'rows').appendChild(rowsTable(rows, cols, 'bench-rows'));
    if (doc.hottest_links && doc.hottest_links.length) {
      const h = section(root, 'Hottest links (largest size)', 'hottest');
      h.appendChild(rowsTable(doc.hottest_links, Object.keys(doc.hottest_links[0]), 'hottest'));
    }
    const util = doc.link_class_utilization || [];
    if (util.length && rows.length) {
      const h = section(root, 'Utilization per tier of links: the mean over each class\'s directed links, per size (tooltip: the busiest link)', 'heatmap');
      const sizes = rows.map(r => bytesLabel(r.bytes));
      const data = [];
      util.forEach((u, y) => u.mean_utilization.forEach((v, x) => data.push([x, y, v, u.max_utilization[x]])));
      const hc = chart(h, 'heatmap');
      hc.setOption({
        animation: false,
        tooltip: { formatter: p => esc(util[p.data[1]].link_class) + ' (' + fmt(util[p.data[1]].links) + ' directed links) at ' + sizes[p.data[0]] +
          ': mean ' + fmt(p.data[2]) + ', busiest ' + fmt(p.data[3]) },
        grid: { left: 140, right: 110, bottom: 90 },
        xAxis: { type: 'category', data: sizes, name: 'message size', nameLocation: 'middle', nameGap: 60, axisLabel: { rotate: 45 } },
        yAxis: { type: 'category', data: util.map(u => u.link_class) },
        // Colour scale from 0 to the highest cell (at least 0.01), so a lightly loaded fabric still shows its shape.
        visualMap: { min: 0, max: Math.max(0.01, ...data.map(d => d[2])), calculable: true, orient: 'vertical', right: 10, top: 'middle',
          dimension: 2, text: ['mean utilization', ''], precision: 4 },
        series: [{ type: 'heatmap', data: data, label: { show: sizes.length <= 12, formatter: p => fmt(p.data[2]) } }]
      });
    }
    section(root, 'Bench', 'setup').appendChild(keyValueTable(b, 'bench.', 'facts'));
  }

  // train: where the critical stage's iteration time goes (breakdown_ms), then every figure.
  function renderTrain(root, doc) {
    const b = doc.breakdown_ms || {};
    const parts = Object.keys(b).filter(k => b[k] > 0);
    const s = section(root, 'Iteration: ' + fmt(doc.iteration_time_ms) + ' ms (critical stage ' + fmt(doc.critical_stage) +
      '), MFU ' + fmt(doc.mfu), 'breakdown');
    const c = chart(s, 'breakdown');
    c.setOption({
      animation: false,
      tooltip: { trigger: 'item', valueFormatter: v => fmt(v) + ' ms' },
      legend: { data: parts },
      grid: { left: 80, right: 40, height: 120 },
      xAxis: { type: 'value', name: 'ms' },
      yAxis: { type: 'category', data: ['iteration'] },
      series: parts.map(k => ({ name: k, type: 'bar', stack: 'time', data: [b[k]] }))
    });
    if (doc.sweep && doc.sweep.length) {
      // One line per NIC cap (0 = as built): speed-up against GPUs, and the ideal (linear) line.
      const caps = [...new Set(doc.sweep.map(r => r.cap_gbytes_per_second))];
      const capName = c => c > 0 ? fmt(c) + ' GB/s per GPU' : 'as built';
      const w = section(root, 'Scaling (weak: fixed work per replica): speed-up against GPUs, one line per NIC cap', 'sweep');
      const sc = chart(w, 'sweep');
      const series = caps.map(cap => ({
        name: capName(cap), type: 'line', showSymbol: true,
        data: doc.sweep.filter(r => r.cap_gbytes_per_second === cap).map(r => [r.gpus, r.speedup, r.efficiency, r.dp])
      }));
      const ideal = doc.sweep.filter(r => r.cap_gbytes_per_second === caps[0]).map(r => [r.gpus, r.ideal]);
      series.push({ name: 'ideal', type: 'line', showSymbol: false, lineStyle: { type: 'dashed', color: '#999' }, data: ideal });
      sc.setOption({
        animation: false,
        tooltip: { trigger: 'item', formatter: p => esc(p.seriesName) + ': ' + fmt(p.data[0]) + ' GPUs' + (p.data.length > 3 ? ' (DP ' + fmt(p.data[3]) + ')' : '') +
          ', speed-up ' + fmt(p.data[1]) + (p.data.length > 2 ? ', efficiency ' + fmt(p.data[2]) : '') },
        legend: { data: series.map(x => x.name) },
        xAxis: { type: 'log', logBase: 2, name: 'GPUs' },
        yAxis: { type: 'log', logBase: 2, name: 'speed-up' },
        series: series
      });
    }
    renderGeneric(root, doc);
  }

  // diagnose: the suspects on the fabric, the suspects, then every figure.
  function renderDiagnose(root, doc, drawing, suspects) {
    const probing = doc.probing || {};
    const s = section(root, 'Suspects on the fabric: ' + fmt((suspects || []).length) + ' (' + fmt((doc.hidden_faults || []).length) +
      ' hidden faults in the scenario; ' + fmt(probing.mesh) + ' mesh, ' + fmt(probing.duration_seconds) + ' s of probing)', 'fabric');
    if (drawing) drawFabric(s, drawing, suspects);
    if (suspects && suspects.length) {
      const cols = ['component', 'kind', 'finding', 'value'];
      if (suspects.some(x => 'hidden_fault' in x)) cols.push('hidden_fault');
      s.appendChild(el('p', { class: 'muted', text: 'value: loss probability (finding loss) or RTT added in us (finding latency); red marks and edges hold a suspect.' }));
      s.appendChild(rowsTable(suspects, cols, 'suspects'));
    } else if (doc.mode === 'evaluate') {
      s.appendChild(el('p', { id: 'no-suspects', text: 'Evaluation (--evaluate): ' + fmt(doc.evaluation && doc.evaluation.trials) +
        ' trials, each with its own random hidden faults, so there is no one set of suspects to draw; the scores are below.' }));
    } else {
      s.appendChild(el('p', { id: 'no-suspects', text: 'No suspect: no component is lossy or slow at the test level.' }));
    }
    renderGeneric(root, doc);
  }

  // reliability: interruptions by component, goodput against checkpoint interval with the advice marked.
  function renderReliability(root, doc, curve) {
    const comps = Object.entries(doc.by_component || {}).sort((a, b) => a[1].order - b[1].order);
    const s = section(root, 'Expected interruptions by component over ' + fmt(doc.duration_days) + ' days: ' +
      fmt(doc.expected_interruptions) + ' (MTBI ' + fmt(doc.mtbi_hours) + ' h)', 'interruptions');
    const c = chart(s, 'interruptions');
    c.setOption({
      animation: false,
      tooltip: { trigger: 'axis' },
      legend: { data: ['interruptions', 'failures'] },
      grid: { left: 200 },
      xAxis: { type: 'value' },
      yAxis: { type: 'category', inverse: true, data: comps.map(([k, v]) => v.label || k) },
      series: [
        { name: 'interruptions', type: 'bar', data: comps.map(([k, v]) => v.expected_interruptions) },
        { name: 'failures', type: 'bar', data: comps.map(([k, v]) => v.expected_failures) }
      ]
    });
    if (curve && curve.points.length) {
      const g = section(root, 'Goodput against checkpoint interval (Daly 2006); advised: every ' +
        fmt(curve.optimum[0]) + ' min, goodput ' + fmt(curve.optimum[1]), 'goodput');
      const gc = chart(g, 'goodput');
      gc.setOption({
        animation: false,
        tooltip: { trigger: 'axis' },
        xAxis: { type: 'log', name: 'minutes between checkpoints' },
        yAxis: { type: 'value', name: 'goodput', scale: true },
        series: [{
          name: 'goodput', type: 'line', showSymbol: false, data: curve.points,
          markPoint: { symbol: 'pin', data: [{ name: 'advised', coord: curve.optimum, value: fmt(curve.optimum[0]) + ' min' }] }
        }]
      });
    }
    renderGeneric(root, doc);
  }

  // train, reliability and anything else: every figure of the document, arrays of objects as tables.
  function renderGeneric(root, doc) {
    const scalars = {};
    for (const k of Object.keys(doc).sort()) {
      const v = doc[k];
      if (k === 'run') continue;
      if (Array.isArray(v)) {
        if (!v.length) continue;
        const s = section(root, k, 'doc-' + k);
        if (typeof v[0] === 'object' && v[0] !== null) {
          const cols = [];
          for (const r of v) for (const c of Object.keys(r)) if (!cols.includes(c)) cols.push(c);
          s.appendChild(rowsTable(v, cols));
        } else {
          s.appendChild(el('ul', {}, v.map(x => el('li', { text: fmt(x) }))));
        }
      } else if (v !== null && typeof v === 'object') {
        section(root, k, 'doc-' + k).appendChild(keyValueTable(v, k + '.', 'facts'));
      } else {
        scalars[k] = v;
      }
    }
    if (Object.keys(scalars).length) section(root, 'figures', 'doc-figures').appendChild(keyValueTable(scalars, '', 'facts'));
  }

  // compare: report::diff_document (what `podnet diff --format json` prints) of two results.
  function renderCompare(root, d) {
    const head = section(root, 'A = ' + d.a + ', B = ' + d.b, 'compare-head');
    if (d.inputs && d.inputs.length) {
      head.appendChild(el('h3', { text: 'Inputs that differ (' + d.inputs.length + ')' }));
      head.appendChild(rowsTable(d.inputs, ['key', 'a', 'b'], 'inputs'));
    } else {
      head.appendChild(el('p', { class: 'muted', text: 'No input compared (a result document carries no resolved scenario) or none differs.' }));
    }
    for (const study of Object.keys(d.studies || {}).sort()) {
      const st = d.studies[study];
      const s = section(root, study + ': ' + st.changed.length + ' field(s) changed, ' + st.same + ' the same' +
        (st.only_a.length || st.only_b.length ? ', ' + st.only_a.length + ' only in A, ' + st.only_b.length + ' only in B' : ''), 'study-' + study);
      const at = d.attribution && d.attribution[study];
      if (at) {
        const parts = Object.entries(at.by_breakdown_ms).filter(([k, v]) => Math.abs(v) > 1e-9).map(([k, v]) => k + ' ' + (v >= 0 ? '+' : '') + fmt(v) + ' ms');
        s.appendChild(el('p', { class: 'attribution', 'data-value': JSON.stringify(at.iteration_time_ms_delta),
          text: 'Iteration time ' + (at.iteration_time_ms_delta >= 0 ? '+' : '') + fmt(at.iteration_time_ms_delta) + ' ms' + (parts.length ? ': ' + parts.join(', ') : '') }));
      }
      // Largest relative changes first (as podnet diff's table), numbers only, at most 25 bars.
      const numeric = st.changed.filter(c => c.ratio !== undefined && c.ratio !== null && c.ratio > 0);
      numeric.sort((x, y) => Math.abs(Math.log(y.ratio)) - Math.abs(Math.log(x.ratio)));
      const top = numeric.slice(0, 25);
      if (top.length) {
        s.appendChild(el('p', { class: 'muted', text: 'B / A of the ' + top.length + ' largest relative changes (1 = the same; log axis).' }));
        const c = chart(s, 'ratios');
        c.getDom().style.height = Math.max(160, 60 + 22 * top.length) + 'px';
        c.resize();
        c.setOption({
          animation: false,
          tooltip: { trigger: 'item', formatter: p => esc(top[p.dataIndex].field) + ': ' + esc(fmt(top[p.dataIndex].a)) + ' -> ' + esc(fmt(top[p.dataIndex].b)) + ' (B / A ' + fmt(p.value) + ')' },
          grid: { left: 320 },
          xAxis: { type: 'log', name: 'B / A' },
          yAxis: { type: 'category', inverse: true, data: top.map(x => x.field), axisLabel: { width: 300, overflow: 'truncate' } },
          series: [{ type: 'bar', name: 'B / A', data: top.map(x => x.ratio) }]
        });
      }
      if (st.changed.length) s.appendChild(rowsTable(st.changed, ['field', 'a', 'b', 'delta', 'ratio'], 'changed'));
      if (st.only_a.length) s.appendChild(el('p', { class: 'muted', text: 'Only in A: ' + st.only_a.join(', ') }));
      if (st.only_b.length) s.appendChild(el('p', { class: 'muted', text: 'Only in B: ' + st.only_b.join(', ') }));
    }
  }

  function renderRun(root, doc) {
    if (!doc.run) return;
    const s = section(root, 'Run', 'run');
    s.appendChild(keyValueTable(doc.run, 'run.', 'facts'));
  }

  function render(root, payload) {
    root.replaceChildren();
    const doc = payload.document || {};
    if (payload.kind === 'design') renderDesign(root, doc, payload.drawing);
    else if (payload.kind === 'bench') renderBench(root, doc, payload.overlays);
    else if (payload.kind === 'train') renderTrain(root, doc);
    else if (payload.kind === 'reliability') renderReliability(root, doc, payload.goodput_curve);
    else if (payload.kind === 'diagnose') renderDiagnose(root, doc, payload.drawing, payload.suspects);
    else if (payload.kind === 'compare') renderCompare(root, payload.document);
    else renderGeneric(root, doc);
    renderRun(root, doc);
  }

  function renderReport(root, payload) {
    if (!window.echarts) {
      root.appendChild(el('p', { class: 'error', text: 'the chart library is missing from this page' }));
      return;
    }
    render(root, payload);
  }

  // ---- podnet serve ----

  async function api(method, path, body) {
    const r = await fetch(path, body === undefined ? { method } : { method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    let j = null;
    try { j = await r.json(); } catch (e) { j = { error: 'HTTP ' + r.status }; }
    if (!r.ok) throw new Error(j.error || ('HTTP ' + r.status));
    return j;
  }

  // The compare page: two finished runs of this server, or two uploaded result documents.
  function startCompare(root) {
    const controls = section(root, 'compare: two results side by side (what podnet diff computes)', 'controls');
    const pick = {}, file = {};
    for (const side of ['a', 'b']) {
      pick[side] = el('select', { id: 'cmp-' + side });
      file[side] = el('input', { type: 'file', id: 'cmp-file-' + side, accept: '.json' });
      controls.appendChild(el('p', {}, [el('label', { text: side.toUpperCase() + ': finished run ' }, [pick[side]]),
        el('label', { text: ' or a result document (--format json) ' }, [file[side]])]));
    }
    const go = el('button', { type: 'button', id: 'compare', text: 'Compare' });
    controls.appendChild(go);
    const error = el('div', { id: 'error', class: 'error', style: 'display: none' });
    controls.appendChild(error);
    const out = el('div', { id: 'result' });
    root.appendChild(out);
    const showError = msg => { error.textContent = msg; error.style.display = msg ? 'block' : 'none'; };
    async function side(k) {
      if (file[k].files.length) {
        const text = await file[k].files[0].text();
        let doc;
        try { doc = JSON.parse(text); } catch (e) { throw new Error(file[k].files[0].name + ': not JSON: ' + e.message); }
        return { document: doc, file: file[k].files[0].name };
      }
      if (!pick[k].value) throw new Error(k.toUpperCase() + ': pick a finished run or a result document');
      return { run: Number(pick[k].value) };
    }
    go.addEventListener('click', async () => {
      showError('');
      out.removeAttribute('data-compared');
      try {
        const d = await api('POST', '/api/compare', { a: await side('a'), b: await side('b') });
        out.replaceChildren();
        renderCompare(out, d);
        out.setAttribute('data-compared', '1');
      } catch (e) {
        showError(e.message);
        out.setAttribute('data-compared', 'error');
      }
    });
    api('GET', '/api/runs').then(all => {
      const done = all.runs.filter(r => r.state === 'done');
      for (const k of ['a', 'b']) {
        pick[k].appendChild(el('option', { value: '', text: '(none)' }));
        for (const r of done) pick[k].appendChild(el('option', { value: String(r.id), text: '#' + r.id + ' ' + r.study + ' ' + r.scenario }));
      }
      if (done.length >= 2) { pick.a.value = String(done[1].id); pick.b.value = String(done[0].id); }
      root.setAttribute('data-ready', '1');
    }).catch(e => showError(e.message));
  }

  function startApp(root, kind) {
    if (kind === 'compare') return startCompare(root);
    const form = el('form', { id: 'run-form' });
    const scenario = el('select', { id: 'scenario', name: 'scenario' });
    const upload = el('input', { type: 'file', id: 'upload', accept: '.yaml,.yml' });
    const sets = el('input', { type: 'text', id: 'sets', placeholder: 'topology.gpus=4096, ...', style: 'width: 22em' });
    form.appendChild(el('label', { text: 'scenario ' }, [scenario]));
    form.appendChild(el('label', { text: 'or upload YAML ' }, [upload]));
    form.appendChild(el('label', { text: '--set ' }, [sets]));
    const extra = {};
    const fields = {
      bench: [['op', 'allreduce'], ['algo', 'auto'], ['engine', ''], ['routing', ''], ['min', '1MiB'], ['max', '256MiB'], ['factor', '2']],
      diagnose: [['probe', 'rail'], ['duration', '300s'], ['round', '10s']]
    };
    for (const [k, v] of fields[kind] || []) {
      extra[k] = el('input', { type: 'text', id: k, value: v });
      form.appendChild(el('label', { text: k + ' ' }, [extra[k]]));
    }
    if (kind === 'train') {
      for (const [k, what] of [['sweep', 'scaling sweep'], ['trace', 'Perfetto trace']]) {
        extra[k] = el('input', { type: 'checkbox', id: k });
        form.appendChild(el('label', { text: what + ' ' }, [extra[k]]));
      }
    }
    const run = el('button', { type: 'submit', id: 'run', text: 'Run ' + kind });
    const cancel = el('button', { type: 'button', id: 'cancel', text: 'Cancel', disabled: 'disabled' });
    form.appendChild(run);
    form.appendChild(cancel);
    const controls = section(root, kind + ': run a study', 'controls');
    controls.appendChild(form);
    const bar = el('progress', { id: 'progress', max: '1', value: '0' });
    const status = el('span', { id: 'status', class: 'muted', text: 'idle' });
    controls.appendChild(el('p', {}, [bar, document.createTextNode(' '), status]));
    const error = el('div', { id: 'error', class: 'error', style: 'display: none' });
    controls.appendChild(error);
    const runs = section(root, 'Finished results', 'results');
    const list = el('ul', { id: 'runs' });
    runs.appendChild(list);
    const out = el('div', { id: 'result' });
    root.appendChild(out);
    let current = null, source = null;

    function showError(msg) { error.textContent = msg; error.style.display = msg ? 'block' : 'none'; }

    async function refreshRuns() {
      const all = await api('GET', '/api/runs');
      list.replaceChildren();
      for (const r of all.runs.filter(r => r.study === kind)) {
        const a = el('a', { href: '#', 'data-run': r.id, text: '#' + r.id + ' ' + r.scenario + ': ' + r.state + (r.error ? ' (' + r.error + ')' : '') });
        a.addEventListener('click', ev => { ev.preventDefault(); if (r.state === 'done') show(r.id); });
        const li = el('li', {}, [a]);
        if (kind === 'bench' && r.state === 'done') {
          // Overlay this result's busbw on the one shown.
          const box = el('input', { type: 'checkbox', class: 'overlay', 'data-run': r.id });
          if (overlaid.has(r.id)) box.checked = true;
          box.addEventListener('change', () => {
            if (box.checked) overlaid.add(r.id); else overlaid.delete(r.id);
            if (shown !== null) show(shown);
          });
          li.appendChild(el('label', { class: 'muted', text: ' overlay ' }, [box]));
        }
        list.appendChild(li);
      }
    }

    const overlaid = new Set();
    let shown = null;
    async function show(id) {
      const payload = await api('GET', '/api/runs/' + id + '/result');
      if (kind === 'bench') {
        payload.overlays = [];
        for (const o of [...overlaid].sort((x, y) => x - y)) {
          if (o === id) continue;
          const p = await api('GET', '/api/runs/' + o + '/result');
          payload.overlays.push({ label: '#' + o + ' ' + benchLabel(p.document), document: p.document });
        }
      }
      shown = id;
      render(out, payload);
      if (payload.trace) {
        const link = el('a', { id: 'trace-link', href: '/api/runs/' + id + '/trace', download: 'podnet-train-' + id + '.json',
          text: 'Download the iteration\'s Perfetto trace (' + fmt(Math.round(payload.trace.bytes / 1024)) + ' KiB)' });
        const p = el('p', {}, [link, document.createTextNode(' and open it in ui.perfetto.dev (Open trace file) or chrome://tracing.')]);
        out.insertBefore(p, out.firstChild);
      }
      out.setAttribute('data-run', String(id));
      out.setAttribute('data-overlays', String(payload.overlays ? payload.overlays.length : 0));
    }

    function follow(id) {
      current = id;
      cancel.removeAttribute('disabled');
      source = new EventSource('/api/runs/' + id + '/events');
      source.onmessage = async ev => {
        const s = JSON.parse(ev.data);
        bar.max = Math.max(1, s.total);
        bar.value = s.done;
        status.textContent = s.state + (s.what ? ': ' + s.what : '') + (s.total ? ' (' + s.done + '/' + s.total + ')' : '');
        if (s.state === 'done' || s.state === 'failed' || s.state === 'cancelled') {
          source.close();
          cancel.setAttribute('disabled', 'disabled');
          if (s.state === 'failed') showError(s.error);
          if (s.state === 'done') await show(id);
          await refreshRuns();
          status.setAttribute('data-state', s.state);
        }
      };
    }

    form.addEventListener('submit', async ev => {
      ev.preventDefault();
      showError('');
      status.removeAttribute('data-state');
      const body = { study: kind, sets: sets.value.split(',').map(s => s.trim()).filter(s => s) };
      for (const [k, input] of Object.entries(extra))
        body[k] = input.type === 'checkbox' ? input.checked : k === 'factor' ? Number(input.value) : input.value;
      if (upload.files.length) {
        body.yaml = await upload.files[0].text();
        body.file = upload.files[0].name;
      } else {
        body.scenario = scenario.value;
      }
      try {
        const r = await api('POST', '/api/runs', body);
        follow(r.id);
      } catch (e) {
        showError(e.message);
        status.textContent = 'rejected';
        status.setAttribute('data-state', 'rejected');
      }
    });
    cancel.addEventListener('click', async () => { if (current !== null) await api('POST', '/api/runs/' + current + '/cancel', {}); });

    api('GET', '/api/scenarios').then(j => {
      for (const s of j.scenarios) scenario.appendChild(el('option', { value: s.name, text: s.name + ' - ' + s.description }));
      root.setAttribute('data-ready', '1');
    }).catch(e => showError(e.message));
    refreshRuns().catch(e => showError(e.message));
  }

  window.podnet = { renderReport, render, startApp };
})();
