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

  function renderDesign(root, doc, drawing) {
    const topo = doc.topology || {};
    const head = section(root, 'Fabric: ' + fmt(topo.family) + ', ' + fmt(doc.bom && doc.bom.gpus) + ' GPUs', 'fabric');
    if (drawing) {
      head.appendChild(el('p', { class: 'muted', text: 'Drawn by tier, one mark per ' + drawing.granularity +
        ' (mark size grows with the devices in it; edge width with the links between two marks). Scroll to zoom, drag to pan.' }));
      const levels = drawing.level_names;
      const c = chart(head, 'fabric');
      c.setOption({
        animation: false,
        tooltip: {
          formatter: p => p.dataType === 'edge'
            ? fmt(p.data.links) + ' links, ' + fmt(p.data.gbps) + ' Gb/s per direction'
            : p.data.name + ': ' + fmt(p.data.count) + (p.data.level === 0 ? ' servers, ' + fmt(p.data.gpus) + ' GPUs' : ' switches')
        },
        legend: { data: levels },
        series: [{
          type: 'graph', layout: 'none', roam: true, large: true,
          categories: levels.map(n => ({ name: n })),
          label: { show: drawing.nodes.length <= 40, position: 'right', fontSize: 10 },
          data: drawing.nodes.map(n => ({
            id: String(n.id), name: n.name, x: n.x, y: n.y, category: n.level, level: n.level, count: n.count, gpus: n.gpus,
            symbolSize: Math.max(6, Math.min(40, 4 * Math.sqrt(n.count)))
          })),
          links: drawing.edges.map(e => ({
            source: String(e.source), target: String(e.target), links: e.links, gbps: e.gbps,
            lineStyle: { width: Math.max(0.5, Math.min(6, Math.log10(1 + e.links))), opacity: 0.35 }
          }))
        }]
      });
    }
    const bom = section(root, 'Bill of materials', 'bom');
    bom.appendChild(keyValueTable(doc.bom || {}, 'bom.', 'bom'));
    const lim = section(root, 'Limits, bisection, diameter', 'limits');
    const facts = {};
    for (const k of Object.keys(doc)) if (!['bom', 'run', 'notes', 'schema_version'].includes(k)) facts[k] = doc[k];
    lim.appendChild(keyValueTable(facts, '', 'facts'));
    if (doc.notes) lim.appendChild(el('ul', {}, doc.notes.map(n => el('li', { text: n }))));
  }

  function renderBench(root, doc) {
    const b = doc.bench || {};
    const s = section(root, 'busbw against message size: ' + fmt(b.op) + ' on ' + fmt(b.gpus) + ' GPUs (' + fmt(b.engine) + ' engine, ' + fmt(b.routing) + ')', 'busbw');
    const rows = doc.rows || [];
    const c = chart(s, 'busbw');
    c.setOption({
      animation: false,
      tooltip: { trigger: 'axis', valueFormatter: v => fmt(v) + ' GB/s' },
      legend: { data: ['busbw', 'algbw'] },
      xAxis: { type: 'log', logBase: 2, name: 'bytes', axisLabel: { formatter: v => bytesLabel(v) } },
      yAxis: { type: 'value', name: 'GB/s' },
      series: [
        { name: 'busbw', type: 'line', showSymbol: true, data: rows.map(r => [r.bytes, r.busbw_gbyte_per_s]) },
        { name: 'algbw', type: 'line', showSymbol: true, lineStyle: { type: 'dashed' }, data: rows.map(r => [r.bytes, r.algbw_gbyte_per_s]) }
      ]
    });
    const cols = ['bytes', 'time_us', 'algbw_gbyte_per_s', 'busbw_gbyte_per_s', 'algorithm', 'protocol', 'channels', 'nccl_model_us'];
    for (const k of ['baseline_time_us', 'slowdown']) if (rows.some(r => k in r)) cols.push(k);
    section(root, 'Rows', 'rows').appendChild(rowsTable(rows, cols, 'bench-rows'));
    if (doc.hottest_links && doc.hottest_links.length) {
      const h = section(root, 'Hottest links (largest size)', 'hottest');
      h.appendChild(rowsTable(doc.hottest_links, Object.keys(doc.hottest_links[0]), 'hottest'));
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

  function renderRun(root, doc) {
    if (!doc.run) return;
    const s = section(root, 'Run', 'run');
    s.appendChild(keyValueTable(doc.run, 'run.', 'facts'));
  }

  function render(root, payload) {
    root.replaceChildren();
    const doc = payload.document || {};
    if (payload.kind === 'design') renderDesign(root, doc, payload.drawing);
    else if (payload.kind === 'bench') renderBench(root, doc);
    else if (payload.kind === 'train') renderTrain(root, doc);
    else if (payload.kind === 'reliability') renderReliability(root, doc, payload.goodput_curve);
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

  function startApp(root, kind) {
    const form = el('form', { id: 'run-form' });
    const scenario = el('select', { id: 'scenario', name: 'scenario' });
    const upload = el('input', { type: 'file', id: 'upload', accept: '.yaml,.yml' });
    const sets = el('input', { type: 'text', id: 'sets', placeholder: 'topology.gpus=4096, ...', style: 'width: 22em' });
    form.appendChild(el('label', { text: 'scenario ' }, [scenario]));
    form.appendChild(el('label', { text: 'or upload YAML ' }, [upload]));
    form.appendChild(el('label', { text: '--set ' }, [sets]));
    const extra = {};
    if (kind === 'bench') {
      for (const [k, v] of [['op', 'allreduce'], ['min', '1MiB'], ['max', '256MiB'], ['factor', '2']]) {
        extra[k] = el('input', { type: 'text', id: k, value: v });
        form.appendChild(el('label', { text: k + ' ' }, [extra[k]]));
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
        list.appendChild(el('li', {}, [a]));
      }
    }

    async function show(id) {
      const payload = await api('GET', '/api/runs/' + id + '/result');
      render(out, payload);
      out.setAttribute('data-run', String(id));
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
      for (const [k, input] of Object.entries(extra)) body[k] = k === 'factor' ? Number(input.value) : input.value;
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
