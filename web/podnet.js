// podnet's dashboard: draws a result payload {kind, document, drawing} with
// Apache ECharts (window.echarts), in a self-contained `--html` report
// (podnet.renderReport) and in `podnet serve`'s pages (podnet.startApp).
// Every number shown comes from the `--format json` document, formatted as
// the CLI's tables print it (labels, units, percentages, thousands
// separators: the FIELDS table below); cells carry the raw value in
// data-value so tests compare them with the JSON.
(function () {
  'use strict';

  function el(tag, attrs, children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'text') e.textContent = v;
      else e.setAttribute(k, v);
    }
    for (const c of children || []) e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    return e;
  }

  // Text for ECharts' HTML tooltips (names come from scenario and document files).
  function esc(v) {
    return String(v).replace(/[&<>"']/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
  }

  // ---- numbers: one formatting module (label + unit + format per result key) ----

  // v with exactly d decimals and thousands separators: 12,345.68.
  function fixed(v, d) {
    return Number(v).toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
  }
  // A port's speed as the trade names it: 400G, 800G, 1.6T.
  function portLabel(gbps) {
    if (gbps < 1) return Number((gbps * 1000).toFixed(1)) + 'M';  // 800M, not "1G"
    return gbps < 1000 ? Number(gbps.toFixed(1)) + 'G' : Number((gbps / 1000).toPrecision(4)) + 'T';
  }
  // A number of unknown kind at a sensible precision: integers whole, else 4 significant digits at most.
  function plain(v) {
    if (Number.isInteger(v)) return fixed(v, 0);
    const a = Math.abs(v);
    if (a >= 1e15 || (a > 0 && a < 1e-3)) return v.toExponential(2);
    if (a >= 1000) return fixed(v, 0);
    if (a >= 100) return fixed(v, 1);
    if (a >= 1) return fixed(v, 2);
    return fixed(v, 3);
  }
  const IEC = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  // Sizes as nccl-tests' users write them: 2 MiB (powers of 1024), else SI with 2 decimals.
  function bytesText(b) {
    if (!Number.isFinite(b)) return String(b);
    let i = 0, x = b;
    while (x >= 1024 && i < IEC.length - 1 && x % 1024 === 0) { x /= 1024; ++i; }
    if (i > 0 || b < 1000) return fixed(x, 0) + ' ' + IEC[i];
    for (const [s, u] of [[1e12, 'TB'], [1e9, 'GB'], [1e6, 'MB'], [1e3, 'kB']]) if (b >= s) return fixed(b / s, 2) + ' ' + u;
    return fixed(b, 0) + ' B';
  }
  const bytesLabel = bytesText;
  function percentText(v) {
    const p = 100 * v, a = Math.abs(p);
    if (p === 0) return '0';
    if (a < 0.01) return p.toPrecision(2);
    return fixed(p, a < 1 ? 2 : 1);
  }
  // count_text of podnet reliability: 0, < 0.0001, 0.0064, 2.35, 254.9.
  function countText(v) {
    if (v === 0) return '0';
    if (v < 0.0001) return '< 0.0001';
    if (v < 0.01) return fixed(v, 4);
    return fixed(v, v < 10 ? 2 : 1);
  }
  // plural() of podnet: '1 channel', '4 channels' (thousands separated).
  function countOf(n, one, many) { return fixed(n, 0) + ' ' + (n === 1 ? one : many); }
  // podnet bench's header: the channels fixed, or who picks them (NCCL's tuner for NCCL's algorithms, whose rows
  // carry a protocol; the algorithm itself otherwise).
  function channelsText(channels, rows) {
    if (channels === 'auto')
      return rows.some(r => r.protocol) ? 'channels as NCCL picks them' : 'channels as the algorithm picks them';  // "" for pairwise
    return channels === '1' ? '1 channel' : channels + ' channels';
  }
  // duration_text of podnet reliability: 12.3 min, 5.25 h, 3.10 days.
  function durationText(hours) {
    if (hours < 1) return fixed(hours * 60, 1) + ' min';
    if (hours < 48) return fixed(hours, 2) + ' h';
    return fixed(hours / 24, 2) + ' days';
  }
  // A number of days as podnet train prints it, opening its parenthesis: under a day with its hours or minutes.
  function daysOpen(d) { return d < 0.95 ? fixed(d, 3) + ' (' + durationText(d * 24) + '; ' : fixed(d, 1) + ' ('; }
  function secondsText(s) {
    if (s >= 3600) return fixed(s / 3600, 2) + ' h';
    if (s >= 60) return fixed(s / 60, 1) + ' min';
    if (s >= 1) return fixed(s, 1) + ' s';  // as podnet reliability and plan-upgrade print it: 1.6 s, 2.0 s
    if (s >= 1e-3) return fixed(s * 1e3, 1) + ' ms';
    if (s > 0) return fixed(s * 1e6, s >= 1e-5 ? 0 : 2) + ' us';
    return '0 s';
  }
  function bigText(v) {
    for (const [s, u] of [[1e12, 'T'], [1e9, 'B'], [1e6, 'M']]) if (Math.abs(v) >= s) return fixed(v / s, 2) + u;
    return fixed(v, 0);
  }

  // Kinds of value: f formats the number, unit follows it (a table column puts the unit in its header).
  const KINDS = {
    int: { f: v => fixed(Math.round(v), 0) },
    num: { f: plain },
    num1: { f: v => fixed(v, 1) },
    num3: { f: v => fixed(v, 3) },
    num4: { f: v => fixed(v, 4) },
    num2: { f: v => fixed(v, 2) },
    cap: { f: v => v > 0 ? fixed(v, 0) : 'as built', unit: 'GB/s per GPU' },
    pct: { f: percentText, unit: '%' },
    pct2: { f: v => fixed(100 * v, 2), unit: '%' },  // goodput, as the CLI prints it (87.05 %)
    pct1: { f: v => fixed(100 * v, 1), unit: '%' },  // a component's share of the interruptions (0.6 %)
    usd2: { f: v => (v < 0 ? '-$' : '$') + fixed(Math.abs(v), 2) },  // $0.84 per token/s
    usd: { f: v => (v < 0 ? '-$' : '$') + fixed(Math.abs(v), Math.abs(v) >= 10 ? 0 : Math.abs(v) >= 0.1 ? 2 : 3) },
    ms: { f: v => fixed(v, 2), unit: 'ms' },
    us: { f: v => fixed(v, 2), unit: 'us' },
    s: { f: secondsText },
    min: { f: v => fixed(v, 1), unit: 'min' },
    h: { f: v => fixed(v, Math.abs(v) >= 1000 ? 0 : 2), unit: 'h' },
    dur: { f: durationText },
    hs: { f: v => secondsText(v * 3600) },  // hours too short for hours: a plan-upgrade's extra time (1.9 s)
    steps: { f: v => v === 0 ? 'every step' : fixed(v, 0) },  // plan-upgrade's --runs 0
    missed: { s: v => ({ ttft: 'time to first token', tpot: 'time per output token', both: 'both targets', pace: 'the pace' })[v] || v },  // hours as the CLI's duration_text: 45.19 h, 7.58 days
    days: { f: v => fixed(v, 1), unit: 'days' },
    kw: { f: v => fixed(v, 1), unit: 'kW' },
    mwh: { f: v => fixed(v, 0), unit: 'MWh' },
    gbps: { f: v => fixed(v, Math.abs(v) >= 100 ? 0 : 1), unit: 'Gbps' },
    gbps1: { f: v => fixed(v, 1), unit: 'Gbps' },
    GBps: { f: v => fixed(v, 2), unit: 'GB/s' },
    TBps: { f: v => fixed(v, 2), unit: 'TB/s' },
    Bps: { f: v => v >= 1e6 ? fixed(v / 1e6, 2) + ' MB/s' : v >= 1e3 ? fixed(v / 1e3, 1) + ' kB/s' : fixed(v, 0) + ' B/s' },
    gb: { f: v => fixed(v, Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 1 ? 1 : 3), unit: 'GB' },
    gb1: { f: v => fixed(v, 1), unit: 'GB' },  // a job's traffic, as podnet train's jobs table (342.6)
    gb3: { f: v => fixed(v, 3), unit: 'GB' },  // a shared link's load, as the same (4.684)
    bytes: { f: bytesText },
    gbytes: { f: v => fixed(v / 1e9, 2), unit: 'GB' },  // volumes, as the CLI prints them (TP 96.64 GB)
    billion: { f: v => fixed(v, 1) + 'B' },
    big: { f: bigText },
    // FLOPs with an SI prefix (6.06 EFLOP), not 6.06e+18
    sci: { f: v => { for (const [x, u] of [[1e18, 'E'], [1e15, 'P'], [1e12, 'T'], [1e9, 'G']]) if (Math.abs(v) >= x) return fixed(v / x, 2) + ' ' + u + 'FLOP'; return fixed(v, 0) + ' FLOP'; } },
    ratio: { f: v => String(Number(v.toFixed(3))) + ':1' },  // as the CLI: 1:1, 2.125:1
    times: { f: v => fixed(v, 3) + 'x' },
    count: { f: countText },
    perh: { f: v => v === 0 ? '0' : v >= 0.001 ? String(Number(v.toPrecision(3))) : v.toExponential(2), unit: 'per hour' },  // 0.0221, not 2.21e-2
    tflops: { f: v => fixed(v, 1), unit: 'TFLOP/s' },
    gpus: { f: v => fixed(v, 0), unit: 'GPUs' },
    hops: { f: v => fixed(v, 0), unit: 'hops' }
  };

  // Labels and kinds by dotted path ('*' = any one key; '$1' in a label = that key, humanized). Paths not listed
  // get a label from their keys (units stripped: power_kw -> "power", kW) and a kind from their unit suffix.
  const FIELDS = {
    // design
    'topology.family': ['fabric family'], 'topology.tiers': ['switch tiers'],
    'topology.gpus_per_server': ['GPUs per server', 'int'], 'topology.nics_per_server': ['NICs per server', 'int'],
    'bom.gpus': ['GPUs', 'int'], 'bom.nics': ['NICs', 'int'], 'bom.nvlink_domains': ['NVLink domains', 'int'],
    // a training job's layout (a sweep's columns; report/studies.cpp labels them alike)
    'parallelism.gpus': ['GPUs', 'int'], 'parallelism.tp': ['TP', 'int'], 'parallelism.cp': ['CP', 'int'],
    'parallelism.pp': ['PP (stages)', 'int'], 'parallelism.dp': ['DP (replicas)', 'int'], 'job.gpus': ['GPUs', 'int'],
    'bom.switches.*': ['switches: $1', 'int'], 'bom.links.*': ['links: $1', 'int'], 'bom.internal_links.*': ['links inside servers: $1', 'int'],
    'bom.cables.*': ['cables: $1', 'int'], 'bom.transceivers': ['optical transceivers', 'int'], 'bom.power_kw': ['IT power, servers included', 'kw'],
    'bom.racks.total': ['racks', 'int'], 'bom.racks.server': ['racks: servers', 'int'], 'bom.racks.network': ['racks: network', 'int'],
    'bom.racks.servers_per_rack': ['servers per rack', 'int'], 'bom.power.servers_kw': ['IT power: servers', 'kw'], 'bom.power.switches_kw': ['IT power: switches', 'kw'], 'bom.power.optics_kw': ['IT power: optics', 'kw'], 'bom.power.*': ['power: $1'], 'bom.*': ['$1'], 'topology.*': ['$1'],
    'cost.capex_usd': ['network capex', 'usd'], 'cost.capex_per_gpu_usd': ['network capex per GPU', 'usd'],
    'cost.capex.*': ['capex: $1', 'usd'], 'cost.capex_by_tier_usd.server': ['capex: server NICs', 'usd'], 'cost.capex_by_tier_usd.*': ['capex: $1', 'usd'],
    'cost.energy_mwh_per_year': ['energy per year (whole cluster)', 'mwh'], 'cost.energy_usd_per_year': ['energy cost per year', 'usd'],
    'cost.network_energy_usd_per_year': ['of which network (switches, optics)', 'usd'],
    'cost.energy_price_usd_per_kwh': ['energy price per kWh', 'usd'], 'cost.pue': ['PUE', 'num'],
    'bisection_bandwidth_gbps': ['bisection bandwidth (per direction)', 'gbps'],
    'injection_bandwidth_per_gpu_gbps': ['injection bandwidth per GPU', 'gbps'],
    'diameter_hops': ['diameter (links between switches)', 'int'], 'bisection_oversubscription': ['oversubscription, whole fabric', 'ratio'],
    'cost.network_capex_usd_per_token_per_second': ['network capex per token/s', 'usd2'], 'cost.network_capex_usd': ["network capex (the whole fabric's)", 'usd'], 'oversubscription.*': ['oversubscription at $1', 'ratio'],
    'limits.max_gpus': ['largest GPU count this design reaches', 'int'], 'limits.max_gpus_reason': ['limit'],
    // bench
    'bench.op': ['operation'], 'bench.cc': ['congestion control'], 'bench.flow_control': ['flow control'], 'bench.delivery': ['delivery'], 'bench.gpus': ['GPUs', 'int'], 'bench.bus_factor': ['bus factor (busbw / algbw)', 'num4'],
    'bench.bus_factor_formula': ['bus factor, as a formula'], 'bench.qps': ['QPs per connection', 'int'], 'bench.gpu_arch': ['tuner tables'],
    // the algorithm asked for (--algo) and the tuner's allowed set (collective.algorithms): two rows that read alike
    'bench.algorithm': ['algorithm asked for (--algo)'], 'bench.algorithms': ["algorithms NCCL's tuner may pick (collective.algorithms)"],
    'bench.protocols': ["protocols NCCL's tuner may pick (collective.protocols)"], 'bench.channels': ['channels (collective.channels)'],
    'bench.faults': ["faults (the scenario's faults: section)"],
    'bytes': ['size', 'bytes'], 'algbw_gbyte_per_s': ['algbw', 'GBps'], 'busbw_gbyte_per_s': ['busbw', 'GBps'],
    'time_us': ['time', 'us'], 'algorithm': ['algo'], 'protocol': ['proto'], 'nccl_model_us': ['NCCL model', 'us'],
    'baseline_time_us': ['baseline', 'us'], 'slowdown': ['slowdown', 'times'], 'link': ['link'],
    'mean_utilization': ['mean util', 'pct'], 'peak_utilization': ['peak util', 'pct'],
    'engine_stats.flows': ['flows simulated (largest size)', 'int'], 'engine_stats.solves': ['max-min solves (largest size)', 'int'],
    'ring.label': ['ring'], 'ring.hops': ['ring hops', 'int'], 'ring.*': ['ring hops: $1', 'int'], 'bench.*': ['$1'], 'hottest_links.bytes': ['bytes carried', 'bytes'],
    'fct.*': ['$1'],
    // bench --compare-cc (the transports' table, as podnet prints it)
    'transport': ['transport'], 'fct_flows': ['flows', 'int'], 'fct_min_us': ['FCT min', 'us'], 'fct_p50_us': ['FCT p50', 'us'],
    'fct_p99_us': ['FCT p99', 'us'], 'fct_max_us': ['FCT max', 'us'], 'fairness': ['fairness (Jain\'s index)', 'num3'],
    'goodput_gbit_per_s': ['total goodput', 'gbps1'], 'drops': ['drops', 'int'], 'trimmed': ['trimmed', 'int'], 'ecn_marks': ['ECN marks', 'int'],
    'pause_frames': ['PAUSE frames', 'int'], 'paused_max_us': ['most paused port', 'us'], 'retransmissions': ['retransmissions', 'int'], 'timeouts': ['timeouts', 'int'],
    'lost_packets': ['lost, never resent', 'int'], 'delivery': ['delivery'], 'fct_mean_us': ['FCT mean', 'us'], 'link_credits': ['link credits'],
    'cc': ['congestion control'], 'pfc': ['PFC'], 'flow_control': ['flow control'], 'routing': ['routing'], 'sets': ['scenario keys'],
    'sweep.dp_exposed_ms': ['DP exposed', 'ms'], 'sweep.cap_gbytes_per_second': ['NIC cap', 'cap'],
    'sweep.speedup': ['speed-up', 'num2'], 'sweep.ideal': ['ideal', 'int'],
    // train
    'iteration_time_ms': ['iteration time', 'ms'], 'mfu': ['MFU (model FLOPs)', 'pct'], 'mfu_of_fp8_peak': ['MFU of the FP8 peak', 'pct'],
    'hfu': ['HFU (with recompute)', 'pct'], 'tflops_per_gpu': ['TFLOP/s per GPU (hardware)', 'num1'],
    'tokens_per_second': ['tokens/s', 'int'], 'days_to_train': ['days to train, failure-free', 'days'],
    'tokens_budget': ['token budget', 'big'], 'ideal_bubble_fraction': ['ideal bubble (p-1)/(v m) of compute, even stages', 'pct'],
    'critical_stage': ['critical stage', 'int'],
    'variability.compute_added_ms': ['of which variability (compute added)', 'ms'], 'variability.speed_cv': ['variability: GPU speed CV', 'pct'],
    'variability.jitter_cv': ['variability: step jitter CV', 'pct'], 'variability.slowest_gpu': ['variability: slowest GPU', 'int'],
    'variability.slowest_factor': ["variability: slowest GPU's time factor", 'num'],
    'variability.slow_hosts.share': ['variability: share of slow hosts', 'pct'], 'variability.slow_hosts.forward_slowdown': ["variability: a slow host's forward passes, longer by", 'pct'],
    'variability.slow_hosts.in_job': ["variability: slow hosts among the job's servers", 'int'], 'variability.slow_hosts.job_hosts': ["variability: the job's servers", 'int'], 'variability.stage_factor.*': ['variability: stage factor $1', 'num'], 'breakdown_ms.*': ['$1', 'ms'], 'stage': ['stage', 'int'],
    'flops_per_iteration.*': ['FLOPs per iteration: $1', 'sci'], 'model.params_billion': ['parameters', 'billion'],
    'model.active_params_billion': ['active parameters', 'billion'], 'model.seq': ['sequence length', 'int'],
    'memory_gbyte.fits': ['memory: fits'], 'memory_gbyte.stage': ['memory: stage', 'int'],
    'memory_gbyte.inflight_microbatches': ['memory: microbatches in flight', 'num'],
    'gpu.compute_efficiency': ['GPU: compute efficiency', 'pct'], 'gpu.peak_tflops': ['GPU: peak', 'tflops'],
    'gpu.hbm_gbyte': ['GPU: HBM capacity', 'gb'], 'gpu.hbm_tbyte_per_s': ['GPU: HBM bandwidth', 'TBps'],
    'volumes.tp_bytes_per_gpu': ['volumes: TP per GPU per iteration', 'gbytes'], 'volumes.pp_bytes_per_gpu': ['volumes: PP per GPU per iteration', 'gbytes'],
    'volumes.dp_bytes_per_gpu': ['volumes: DP per GPU per iteration', 'gbytes'], 'volumes.ep_bytes_per_gpu': ['volumes: EP per GPU per iteration', 'gbytes'],
    'volumes.cp_bytes_per_gpu': ['volumes: CP per GPU per iteration', 'gbytes'], 'volumes.dp_grad_bytes_per_gpu': ['volumes: DP gradients per GPU per iteration', 'gbytes'],
    'placement.dp_bytes': ['placement: DP bytes, all GPUs', 'gbytes'], 'placement.pp_bytes': ['placement: PP bytes, all GPUs', 'gbytes'],
    'flops_per_iteration.model': ['FLOPs per iteration: model', 'sci'], 'flops_per_iteration.hardware': ['FLOPs per iteration: hardware (with recompute)', 'sci'],
    'batch.tokens_per_iteration': ['batch: tokens per iteration', 'int'],
    'cap_gbytes_per_second': ['NIC cap', 'GBps'], 'speedup': ['speed-up', 'num'], 'ideal': ['ideal', 'num'],
    'efficiency': ['efficiency', 'pct'], 'dp': ['DP', 'int'], 'gpus': ['GPUs', 'int'],
    'reliability.goodput': ['with failures: goodput', 'pct2'], 'reliability.mtbi_hours': ['with failures: an interruption every', 'dur'],
    'reliability.days_to_train_with_failures': ['days to train with random failures', 'days'],
    'reliability.checkpoint_interval_minutes': ['with failures: checkpoint every', 'min'],
    'reliability.checkpoint_cost_minutes': ['with failures: checkpoint cost', 'min'],
    'reliability.restart_cost_minutes': ['with failures: restart cost', 'min'],
    // reliability
    'mtbi_hours': ['mean time between interruptions (MTBI)', 'dur'], 'expected_interruptions': ['expected interruptions', 'count'],
    'interruption_probability': ['P(at least one interruption)', 'pct2'], 'interruption_rate_per_hour': ['interruptions', 'perh'],
    'days_to_train_with_failures': ['training window with random failures', 'days'], 'duration_days': ['window', 'days'],
    'training_days': ['training (failure-free)', 'days'], 'absorbed.expected_failures': ['absorbed failures', 'count'],
    'absorbed.stall_seconds': ['absorbed failures: stalling the job in total', 's'],
    'monte_carlo.ci95_low': ['Monte Carlo: P(interruption), 95% CI low', 'pct2'],
    'monte_carlo.ci95_high': ['Monte Carlo: P(interruption), 95% CI high', 'pct2'],
    'monte_carlo.expected_interruptions_ci95_low': ['Monte Carlo: expected interruptions, 95% CI low', 'count'],
    'monte_carlo.expected_interruptions_ci95_high': ['Monte Carlo: expected interruptions, 95% CI high', 'count'],
    'monte_carlo.goodput_ci95_low': ['Monte Carlo: goodput, 95% CI low', 'pct2'],
    'monte_carlo.goodput_ci95_high': ['Monte Carlo: goodput, 95% CI high', 'pct2'],
    'monte_carlo.expected_interruptions': ['Monte Carlo: expected interruptions', 'count'],
    'monte_carlo.absorbed_failures': ['Monte Carlo: absorbed failures', 'count'],
    'checkpoint.interval_minutes': ['checkpoint every (Daly)', 'min'], 'checkpoint.young_interval_minutes': ["Young's first-order interval", 'min'],
    'checkpoint.goodput': ['goodput (useful / wall time)', 'pct2'],
    'checkpoint.storage.write_minutes': ['checkpoint write (storage network)', 'min'], 'checkpoint.storage.read_minutes': ['checkpoint read (storage network)', 'min'],
    'checkpoint.storage.bytes': ['checkpoint size', 'bytes'], 'checkpoint.storage.overhead_seconds': ['checkpoint overhead per save or load', 's'],
    'checkpoint.storage.write_bound': ['checkpoint write bound by'], 'checkpoint.storage.read_bound': ['checkpoint read bound by'],
    'checkpoint.storage.frontend_gbyte_per_s': ['frontend NICs, all servers', 'GBps'], 'checkpoint.storage.storage_write_gbyte_per_s': ['storage write, all servers', 'GBps'],
    'checkpoint.storage.storage_read_gbyte_per_s': ['storage read, all servers', 'GBps'], 'checkpoint.goodput_young': ["goodput at Young's interval", 'pct2'],
    'label': ['component'], 'count': ['in job', 'int'], 'mtbf_hours': ['MTBF', 'h'], 'interrupts': ['interrupts?'],
    'share': ['share', 'pct1'], 'expected_failures': ['failures', 'count'], 'recovery_seconds': ['recovery', 's'],
    'rate_per_hour': ['rate', 'perh'],
    // diagnose
    'background_loss_per_link': ['background loss per link crossing', 'pct'], 'lost': ['probes lost', 'int'], 'sent': ['probes sent', 'int'],
    'time_to_localize_seconds': ['time to localize the loss', 's'], 'loss_probability': ['loss', 'pct'],
    'lost_probes': ['lost probes', 'num1'], 'confidence': ['confidence', 'num4'], 'hidden_fault': ['hidden fault?'],
    'component': ['suspect'], 'rtt_added_seconds': ['RTT added', 's'], 'slow_tuples': ['slow tuples', 'int'],
    'probing.overhead_share_of_nic_capacity_max': ['probing: overhead, busiest NIC (share of its link)', 'pct'],
    'probing.probes_per_second_per_nic': ['probing: probes per second per NIC', 'int'],
    'probing.overhead_bytes_per_second_per_nic': ['probing: overhead per NIC', 'Bps'],
    'probing.overhead_bytes_per_second_max_nic': ['probing: overhead, busiest NIC', 'Bps'],
    'score.precision': ['loss: precision', 'num3'], 'score.recall': ['loss: recall', 'num3'],
    'latency.score.precision': ['latency: precision', 'num3'], 'latency.score.recall': ['latency: recall', 'num3'],
    // a degrade on both directions of a link is two hidden faults here, one per direction
    'latency.score.true_positives': ['latency: true positives (link directions)', 'int'],
    'latency.score.false_positives': ['latency: false positives (link directions)', 'int'],
    'latency.score.false_negatives': ['latency: false negatives (link directions)', 'int'],
    'evaluation.precision': ['precision', 'num4'], 'evaluation.recall': ['recall', 'num4'],
    // inference
    'utilization.busy': ['replicas busy', 'pct'], 'utilization.network_share': ['communication share of the busy time', 'pct'],
    'utilization.mean_decode_batch': ['mean decode batch', 'num1'],
    'single_request.ttft_network_ms': ['one request alone: time to first token, communication', 'ms'],
    'single_request.tpot_network_ms': ['one request alone: time per output token, communication', 'ms'],
    'single_request.ttft_ms': ['one request alone: time to first token', 'ms'], 'single_request.tpot_ms': ['one request alone: time per output token', 'ms'],
    'shared_links.gbyte_per_job': ['shared links: per job', 'gb3'], 'shared_links.total_gbyte': ['shared links: total', 'gb3'],
    'jobs.interference_ratio': ['jobs: interference (together / alone)', 'times'], 'jobs.network_gbyte': ['jobs: network', 'gb1'], 'jobs.shared_gbyte': ['jobs: on shared links', 'gb1'], 'utilization.max_batch': ['decode batch limit (inference.max_batch)', 'int'],
    'stream.drawn_rate_per_s': ['arrival rate the seed drew (requests/s)', 'num2'], 'utilization.decode_passes': ['decode passes', 'int'],
    'utilization.prefill_passes': ['prefill passes', 'int'], 'memory.kv_cache_kb_per_token': ['KV cache per token (KB)', 'num1'],
    'memory.weights_gb_per_gpu': ['weights per GPU', 'gb'], 'memory.kv_capacity_tokens_per_replica': ['KV cache per replica (tokens)', 'int'],
    'model.params': ['parameters', 'big'], 'stream.rate_per_s': ['arrival rate (requests/s)', 'num2'],
    'throughput.output_tokens_per_s': ['output tokens/s', 'int'], 'throughput.output_tokens_per_s_per_gpu': ['output tokens/s per GPU', 'num1'],
    'throughput.input_tokens_per_s': ['input tokens/s', 'int'], 'throughput.requests_per_s': ['requests/s', 'num2'],
    'target.rate_per_s': ['highest rate meeting the target (requests/s)', 'num2'], 'target.missed_rate_per_s': ['lowest rate missing it (requests/s)', 'num2'],
    'target.at_rate.rate_per_s': ['at the rate (requests/s)', 'num2'], 'target.at_rate.output_tokens_per_s': ['at the rate: output tokens/s', 'int'],
    'target.at_rate.output_tokens_per_s_per_gpu': ['at the rate: output tokens/s per GPU', 'num1'],
    'target.at_rate.ttft_ms': ['at the rate: time to first token', 'ms'], 'target.at_rate.tpot_ms': ['at the rate: time per output token', 'ms'],
    'target.ttft_ms': ['target: time to first token', 'ms'], 'target.tpot_ms': ['target: time per output token', 'ms'],
    'target.met': ['a rate meets the target'], 'target.missed': ['what the next rate missed', 'missed'], 'target.runs': ['runs of the search', 'int'],
    'target.at_rate.requests': ['at the rate: requests', 'int'], 'stream.arrival_seconds': ['arrivals over', 's'], 'stream.steady': ['a steady state (30 latencies of arrivals)'],
    'target.percentile': ['percentile', 'num'],
    // run
    'run.command': ['study'], 'run.source': ['scenario file'], 'run.overrides': ['--set'], 'run.options': ['options'], 'run.git_sha': ['git commit'],
    'run.podnet_version': ['podnet version'], 'run.seed': ['seed', 'int'], 'schema_version': ['schema version', 'int'],
    // train: with CP the gradient groups are DP x CP ranks (the CLI's "DP x CP (gradients)")
    'groups.dp.count': ['groups: DP x CP (gradients), count', 'int'], 'groups.dp.size': ['groups: DP x CP (gradients), GPUs each', 'int'],
    // plan-upgrade
    'steps_simulated_per_plan': ['steps simulated per plan', 'steps'], 'iterations_simulated': ['iterations simulated', 'int'],
    'extra_hours': ['extra training time', 'hs'], 'window_hours': ['maintenance window', 'dur'],
    'step_time_minutes': ['time per step', 'min'], 'negligible_minutes': ['negligible below', 'min']
  };
  // plan-upgrade's recommended plan and the one of least extra time, labelled as its report words them.
  for (const [key, name] of [['best', 'recommended plan'], ['least_extra', 'least extra time']])
    Object.assign(FIELDS, {
      [key + '.extra_hours']: [name + ': extra training time', 'hs'], [key + '.batch']: [name + ': switches per step', 'int'],
      [key + '.grouping']: [name + ': grouping'], [key + '.steps']: [name + ': steps', 'int'],
      [key + '.simulated_steps']: [name + ': steps simulated', 'int'], [key + '.stopping_steps']: [name + ': steps that stop the job', 'int'],
      [key + '.mean_slowdown']: [name + ': mean slowdown', 'times'], [key + '.worst_slowdown']: [name + ': worst slowdown', 'times'],
      [key + '.window_hours']: [name + ': maintenance window', 'dur']
    });

  const WORDS = {
    gpus: 'GPUs', gpu: 'GPU', nics: 'NICs', nic: 'NIC', tp: 'TP', pp: 'PP', dp: 'DP', ep: 'EP', cp: 'CP', edp: 'EDP',
    mfu: 'MFU', hfu: 'HFU', mtbf: 'MTBF', mtbi: 'MTBI', hbm: 'HBM', pue: 'PUE', nvlink: 'NVLink', rtt: 'RTT', fct: 'FCT',
    nccl: 'NCCL', qps: 'QPs', ci95: '95% CI', bom: 'BOM', flops: 'FLOPs', tflops: 'TFLOP/s', p2p: 'P2P', kv: 'KV',
    ffn: 'FFN', pcie: 'PCIe', pfc: 'PFC', ecmp: 'ECMP', fp8: 'FP8', bf16: 'BF16', usd: 'USD', id: 'ID', mc: 'Monte Carlo',
    seq: 'sequence', pct: '%', vpp: 'VPP', ttft: 'time to first token', tpot: 'time per output token', e2e: 'end to end', oom: 'out of memory'
  };
  // Unit suffixes of keys: [suffix, kind, words added to the label].
  const SUFFIXES = [
    ['_gbyte_per_s', 'GBps'], ['_gbytes_per_second', 'GBps'], ['_tbyte_per_s', 'TBps'], ['_bytes_per_second', 'Bps'],
    ['_usd_per_year', 'usd', ' per year'], ['_usd_per_kwh', 'usd', ' per kWh'], ['_usd', 'usd'], ['_gbps', 'gbps'],
    ['_mwh_per_year', 'mwh', ' per year'], ['_kw', 'kw'], ['_ms', 'ms'], ['_us', 'us'], ['_seconds', 's'],
    ['_minutes', 'min'], ['_hours', 'h'], ['_days', 'days'], ['_gbyte', 'gb'], ['_billion', 'billion'],
    ['_fraction', 'pct'], ['_per_hour', 'perh'], ['_bytes_per_gpu', 'bytes', ' per GPU'], ['_bytes', 'bytes'],
    ['_tflops', 'tflops'], ['_hops', 'hops']
  ];
  const FRACTION = /(^|_)(mfu|hfu|efficiency|utilization|share|goodput|probability)$/;

  function words(k) {
    return k.split('_').map(w => WORDS[w] !== undefined ? WORDS[w] : w).join(' ').replace(/\s+/g, ' ').trim();
  }
  // One key's label and kind from its suffix.
  function keyDescribe(k) {
    for (const [suf, kind, tail] of SUFFIXES)
      if (k.length > suf.length && k.endsWith(suf)) return { label: words(k.slice(0, -suf.length)) + (tail || ''), kind };
    if (k === 'bytes') return { label: 'bytes', kind: 'bytes' };
    if (/(^|_)slowdown$/.test(k)) return { label: words(k), kind: 'times' };  // as plan-upgrade prints it: 1.000x
    if (FRACTION.test(k)) return { label: words(k), kind: 'pct' };
    return { label: words(k), kind: null };
  }
  function lookup(path) {
    if (Object.prototype.hasOwnProperty.call(FIELDS, path)) return { label: FIELDS[path][0], kind: FIELDS[path][1] || null };
    const parts = path.split('.');
    for (const [pat, v] of Object.entries(FIELDS)) {
      const p = pat.split('.');
      if (p.length !== parts.length) continue;
      let star = null, ok = true;
      for (let i = 0; i < p.length && ok; ++i) {
        if (p[i] === '*') star = parts[i];
        else ok = p[i] === parts[i];
      }
      if (ok) {
        const k = star === null ? null : keyDescribe(star);
        return { label: v[0].replace('$1', k ? k.label : ''), kind: v[1] || (k ? k.kind : null) };
      }
    }
    return null;
  }
  const described = new Map();
  // {label, kind} of a dotted result path: FIELDS first, then the last key alone (a row's column), then the
  // keys' own words with the units of their suffixes (a parent's unit, breakdown_ms, holds for its children).
  function describe(path) {
    if (described.has(path)) return described.get(path);
    let d = lookup(path);
    if (!d) {
      const parts = path.split('.');
      let kind = null;
      const labels = parts.map(k => {
        const x = keyDescribe(k);
        if (x.kind) kind = x.kind;
        return x.label;
      });
      d = { label: labels.filter(x => x).join(': '), kind };
    }
    described.set(path, d);
    return d;
  }
  // A value as text; withUnit false leaves the unit to a column header.
  // An object's leaves as "label value" pairs (a row's object cell, a list's object).
  function describedObject(o) { return leaves(o, '', []).map(([k, x]) => describe(k).label + ' ' + show(k, x)).join(', '); }
  function show(path, v, withUnit = true) {
    if (v === null || v === undefined) return '-';
    if (typeof v === 'boolean') return v ? 'yes' : 'no';
    // An object in a list (a plan's steps) as its labelled figures, not as JSON.
    if (Array.isArray(v)) return v.length ? v.map(x => typeof x === 'object' && x !== null ? describedObject(x) : show(path, x, withUnit)).join(typeof v[0] === 'object' ? '; ' : path.endsWith('tiers') ? ' / ' : ', ') : '-';
    if (typeof v !== 'number') {
      const k = KINDS[describe(path).kind];
      return k && k.s ? k.s(v) : String(v);
    }
    const k = KINDS[describe(path).kind || 'num'];
    return k.f(v) + (withUnit && k.unit ? (k.unit === '%' ? '' : ' ') + k.unit : '');
  }
  // A column of rows under prefix: the full path's entry, else the column's own (hottest_links.link -> "link").
  function colDescribe(prefix, c) {
    return lookup(prefix + c) || lookup(c) || describe(prefix + c);
  }
  function header(path, d) {
    d = d || describe(path);
    const k = KINDS[d.kind || 'num'];
    return d.label + (k.unit ? ' (' + k.unit + ')' : '');
  }
  // Numbers without a path (chart tooltips): plain.
  const fmt = v => typeof v === 'number' ? plain(v) : v === null || v === undefined ? '-' : String(v);

  // ---- tables ----

  function section(parent, title, id) {
    const s = el('section', id ? { id: id } : {}, [el('h2', { text: title })]);
    parent.appendChild(s);
    return s;
  }

  // The scalar leaves of an object as [path, value] (arrays of scalars kept whole).
  function leaves(obj, prefix, out) {
    for (const k of Object.keys(obj)) {
      const v = obj[k], key = prefix + k;
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) leaves(v, key + '.', out);
      else if (!Array.isArray(v) || !v.some(x => x !== null && typeof x === 'object')) out.push([key, v]);
    }
    return out;
  }

  // Rows "label | value" for [path, value] entries; cells keep the path in data-key and the raw value in data-value.
  function kvTable(entries, cls) {
    const t = el('table', { class: 'kv ' + (cls || '') });
    for (const [k, v] of entries) {
      t.appendChild(el('tr', {}, [el('th', { text: describe(k).label }),
        el('td', { class: typeof v === 'number' ? 'num' : '', 'data-key': k, 'data-value': JSON.stringify(v === undefined ? null : v), text: show(k, v) })]));
    }
    return t;
  }
  function keyValueTable(obj, prefix, cls) { return kvTable(leaves(obj, prefix, []), cls); }

  // Rows of objects; columns by key (labels and units from FIELDS via prefix + key).
  function rowsTable(rows, columns, cls, prefix) {
    const t = el('table', { class: 'rows ' + (cls || '') });
    const ds = columns.map(c => colDescribe(prefix || '', c));
    t.appendChild(el('tr', {}, columns.map((c, i) => el('th', { text: header(c, ds[i]) }))));
    for (const r of rows) {
      t.appendChild(el('tr', {}, columns.map((c, i) => {
        const v = r[c] === undefined ? null : r[c];
        const kind = KINDS[ds[i].kind || 'num'];
        return el('td', {
          class: typeof v === 'number' ? 'num' : '', 'data-col': c, 'data-value': JSON.stringify(v),
          text: v !== null && typeof v === 'object' && !Array.isArray(v) ? describedObject(v)
            : typeof v === 'number' ? kind.f(v) : show((prefix || '') + c, v, false)
        });
      })));
    }
    return t;
  }

  // A table of plain text rows (CLI-style summaries): [[label, text, key?, raw?], ...].
  function textTable(rows, head, cls) {
    const t = el('table', { class: 'kv ' + (cls || '') });
    if (head) t.appendChild(el('tr', {}, head.map(h => el('th', { text: h }))));
    for (const r of rows) {
      const cells = [el('th', { text: r[0] })];
      for (let i = 1; i < r.length; ++i) {
        const c = r[i];
        if (c && typeof c === 'object') cells.push(el('td', { class: 'num', 'data-key': c.key, 'data-value': JSON.stringify(c.value), text: c.text }));
        else cells.push(el('td', { class: 'num', text: c === undefined ? '' : c }));
      }
      t.appendChild(el('tr', {}, cells));
    }
    return t;
  }
  // A cell of textTable showing the document's value at path.
  function cell(doc, path, text) {
    let v = doc;
    for (const k of path.split('.')) v = v === null || v === undefined ? undefined : v[k];
    return { key: path, value: v === undefined ? null : v, text: text !== undefined ? text : show(path, v) };
  }

  function notes(parent, list) {
    if (list && list.length) parent.appendChild(el('ul', { class: 'notes' }, list.map(n => el('li', { text: n }))));
  }

  // ---- charts ----

  const AXIS_NAME = { nameLocation: 'middle', nameTextStyle: { fontSize: 12, color: '#445' } };
  function chart(parent, cls) {
    const div = el('div', { class: 'chart ' + (cls || '') });
    parent.appendChild(div);
    const c = window.echarts.init(div, null, { renderer: 'canvas' });
    window.addEventListener('resize', () => c.resize());
    return c;
  }

  // The aggregated fabric (report::fabric_drawing); `suspects` (report::suspects_on_drawing) are drawn
  // red: their marks enlarged with a red border, their edges red and thick. Labels never overprint:
  // ECharts hides a label that would overlap another (labelLayout.hideOverlap); with suspects a mark
  // holding one is labelled with the suspects' numbers in the table (#1, #2), short enough to fit.
  function drawFabric(parent, drawing, suspects) {
    parent.appendChild(el('p', { class: 'muted', text: 'Drawn by tier, one mark per ' + drawing.granularity +
      ' (mark size grows with the devices in it; edge width with the links between two marks). Scroll to zoom, drag to pan.' }));
    const levels = drawing.level_names.map(words);  // tier names as words: super_spine -> super spine
    const hitMark = new Map(), hitEdge = new Map(), number = new Map();
    (suspects || []).forEach((s, i) => {
      for (const m of s.marks) {
        hitMark.set(m, (hitMark.get(m) || []).concat([s.component]));
        number.set(m, (number.get(m) || []).concat([i + 1]));
      }
      if (s.edge) { const k = s.edge[0] + '-' + s.edge[1]; hitEdge.set(k, (hitEdge.get(k) || []).concat([s.component])); }
    });
    const labelAll = !suspects && drawing.nodes.length <= 40;
    const c = chart(parent, 'fabric');
    c.setOption({
      animation: false,
      tooltip: {
        formatter: p => {
          const sus = p.data.suspects ? p.data.suspects.map(x => '<br>suspect: ' + esc(x)).join('') : '';
          return (p.dataType === 'edge'
            ? fmt(p.data.links) + ' links, ' + fmt(p.data.gbps) + ' Gbps per direction'
            : esc(p.data.name) + ': ' + fmt(p.data.count) + (p.data.level === 0 ? ' servers, ' + fmt(p.data.gpus) + ' GPUs' : ' switches')) + sus;
        }
      },
      legend: { data: levels, top: 4 },
      series: [{
        type: 'graph', layout: 'none', roam: true, large: true, top: 50, bottom: 30, left: 40, right: 140,
        categories: levels.map(n => ({ name: n })),
        label: { show: labelAll, position: 'right', fontSize: 10 },
        labelLayout: { hideOverlap: true },
        data: drawing.nodes.map(n => {
          const d = {
            id: String(n.id), name: words(n.name), x: n.x, y: n.y, category: n.level, level: n.level, count: n.count, gpus: n.gpus,
            symbolSize: Math.max(6, Math.min(40, 4 * Math.sqrt(n.count)))
          };
          if (hitMark.has(n.id)) {
            d.suspects = hitMark.get(n.id);
            d.symbolSize = Math.max(14, d.symbolSize);
            d.itemStyle = { borderColor: '#d00000', borderWidth: 4 };
            d.label = { show: true, position: 'top', distance: 6, fontSize: 12, fontWeight: 'bold', color: '#a00000', backgroundColor: 'rgba(255,255,255,0.9)', padding: [1, 3],
              formatter: number.get(n.id).map(x => '#' + x).join(' ') };
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

  // ---- pages ----

  function renderDesign(root, doc, drawing) {
    const topo = doc.topology || {};
    const bom = doc.bom || {};
    const tiers = (topo.tiers || []).map(words).join(' / ');
    const head = section(root, 'Fabric: ' + show('topology.family', topo.family) + ', ' + show('bom.gpus', bom.gpus) + ' GPUs' +
      (tiers ? ' (' + (topo.tiers.length) + ' switch tier' + (topo.tiers.length === 1 ? '' : 's') + ': ' + tiers + ')' : ''), 'fabric');
    if (drawing) drawFabric(head, drawing, null);

    const grid = el('div', { class: 'panels' });
    root.appendChild(grid);
    // Bill of materials in the CLI's order.
    const b = section(grid, 'Bill of materials', 'bom');
    const order = ['gpus', 'servers', 'nics', 'nvlink_domains', 'switches', 'links', 'internal_links', 'cables', 'transceivers', 'power_kw', 'power', 'racks'];
    const all = leaves(bom, 'bom.', []);
    const rank = k => { const i = order.indexOf(k.split('.')[1]); return i < 0 ? order.length : i; };
    const tierRank = k => { const p = k.split('.'); const i = (topo.tiers || []).indexOf(p[2]); return p[2] === 'total' ? 1e3 : i < 0 ? 500 : i; };
    all.sort((x, y) => rank(x[0]) - rank(y[0]) || tierRank(x[0]) - tierRank(y[0]));
    b.appendChild(kvTable(all, 'bom'));

    // Cost: its own panel (docs/reference/cost.md).
    const cost = doc.cost;
    if (cost) {
      const c = section(grid, 'Cost (USD)', 'cost');
      c.appendChild(textTable([
        ['network capex', cell(doc, 'cost.capex_usd')],
        // A part-filled pod's (zone's) layer built whole: the share only a full one would use.
        ...(cost.part_filled || []).map(s => ['  of which spare in ' + words(s.layer) + ' (' + s.present + ')',
          '$' + fixed(s.spare_usd, 0)]),
        ['network capex per GPU', cell(doc, 'cost.capex_per_gpu_usd')],
        ['energy per year (whole cluster, PUE ' + fixed(cost.pue, 2) + ', ' + show('cost.energy_price_usd_per_kwh', cost.energy_price_usd_per_kwh) + '/kWh)',
          cell(doc, 'cost.energy_usd_per_year', show('cost.energy_usd_per_year', cost.energy_usd_per_year) + ' (' + show('cost.energy_mwh_per_year', cost.energy_mwh_per_year) + ')')],
        ['  of which network (switches, optics)', cell(doc, 'cost.network_energy_usd_per_year')]
      ], null, 'cost-summary'));
      // In the bill's order (switch tiers bottom up, NICs, link classes as built), not the JSON's alphabetical one.
      const billOrder = (cost.items || []).map(it => it.group);
      const orderOf = k => { const i = billOrder.indexOf(k); return i < 0 ? billOrder.length : i; };
      const tiersCost = Object.entries(cost.capex_by_tier_usd || {}).sort((x, y) => orderOf(x[0]) - orderOf(y[0]));
      if (tiersCost.length) {
        c.appendChild(el('h3', { text: 'Capex by tier' }));
        const cc = chart(c, 'capex');
        cc.getDom().style.height = (60 + 26 * tiersCost.length) + 'px';
        cc.resize();
        cc.setOption({
          animation: false,
          tooltip: { trigger: 'item', formatter: p => esc(p.name) + ': ' + show('cost.capex_usd', p.value) },
          grid: { left: 10, right: 90, top: 10, bottom: 10, containLabel: true },
          xAxis: { type: 'value', splitNumber: 4, axisLabel: { formatter: v => '$' + (v >= 1e9 ? plain(v / 1e9) + 'B' : v >= 1e6 ? plain(v / 1e6) + 'M' : plain(v)), hideOverlap: true } },
          yAxis: { type: 'category', inverse: true, data: tiersCost.map(([k]) => k === 'server' ? 'server NICs' : words(k)) },
          series: [{ type: 'bar', data: tiersCost.map(([, v]) => v), label: { show: true, position: 'right', formatter: p => '$' + bigText(p.value) } }]
        });
      }
      if (cost.items && cost.items.length) {
        c.appendChild(el('h3', { text: 'Parts' }));
        const t = el('table', { class: 'rows cost-items' });
        t.appendChild(el('tr', {}, ['part', 'count', 'unit', 'total'].map(h => el('th', { text: h }))));
        for (const it of cost.items)
          t.appendChild(el('tr', {}, [
            el('td', { text: it.label || (words(it.group) + ': ' + words(it.part) + ' ' + portLabel(it.speed_gbps)) }),
            el('td', { class: 'num', 'data-value': JSON.stringify(it.count), text: fixed(it.count, 0) + (it.part === 'fibre_m' ? ' m' : '') }),
            el('td', { class: 'num', 'data-value': JSON.stringify(it.unit_usd), text: (Math.abs(it.unit_usd - Math.round(it.unit_usd)) < 0.005 ? '$' + fixed(it.unit_usd, 0) : '$' + fixed(it.unit_usd, 2)) + (it.part === 'fibre_m' ? '/m' : '') }),  // as design's unit prices: $2/m, $1,500, $0.45
            el('td', { class: 'num', 'data-value': JSON.stringify(it.total_usd), text: show('cost.capex_usd', it.total_usd) })]));
        c.appendChild(t);
      }
    }

    const f = section(grid, 'Fabric figures', 'limits');
    const facts = [];
    for (const k of ['bisection_bandwidth_gbps', 'injection_bandwidth_per_gpu_gbps', 'diameter_hops']) if (k in doc) facts.push([k, doc[k]]);
    for (const [k, v] of Object.entries(doc.oversubscription || {})) facts.push(['oversubscription.' + k, v]);
    if ('bisection_oversubscription' in doc) facts.push(['bisection_oversubscription', doc.bisection_oversubscription]);
    if (doc.limits) facts.push(['limits.max_gpus', doc.limits.max_gpus]);
    for (const [k, v] of Object.entries(topo)) if (k !== 'family' && k !== 'tiers') facts.push(['topology.' + k, v]);
    described.set('diameter_hops', { label: topo.family === 'torus' ? 'diameter (chip-to-chip hops)' : 'diameter (links between switches)', kind: 'int' });
    f.appendChild(kvTable(facts, 'facts'));
    const lim = [];
    if (doc.limits && doc.limits.max_gpus_reason) lim.push('limit: ' + doc.limits.max_gpus_reason);
    if (doc.bisection_method) lim.push('bisection: ' + doc.bisection_method);
    notes(f, lim.concat((doc.notes || []).map(n => 'note: ' + n)));
  }

  // What tells one bench result from another in a legend.
  function benchLabel(doc, prefix) {
    const b = doc.bench || {};
    return (prefix ? prefix + ' ' : '') + fmt(doc.run && doc.run.scenario) + ' ' + fmt(b.op) + ' ' + fmt(b.algorithm) + ', ' +
      fmt(b.engine) + ', ' + fmt(b.routing) + (b.gpus ? ', ' + fixed(b.gpus, 0) + ' GPUs' : '');
  }

  // bench: busbw (and algbw) against size, with `overlays` [{label, document}] as more busbw series;
  // the rows; the hottest links; utilization per link class and size as a heatmap.
  // Flow completion times as CDFs: one line per series [{name, cdf}] (cdf: 101 points, the time by which
  // 0..100 % of the flows had finished).
  // A series' colour from its name, so that a transport keeps its colour from one report to the next.
  const PALETTE = ['#5470c6', '#91cc75', '#fac858', '#ee6666', '#73c0de', '#3ba272', '#fc8452', '#9a60b4', '#ea7ccc'];
  function colourOf(name) {
    let h = 0;
    for (const ch of String(name)) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
    return PALETTE[h % PALETTE.length];
  }
  function fctChart(parent, series, cls) {
    const c = chart(parent, cls);
    // Times spread over more than a factor of 20 (a transport that stalls beside one that does not): a log axis.
    const all = series.flatMap(x => x.cdf).filter(v => v > 0);
    const wide = all.length && Math.max(...all) / Math.min(...all) > 20;
    // Enough decimals that neighbouring ticks differ: times 467.1 to 467.9 us read 467.2, 467.4, not 467 five times.
    const span = all.length ? Math.max(...all) - Math.min(...all) : 0;
    const tickDecimals = v => wide ? (v < 10 ? 1 : 0) : Math.min(3, Math.max(v < 10 ? 1 : 0, span > 0 ? Math.ceil(-Math.log10(span / 5)) : 0));
    c.setOption({
      animation: false,
      tooltip: { trigger: 'item', formatter: p => p.seriesName + ': ' + fixed(p.value[1], 0) + '% of the flows by ' + fixed(p.value[0], 2) + ' us' },
      legend: { data: series.map(x => x.name), type: 'scroll', top: 4 },
      grid: { left: 80, right: 40, top: 50, bottom: 60 },
      xAxis: { type: wide ? 'log' : 'value', scale: true, name: 'flow completion time (us' + (wide ? ', log scale)' : ')'), ...AXIS_NAME, nameGap: 32,
        axisLabel: { formatter: v => fixed(v, tickDecimals(v)), hideOverlap: true } },
      yAxis: { type: 'value', min: 0, max: 100, name: 'flows finished (%)', ...AXIS_NAME, nameGap: 45 },
      series: series.map(x => ({ name: x.name, type: 'line', step: 'end', showSymbol: false, color: x.colour, data: x.cdf.map((v, q) => [v, q]) }))
    });
    return c;
  }

  // bench --compare-cc (or the bench form's transports): one traffic under several transports; per size, the
  // flows' completion times as CDFs and the table podnet prints.
  function renderTransports(root, doc) {
    const c = doc.compare || {};
    const ts = c.transports || [];
    const s = section(root, ts.length + ' transport' + (ts.length === 1 ? '' : 's') + ' compared on ' + fmt(c.op) + ', ' + show('bench.gpus', c.gpus) + ' GPUs of ' +
      fmt(doc.run && doc.run.scenario) + ' (' + fmt(c.engine) + ' engine)', 'transports');
    s.appendChild(rowsTable(ts.map(t => ({ transport: t.name, cc: t.cc, flow_control: t.link_credits ? 'link credits' : t.pfc ? 'PFC' : 'none (lossy)',
      routing: t.routing, delivery: t.delivery, sets: (t.sets || []).join(', ') })), ['transport', 'cc', 'flow_control', 'routing', 'delivery', 'sets'], 'transports'));
    const rows = doc.rows || [];
    for (const bytes of [...new Set(rows.map(r => r.bytes))]) {
      const at = rows.filter(r => r.bytes === bytes);
      const f = section(root, bytesText(bytes) + ' per ' + fmt(c.per) + ': flow completion times', 'fct-cdf');
      const withCdf = at.filter(r => Array.isArray(r.fct_cdf_us));
      if (withCdf.length) fctChart(f, withCdf.map(r => ({ name: r.transport, cdf: r.fct_cdf_us, colour: colourOf(r.transport) })), 'fct-cdf');
      // Times in one table, what happened to the packets in another: one table of 15 columns outgrows a page.
      f.appendChild(rowsTable(at, ['transport', 'time_us', 'fct_min_us', 'fct_p50_us', 'fct_p99_us', 'fct_max_us', 'fct_mean_us', 'fairness',
        'goodput_gbit_per_s'], 'compare-rows'));
      f.appendChild(rowsTable(at, ['transport', 'drops', 'trimmed', 'ecn_marks', 'pause_frames', 'paused_max_us', 'retransmissions', 'timeouts', 'lost_packets'],
        'compare-counters'));
    }
    s.appendChild(el('p', { class: 'muted', text: 'FCT: from when a flow may send to its last byte (nearest-rank percentiles); fairness: Jain\'s index of the QPs\' rates ' +
      '(1 = equal shares); total goodput: the payload all QPs delivered together / the simulated time (in bits; bench\'s algbw and busbw are per rank, in GB/s); most paused port: the longest any port spent paused by PFC; ' +
      'counters: every port and QP of that run.' }));
    notes(s, doc.notes);
  }

  function renderBench(root, doc, overlays) {
    if (doc.compare) return renderTransports(root, doc);
    const b = doc.bench || {};
    const algo = b.algorithm === b.op ? '' : ' ' + b.algorithm;
    const s = section(root, fmt(b.op) + algo + ' on ' + show('bench.gpus', b.gpus) + ' GPUs of ' + fmt(doc.run && doc.run.scenario) +
      ' (' + fmt(b.engine) + ' engine, ' + fmt(b.routing) + ' routing, ' + channelsText(b.channels, doc.rows || []) +
      (b.qps === 1 || b.qps === undefined ? '' : ', ' + countOf(b.qps, 'queue pair', 'queue pairs') + ' per connection') +
      (doc.ring ? ', ' + fmt(b.ring_order) + ' ring order' : '') + ')', 'busbw');
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
      tooltip: { trigger: 'axis', valueFormatter: v => fixed(v, 2) + ' GB/s', axisPointer: { label: { formatter: p => bytesText(p.value) } } },
      legend: { data: series.map(x => x.name), type: 'scroll', top: 4 },
      grid: { left: 80, right: 40, top: 50, bottom: 60 },
      xAxis: { type: 'log', logBase: 2, name: 'message size', ...AXIS_NAME, nameGap: 32, axisLabel: { formatter: v => bytesText(v), hideOverlap: true },
        min: rows.length ? Math.min(...rows.map(r => r.bytes)) : undefined, max: rows.length ? Math.max(...rows.map(r => r.bytes)) : undefined },
      yAxis: { type: 'value', name: 'bandwidth (GB/s)', ...AXIS_NAME, nameGap: 55 },
      series: series
    });
    const lines = ['algbw = size / time; busbw = algbw x ' + fmt(b.bus_factor_formula) + ' (nccl-tests definitions); GB/s = 1e9 bytes/s.'];
    if (overlays && overlays.length) lines.push('busbw = this result; busbw #N = the finished bench results overlaid.');
    if (b.algorithms) lines.push('tuner: algorithms ' + b.algorithms + ', protocols ' + b.protocols + ', ' + b.gpu_arch + " tables (NCCL's cost model); NCCL model: its own time for the chosen algorithm and protocol.");
    for (const l of lines) s.appendChild(el('p', { class: 'muted', text: l }));
    const cols = ['bytes', 'time_us', 'algbw_gbyte_per_s', 'busbw_gbyte_per_s', 'algorithm', 'protocol', 'channels', 'nccl_model_us'];
    for (const k of ['baseline_time_us', 'slowdown']) if (rows.some(r => k in r)) cols.push(k);
    section(root, 'Sizes', 'rows').appendChild(rowsTable(rows, cols, 'bench-rows'));
    if (rows.some(r => r.fct)) {
      const f = section(root, 'Flow completion times (from when a flow may send to its last byte; nearest-rank percentiles)', 'fct');
      const withCdf = rows.filter(r => r.fct && Array.isArray(r.fct.cdf_us));
      if (withCdf.length) fctChart(f, withCdf.map(r => ({ name: bytesText(r.bytes), cdf: r.fct.cdf_us })), 'fct-cdf');
      f.appendChild(rowsTable(rows.filter(r => r.fct).map(r => Object.assign({ size: r.bytes }, r.fct)), ['size', 'flows', 'min_us', 'p50_us', 'p99_us', 'max_us', 'mean_us'], 'fct', 'fct.'));
    }
    if (doc.hottest_links && doc.hottest_links.length) {
      const h = section(root, 'Hottest links at ' + (rows.length ? bytesText(rows[rows.length - 1].bytes) : 'the largest size'), 'hottest');
      h.appendChild(rowsTable(doc.hottest_links, ['link', 'mean_utilization', 'peak_utilization', 'bytes'], 'hottest', 'hottest_links.'));
    }
    const util = doc.link_class_utilization || [];
    if (util.length && rows.length) renderHeatmap(root, util, rows);
    notes(s, doc.notes);
    const setup = section(root, 'Setup', 'setup');
    setup.appendChild(keyValueTable(Object.fromEntries(Object.entries(b).filter(([k]) => k !== 'units')), 'bench.', 'facts'));
    if (doc.ring) setup.appendChild(keyValueTable(doc.ring, 'ring.', 'facts'));
    if (doc.engine_stats) setup.appendChild(keyValueTable(doc.engine_stats, 'engine_stats.', 'facts'));
  }

  // Utilization per link class and size: the mean over the class's directed links that carried bytes
  // (used / total shown), on a fixed 0-100 % scale. Older documents without used_links: over all links.
  function renderHeatmap(root, util, rows) {
    const hasUsed = util.every(u => Array.isArray(u.used_links));
    const h = section(root, 'Link utilization per tier: mean over the links that carried bytes' + (hasUsed ? '' : ' (this document: over all links)'), 'heatmap');
    h.appendChild(el('p', { class: 'muted', text: 'Each cell: the mean utilization (bytes x 8 / (capacity x time)) of the class\'s directed links that carried bytes at that size, ' +
      'and how many did (used / total). Colour scale fixed from 0 to 100 %. Tooltip: the busiest link and the mean over every link.' }));
    const sizes = rows.map(r => bytesText(r.bytes));
    const data = [];
    util.forEach((u, y) => u.mean_utilization.forEach((all, x) => {
      const used = hasUsed ? u.used_links[x] : u.links;
      const v = hasUsed ? u.used_mean_utilization[x] : all;
      // Dark cells (above 55 %) take white text.
      data.push({ value: [x, y, v, used, u.links, u.max_utilization[x], all], label: { color: v > 0.55 ? '#fff' : '#111' } });
    }));
    const hc = chart(h, 'heatmap');
    hc.getDom().style.height = Math.max(220, 110 + 46 * util.length) + 'px';
    hc.resize();
    hc.setOption({
      animation: false,
      tooltip: {
        formatter: p => {
          const d = p.value, u = util[d[1]];
          return esc(u.link_class) + ' at ' + sizes[d[0]] + ': ' + fixed(d[3], 0) + ' of ' + fixed(d[4], 0) + ' directed links carried bytes<br>' +
            'mean over those ' + percentText(d[2]) + '%, busiest ' + percentText(d[5]) + '%, mean over all ' + percentText(d[6]) + '%';
        }
      },
      grid: { left: 10, right: 110, top: 10, bottom: 50, containLabel: true },
      xAxis: { type: 'category', data: sizes, name: 'message size', ...AXIS_NAME, nameGap: 30 },
      yAxis: { type: 'category', data: util.map(u => u.link_class + ' (' + fixed(u.links, 0) + ')') },
      visualMap: {
        min: 0, max: 1, calculable: false, orient: 'vertical', right: 10, top: 'middle', dimension: 2, itemHeight: 120,
        text: ['100 %', '0 %'], inRange: { color: ['#f4f6f8', '#fee391', '#fd8d3c', '#d7301f', '#7f0000'] }
      },
      series: [{
        type: 'heatmap', data: data,
        label: {
          show: sizes.length <= 12, fontSize: 11, lineHeight: 14,
          formatter: p => p.value[3] === 0 ? 'idle' : percentText(p.value[2]) + '%\n' + fixed(p.value[3], 0) + ' / ' + fixed(p.value[4], 0)
        }
      }]
    });
  }

  const PARTS = { compute: 'compute', tp: 'TP (exposed)', pp: 'PP (exposed)', dp: 'DP (exposed)', ep: 'EP (exposed)', cp: 'CP (exposed)', bubble: 'bubble',
    optimizer: 'optimizer step', grad_norm: 'gradient norm', loss: 'loss all-reduce', step_overhead: 'step overhead',
    collective: 'collective (exposed)', p2p: 'P2P (exposed)', idle: 'idle' };
  const partName = k => PARTS[k] || words(k);
  for (const [k, label] of Object.entries(PARTS)) FIELDS['breakdown_ms.' + k] = [label, 'ms'];

  // train: the iteration as the CLI's table, where the critical stage's time goes, the scaling sweep, then details.
  function renderTrain(root, doc) {
    const b = doc.breakdown_ms || {};
    const it = doc.iteration_time_ms;
    const m = doc.model || {}, par = doc.parallelism || {};
    const title = 'Iteration ' + show('iteration_time_ms', it) + ', MFU ' + show('mfu', doc.mfu) + ', ' + show('tokens_per_second', doc.tokens_per_second) + ' tokens/s';
    const s = section(root, title, 'breakdown');
    const gpu = doc.gpu && doc.gpu.name ? ' x ' + doc.gpu.name : '';
    s.appendChild(el('p', { class: 'muted', text: fmt(m.name) + (m.params_billion ? ' (' + show('model.params_billion', m.params_billion) + ' params)' : '') + ' on ' +
      show('gpus', par.gpus) + gpu + ' (' + show('gpus', par.gpus) + ' of ' + show('gpus', par.fabric_gpus) + ' GPUs), ' + fmt(doc.engine) + ' engine' +
      (par.tp ? '; TP' + par.tp + (par.cp > 1 ? ' x CP' + par.cp : '') + ' x PP' + par.pp + ' x DP' + par.dp + (par.ep > 1 ? ' (EP' + par.ep + ')' : '') : '') +
      (doc.batch && doc.batch.global_batch ? ', global batch ' + fixed(doc.batch.global_batch, 0) + ' x seq ' + fixed(m.seq, 0) : '') }));
    const n = doc.network;
    if (n) s.appendChild(el('p', { class: 'muted', text: 'network: ' + n.family + (n.switch_tiers > 0 ? ', ' + n.switch_tiers + ' switch tier' + (n.switch_tiers === 1 ? '' : 's') : '') +
      (n.nics_per_server > 0 ? ', ' + n.nics_per_server + ' x ' + n.nic_speed + ' NIC' + (n.nics_per_server === 1 ? '' : 's') + ' per server, ' + n.transport : ', no NICs') +
      (n.cc ? ' (' + n.cc + ')' : '') }));
    notes(s, doc.notes);
    const order = ['compute', 'tp', 'pp', 'dp', 'ep', 'cp', 'optimizer', 'grad_norm', 'loss', 'step_overhead', 'bubble', 'collective', 'p2p', 'idle'];
    const parts = Object.keys(b).filter(k => b[k] > 0).sort((x, y) => order.indexOf(x) - order.indexOf(y));
    const c = chart(s, 'breakdown');
    c.setOption({
      animation: false,
      tooltip: { trigger: 'item', formatter: p => esc(p.seriesName) + ': ' + fixed(p.value, 2) + ' ms (' + fixed(it > 0 ? 100 * p.value / it : 0, 1) + '%)' },
      legend: { data: parts.map(partName), top: 4 },
      grid: { left: 90, right: 40, top: 44, height: 70 },
      xAxis: { type: 'value', name: 'ms', ...AXIS_NAME, nameGap: 28, axisLabel: { formatter: v => plain(v), hideOverlap: true } },
      yAxis: { type: 'category', data: ['iteration'] },
      series: parts.map(k => ({ name: partName(k), type: 'bar', stack: 'time', data: [b[k]] }))
    });
    const rows = [['iteration time', cell(doc, 'iteration_time_ms')]];
    for (const k of order) {
      if (k in b) rows.push(['  ' + partName(k), cell(doc, 'breakdown_ms.' + k, fixed(b[k], 2) + ' ms (' + fixed(it > 0 ? 100 * b[k] / it : 0, 1) + '%)')]);
      if (k === 'compute' && doc.variability) {
        const added = doc.variability.compute_added_ms;
        rows.push(['    ' + describe('variability.compute_added_ms').label, cell(doc, 'variability.compute_added_ms', fixed(added, 2) + ' ms (' + fixed(it > 0 ? 100 * added / it : 0, 1) + '%)')]);
        // As the CLI: how many of the job's servers are slow hosts, and how much slower their forward passes run.
        const sh = doc.variability.slow_hosts;
        if (sh) rows.push(['    slow hosts', sh.in_job + ' of the job\'s ' + sh.job_hosts.toLocaleString('en-US') + ' servers, forward passes +' + fixed(100 * sh.forward_slowdown, 0) + '%']);
      }
    }
    for (const k of ['mfu', 'mfu_of_fp8_peak', 'hfu', 'tflops_per_gpu', 'tokens_per_second']) if (k in doc) rows.push([describe(k).label, cell(doc, k)]);
    // The whole fabric's capex over this job's tokens/s, as the CLI prints it; a job on part of the fabric also gets its GPUs' share.
    if (doc.cost && doc.cost.network_capex_usd_per_token_per_second !== undefined) {
      const per = doc.cost.network_capex_usd_per_token_per_second, par = doc.parallelism || {};
      let text = '$' + fixed(per, 2) + " (the whole fabric's $" + fixed(Math.round(doc.cost.network_capex_usd), 0);
      if (par.gpus > 0 && par.fabric_gpus > par.gpus)
        text += "; this job's " + fixed(par.gpus, 0) + ' of ' + fixed(par.fabric_gpus, 0) + ' GPUs: $' + fixed(per * par.gpus / par.fabric_gpus, 2);
      rows.push(['network capex per token/s', cell(doc, 'cost.network_capex_usd_per_token_per_second', text + ')')]);
    }
    if (doc.days_to_train !== undefined) rows.push(['days to train', cell(doc, 'days_to_train', doc.days_to_train === null ? '-' :
      daysOpen(doc.days_to_train) +
      bigText(doc.tokens_budget) + ' tokens, failure-free)')]);
    if (doc.reliability && doc.reliability.days_to_train_with_failures !== null && doc.reliability.days_to_train_with_failures !== undefined)
      rows.push(['days to train with random failures', cell(doc, 'reliability.days_to_train_with_failures', daysOpen(doc.reliability.days_to_train_with_failures) +
        'goodput ' + show('reliability.goodput', doc.reliability.goodput) + ', checkpoint every ' + durationText(doc.reliability.checkpoint_interval_minutes / 60) + ')')]);  // as podnet train: in the unit of its other times
    if ('ideal_bubble_fraction' in doc) rows.push([describe('ideal_bubble_fraction').label, cell(doc, 'ideal_bubble_fraction')]);
    const mm = doc.memory_gbyte;
    if (mm) {
      rows.push(['memory per GPU', cell(doc, 'memory_gbyte.total', fixed(mm.total, 1) + ' GB of ' + fixed(mm.hbm, 1) + ' GB (' + fixed(mm.hbm * 1e9 / 1073741824, 0) + ' GiB)' + (mm.fits ? '' : ': DOES NOT FIT') + ' (stage ' + mm.stage + ', the fullest)')]);
      rows.push(['  weights / gradients / optimizer', fixed(mm.weights, 1) + ' / ' + fixed(mm.gradients, 1) + ' / ' + fixed(mm.optimizer, 1) + ' GB']);
      rows.push(['  activations', fixed(mm.activations, 1) + ' GB (' + fixed(mm.activation_per_layer, 3) + ' GB per layer, ' + fixed(mm.inflight_microbatches, 2) + ' microbatches in flight)']);
      rows.push(['  buffers', fixed(mm.buffers, 1) + ' GB']);
    }
    s.appendChild(textTable(rows, null, 'summary'));
    if (doc.stages_ms && doc.stages_ms.length > 1) {
      const st = section(root, 'Per stage (ms; the critical stage is ' + fixed(doc.critical_stage, 0) + ')', 'stages');
      const sl = (doc.parallelism || {}).stage_layers || [];
      const cols = ['stage', 'layers'].concat(Object.keys(doc.stages_ms[0]).filter(k => k !== 'stage' && k !== 'rank')
        .sort((x, y) => order.indexOf(x) - order.indexOf(y)));
      const t = el('table', { class: 'rows stages' });
      t.appendChild(el('tr', {}, cols.map(k => el('th', { text: k === 'layers' ? 'layers' : k === 'stage' ? 'stage' : partName(k).replace(' (exposed)', '') }))));
      for (const r of doc.stages_ms)
        t.appendChild(el('tr', r.stage === doc.critical_stage ? { class: 'critical' } : {}, cols.map(k => k === 'layers'
          ? el('td', { class: 'num', text: sl[r.stage] !== undefined ? String(sl[r.stage]) : '-' })
          : el('td', { class: 'num', 'data-col': k, 'data-value': JSON.stringify(r[k]), text: k === 'stage' ? String(r[k]) + (r[k] === doc.critical_stage ? '*' : '') : fixed(r[k], 2) }))));
      st.appendChild(t);
    }
    if (doc.sweep && doc.sweep.length) renderSweepCurve(root, doc.sweep, doc);
    renderGeneric(root, doc, ['breakdown_ms', 'stages_ms', 'sweep', 'iteration_time_ms', 'mfu', 'hfu', 'tokens_per_second', 'memory_gbyte', 'notes', 'network']);
  }

  // Scaling: parallel efficiency (speed-up / ideal) against GPUs, one line per NIC cap; caps that give the very
  // same efficiencies (a cap that never binds) share one line named after all of them, so no line hides another.
  function renderSweepCurve(root, sweep, doc) {
    const caps = [...new Set(sweep.map(r => r.cap_gbytes_per_second))];
    const capName = c => c > 0 ? fixed(c, 0) + ' GB/s per GPU' : 'as built';
    const byCap = new Map(caps.map(c => [c, sweep.filter(r => r.cap_gbytes_per_second === c)]));
    const groups = [];
    for (const cap of caps) {
      const pts = byCap.get(cap);
      const same = groups.find(g => g.points.length === pts.length &&
        g.points.every((p, i) => p.gpus === pts[i].gpus && Math.abs(p.efficiency - pts[i].efficiency) <= 1e-9));
      if (same) same.caps.push(cap); else groups.push({ caps: [cap], points: pts });
    }
    const w = section(root, 'Scaling (weak: fixed work per replica): parallel efficiency against GPUs, one line per NIC cap', 'sweep');
    w.appendChild(el('p', { class: 'muted', text: 'Efficiency = speed-up / ideal speed-up against the smallest DP (100 % = linear scaling). ' +
      'Caps whose efficiencies are all the same share one line.' }));
    const sc = chart(w, 'sweep');
    const symbols = ['circle', 'rect', 'triangle', 'diamond', 'roundRect', 'emptyCircle'];
    const dashes = ['solid', 'dashed', 'dotted'];
    const series = groups.map((g, i) => ({
      name: g.caps.map(capName).join(' = '), type: 'line', symbol: symbols[i % symbols.length], symbolSize: 9,
      lineStyle: { width: 2.5, type: dashes[i % dashes.length] }, caps: g.caps,
      data: g.points.map(r => [r.gpus, 100 * r.efficiency, r.speedup, r.dp, r.iteration_time_ms])
    }));
    const minEff = Math.min(...sweep.map(r => 100 * r.efficiency));
    const maxEff = Math.max(100, ...sweep.map(r => 100 * r.efficiency));
    // The y range hugs the data (lines 0.1 % apart stay apart), with a round lower bound.
    const span = Math.max(0.5, maxEff - minEff);
    const step = span <= 2 ? 0.5 : span <= 10 ? 1 : span <= 40 ? 5 : 10;
    const yMin = Math.max(0, Math.floor((minEff - 0.15 * span) / step) * step);
    const gpus = sweep.map(r => r.gpus);
    sc.setOption({
      animation: false,
      tooltip: {
        trigger: 'item', formatter: p => esc(p.seriesName) + ': ' + fixed(p.data[0], 0) + ' GPUs (DP ' + fixed(p.data[3], 0) + ')<br>efficiency ' +
          fixed(p.data[1], 1) + '%, speed-up ' + fixed(p.data[2], 2) + ', iteration ' + fixed(p.data[4], 2) + ' ms'
      },
      legend: { data: series.map(x => x.name), top: 4, type: 'scroll' },
      grid: { left: 80, right: 40, top: 50, bottom: 60 },
      xAxis: { type: 'log', logBase: 2, name: 'GPUs', ...AXIS_NAME, nameGap: 32, axisLabel: { formatter: v => fixed(v, 0) }, min: Math.min(...gpus), max: Math.max(...gpus) },
      yAxis: { type: 'value', name: 'parallel efficiency (%)', ...AXIS_NAME, nameGap: 50, min: yMin, max: Math.ceil(maxEff / step) * step,
        axisLabel: { formatter: v => fixed(v, step < 1 ? 1 : 0) } },
      series: series
    });
    const table = rowsTable(sweep.map(r => Object.assign({}, r, { dp_exposed_ms: r.breakdown_ms ? r.breakdown_ms.dp : null })),
      ['cap_gbytes_per_second', 'dp', 'gpus', 'iteration_time_ms', 'tokens_per_second', 'speedup', 'ideal', 'efficiency', 'dp_exposed_ms'], 'sweep-rows', 'sweep.');
    // The CLI's marks and footnotes: a DP that does not fit is a what-if; a cap at or above the NICs changes
    // nothing; an efficiency above 100 % has a reason.
    const unfit = sweep.filter(r => r.fits === false);
    table.querySelectorAll('td[data-col="dp"]').forEach((td, i) => { if (sweep[i] && sweep[i].fits === false) td.textContent += ' *'; });
    w.appendChild(table);
    const foot = [];
    if (unfit.length) {
      const dps = [...new Set(unfit.map(r => r.dp))];
      const need = Math.max(...unfit.map(r => r.memory_gbyte || 0));
      foot.push('* does not fit in the GPU\'s memory (DP ' + dps.join(', ') + ': up to ' + fixed(need, 1) + ' GB per GPU; the fewer the replicas, the ' +
        'less ZeRO shards the optimizer\'s states): a what-if, timed as if it fit; speed-ups against it are not ones a cluster could run');
    }
    const net = (doc && doc.network) || {};
    if (net.nics_per_server > 0) {
      const idle = sweep.map(r => r.cap_gbytes_per_second).filter(c => c >= net.nic_gbyte_per_s * (1 - 1e-9));
      if (idle.length)
        foot.push('a NIC cap of ' + fixed(Math.min(...idle), 0) + ' GB/s or more changes nothing: the NICs run at ' + fmt(net.nic_speed) + ' (' +
          Number(net.nic_gbyte_per_s.toFixed(4)) + ' GB/s) as built, and a cap only lowers that; for faster NICs set server.nic_speed and switch.port_speed');
    }
    for (const n of foot) w.appendChild(el('p', { class: 'muted sweep-note', text: n }));
  }

  // diagnose: the suspects on the fabric, the suspects as the CLI's table, the probing, then details.
  function renderDiagnose(root, doc, drawing, suspects) {
    const probing = doc.probing || {};
    if (!suspects) {
      suspects = (doc.suspects || []).map(x => ({ component: x.component, kind: x.kind, finding: 'loss', value: x.loss_probability, hidden_fault: x.hidden_fault,
        alike: x.indistinguishable_from, alikeNames: x.alike || [], lost: x.lost_probes, confidence: x.confidence }))
        .concat(((doc.latency || {}).suspects || []).map(x => ({ component: x.component, kind: x.kind, finding: 'latency', value: x.rtt_added_seconds * 1e6, hidden_fault: x.hidden_fault,
          alike: x.indistinguishable_from, alikeNames: x.alike || [] })));
      for (const x of suspects) if (x.hidden_fault === undefined) delete x.hidden_fault;
    }
    // Suspects given with their drawing (the server's, an HTML report's) take the table's figures from the document.
    const loss = new Map((doc.suspects || []).map(x => [x.component, x]));
    const slow = new Map(((doc.latency || {}).suspects || []).map(x => [x.component, x]));
    for (const x of suspects || []) {
      const d = (x.finding === 'latency' ? slow : loss).get(x.component);
      if (!d) continue;
      if (x.alike === undefined) x.alike = d.indistinguishable_from;
      if (x.alikeNames === undefined) x.alikeNames = d.alike || [];
      if (x.finding !== 'latency' && x.lost === undefined) Object.assign(x, { lost: d.lost_probes, confidence: d.confidence });
    }
    const s = section(root, 'Suspects on the fabric: ' + fixed((suspects || []).length, 0) + ' (' + fixed((doc.hidden_faults || []).length, 0) +
      ' hidden faults in the scenario; ' + fmt(probing.mesh) + ' mesh, ' + secondsText(probing.duration_seconds || 0) + ' of probing)', 'fabric');
    if (drawing) drawFabric(s, drawing, suspects || []);
    if (suspects && suspects.length) {
      const t = el('table', { class: 'rows suspects' });
      const scored = suspects.some(x => 'hidden_fault' in x);
      const counted = suspects.some(x => x.lost !== undefined);
      t.appendChild(el('tr', {}, ['#', 'suspect', 'kind', 'finding', 'loss / RTT added'].concat(counted ? ['lost probes', 'confidence'] : [], scored ? ['hidden fault?'] : []).map(h => el('th', { text: h }))));
      let roundTrip = false;
      const loss = v => v === 0 ? '0%' : v < 1e-3 ? Number((100 * v).toPrecision(2)) + '%' : fixed(100 * v, 2) + '%';
      for (const [i, x] of suspects.entries()) {
        // As podnet diagnose prints them: a loss at 2 decimals (2 significant digits under 0.1 %), a link whose two
        // directions no probe tells apart with its round-trip loss, and the components no probe tells from this one.
        const both = x.component.includes('(either direction)');
        roundTrip = roundTrip || (both && x.finding === 'loss');
        const v = x.finding === 'latency' ? '+' + secondsText(x.value * 1e-6) + ' RTT' : loss(x.value) + (both ? ' round trip' : '');
        // The look-alikes by name when they are few, as the CLI names them (an operator checks each).
        const named = x.alike > 0 && x.alike <= 3 && (x.alikeNames || []).length === x.alike;
        const name = x.component + (x.alike > 0 && !both ? (named ? ' (or ' + x.alikeNames.join(', ') + ': no probe tells them apart)'
          : ' (or ' + x.alike + ' other' + (x.alike > 1 ? 's' : '') + ' no probe tells apart)') : '');
        const cells = [el('td', { class: 'num', text: '#' + (i + 1) }), el('td', { 'data-col': 'component', 'data-value': JSON.stringify(x.component), text: name }),
          el('td', { 'data-col': 'kind', 'data-value': JSON.stringify(x.kind), text: x.kind }),
          el('td', { 'data-col': 'finding', 'data-value': JSON.stringify(x.finding), text: x.finding }),
          el('td', { class: 'num', 'data-col': 'value', 'data-value': JSON.stringify(x.value), text: v })];
        if (counted)
          cells.push(el('td', { class: 'num', text: x.lost === undefined ? '' : fixed(x.lost, 0) }),
            el('td', { class: 'num', text: x.confidence === undefined ? '' : fixed(x.confidence, 4) }));
        if (scored) cells.push(el('td', { 'data-col': 'hidden_fault', 'data-value': JSON.stringify(x.hidden_fault), text: x.hidden_fault ? 'yes' : 'NO' }));
        t.appendChild(el('tr', {}, cells));
      }
      s.appendChild(t);
      if (roundTrip)
        s.appendChild(el('p', { class: 'muted', text: 'round trip: a probe crosses both directions of that link, so a loss of p each way reads 1 - (1 - p)^2 (1.99% for 1% each way); one faulty direction reads p' }));
      s.appendChild(el('p', { class: 'muted', text: 'Red marks and edges hold a suspect; a mark\'s #N is the suspect\'s number here; hover for names.' }));
    } else if (doc.mode === 'evaluate') {
      s.appendChild(el('p', { id: 'no-suspects', text: 'Evaluation (--evaluate): ' + fmt(doc.evaluation && doc.evaluation.trials) +
        ' trials, each with its own random hidden faults, so there is no one set of suspects to draw; the scores are below.' }));
    } else {
      s.appendChild(el('p', { id: 'no-suspects', text: 'No suspect: no component is lossy or slow at the test level.' }));
    }
    const p = section(root, 'Probing', 'probing');
    const rows = [];
    if (doc.probing) {
      rows.push(['mesh', cell(doc, 'probing.mesh')]);
      rows.push(['endpoints', cell(doc, 'probing.endpoints')]);
      rows.push(['probe tuples (pair x UDP source port)', cell(doc, 'probing.tuples')]);
      rows.push(['link directions covered', cell(doc, 'probing.directed_links_covered', fixed(probing.directed_links_covered, 0) + ' of ' + fixed(probing.directed_links, 0))]);
      rows.push(['probes per second per NIC', cell(doc, 'probing.probes_per_second_per_nic')]);
      rows.push(['probing time', cell(doc, 'probing.duration_seconds', secondsText(probing.duration_seconds) + ' (' + probing.rounds + ' rounds)')]);
      rows.push(['overhead per NIC', cell(doc, 'probing.overhead_bytes_per_second_per_nic')]);
      rows.push(['overhead, busiest NIC', cell(doc, 'probing.overhead_bytes_per_second_max_nic', show('probing.overhead_bytes_per_second_max_nic', probing.overhead_bytes_per_second_max_nic) +
        ' (' + percentText(probing.overhead_share_of_nic_capacity_max) + '% of its link)')]);
    }
    if ('sent' in doc) rows.push(['probes lost', cell(doc, 'lost', fixed(doc.lost, 0) + ' of ' + fixed(doc.sent, 0))]);
    if ('background_loss_per_link' in doc) rows.push([describe('background_loss_per_link').label, cell(doc, 'background_loss_per_link')]);
    // As the CLI: no suspect, no loss to localize (the default run printed 10.0 s beside 0 suspects).
    if ('time_to_localize_seconds' in doc) rows.push(['time to localize the loss', (doc.suspects || []).length ? cell(doc, 'time_to_localize_seconds') : 'no loss to localize']);
    if (doc.score) rows.push(['loss: precision / recall', fixed(doc.score.precision, 3) + ' / ' + fixed(doc.score.recall, 3)]);
    if (doc.latency && doc.latency.score) rows.push(['latency: precision / recall', fixed(doc.latency.score.precision, 3) + ' / ' + fixed(doc.latency.score.recall, 3)]);
    if (doc.evaluation) {
      const e = doc.evaluation;
      rows.push(['evaluation', fixed(e.trials, 0) + ' trials, ' + e.faults_per_trial + ' hidden ' + e.fault_kind + (e.faults_per_trial === 1 ? ' fault' : ' faults') + ' each at ' + percentText(e.loss_probability) + '% loss']);
      if (e.drawn_from_link_directions !== undefined) {
        const links = countOf(e.drawn_from_link_directions, 'link direction', 'link directions');
        const switches = countOf(e.drawn_from_switches, 'switch', 'switches');
        rows.push(['faults drawn from', (e.fault_kind === 'link' ? links : e.fault_kind === 'switch' ? switches : links + ' and ' + switches) + ' the probes cross']);
      }
      rows.push(['precision / recall', fixed(e.precision, 4) + ' / ' + fixed(e.recall, 4)]);
      rows.push(['trials localized exactly', e.trials_localized_exactly + ' of ' + e.trials]);
    }
    p.appendChild(textTable(rows, null, 'probing'));
    if (doc.hidden_faults && doc.hidden_faults.length) {
      p.appendChild(el('h3', { text: 'Hidden faults (the scenario\'s faults:)' }));
      notes(p, doc.hidden_faults);
    }
    if (doc.deadlock_check && doc.deadlock_check.length) {
      p.appendChild(el('h3', { text: 'Deadlock check (cyclic buffer dependencies under PFC)' }));
      notes(p, doc.deadlock_check.map(c => c.cycle.length ? c.when + ': CYCLE of ' + c.cycle.length + ' link directions: ' + c.cycle.join(', ')
        : c.when + ': no cycle (' + fixed(c.destinations, 0) + ' destinations, ' + fixed(c.directed_links, 0) + ' switch-to-switch link directions on their routes)'));
    }
    notes(p, (doc.notes || []).map(n => 'note: ' + n));
    renderGeneric(root, doc, ['suspects', 'hidden_faults', 'deadlock_check', 'notes']);
  }

  // reliability: components ranked by expected interruptions (the top ones, then all on demand), goodput
  // against checkpoint interval with the advice marked, the CLI's summary.
  function renderReliability(root, doc, curve) {
    const comps = Object.entries(doc.by_component || {});
    comps.sort((a, b) => b[1].expected_interruptions - a[1].expected_interruptions || b[1].expected_failures - a[1].expected_failures || a[1].order - b[1].order);
    const days = doc.duration_days;
    const window = fixed(days, Number.isInteger(days) ? 0 : 2) + ' d';
    const s = section(root, countText(doc.expected_interruptions) + ' expected interruptions in ' + window + ' (MTBI ' +
      (doc.mtbi_hours === null ? 'never' : show('mtbi_hours', doc.mtbi_hours)) + ')' + (doc.job ? ', job of ' + fixed(doc.job.gpus, 0) + ' GPUs' : ''), 'interruptions');
    const c = chart(s, 'interruptions');
    c.getDom().style.height = Math.max(200, 90 + 24 * comps.length) + 'px';
    c.resize();
    c.setOption({
      animation: false,
      tooltip: { trigger: 'axis', valueFormatter: v => countText(v) },
      legend: { data: ['interruptions', 'failures'], top: 4 },
      grid: { left: 10, right: 40, top: 40, bottom: 50, containLabel: true },
      xAxis: { type: 'value', name: 'expected in ' + window, ...AXIS_NAME, nameGap: 28 },
      yAxis: { type: 'category', inverse: true, data: comps.map(([k, v]) => v.label || words(k)) },
      series: [
        { name: 'interruptions', type: 'bar', data: comps.map(([k, v]) => v.expected_interruptions) },
        { name: 'failures', type: 'bar', data: comps.map(([k, v]) => v.expected_failures) }
      ]
    });
    // Ranked table: the top components, the rest behind a toggle.
    const kTop = 6;
    const timeout = doc.settings ? doc.settings.collective_timeout_seconds : null;
    const t = el('table', { class: 'rows components' });
    t.appendChild(el('tr', {}, ['#', 'component', 'in job', 'MTBF (h)', 'interrupts?', 'share', 'failures / ' + window, 'interruptions / ' + window].map(h => el('th', { text: h }))));
    comps.forEach(([k, v], i) => {
      let why = v.interrupts ? 'yes' : 'no';
      if (v.recovery_seconds !== null && v.recovery_seconds !== undefined)
        why += v.interrupts ? ': ' + secondsText(v.recovery_seconds) + ' > ' + secondsText(timeout) + ' timeout' : ': ' + secondsText(v.recovery_seconds) + ' stall';
      const tr = el('tr', { 'data-component': k, class: i < kTop ? 'top' : 'more' }, [
        el('td', { class: 'num', text: String(i + 1) }),
        el('td', { 'data-col': 'label', 'data-value': JSON.stringify(v.label), text: v.label || words(k) }),
        el('td', { class: 'num', 'data-col': 'count', 'data-value': JSON.stringify(v.count), text: fixed(v.count, 0) }),
        el('td', { class: 'num', 'data-col': 'mtbf_hours', 'data-value': JSON.stringify(v.mtbf_hours), text: v.mtbf_hours === null ? 'never' : fixed(v.mtbf_hours, 0) }),
        el('td', { text: why }),
        el('td', { class: 'num', 'data-col': 'share', 'data-value': JSON.stringify(v.share), text: v.interrupts ? fixed(100 * v.share, 1) + '%' : '' }),  // one decimal, as podnet reliability's table
        el('td', { class: 'num', 'data-col': 'expected_failures', 'data-value': JSON.stringify(v.expected_failures), text: countText(v.expected_failures) }),
        el('td', { class: 'num', 'data-col': 'expected_interruptions', 'data-value': JSON.stringify(v.expected_interruptions), text: countText(v.expected_interruptions) })]);
      if (i >= kTop) tr.style.display = 'none';
      t.appendChild(tr);
    });
    t.appendChild(el('tr', { class: 'total' }, [el('td'), el('th', { text: 'total (interrupting)' }), el('td'), el('td'), el('td'), el('td'), el('td'),
      el('td', { class: 'num', 'data-key': 'expected_interruptions', 'data-value': JSON.stringify(doc.expected_interruptions), text: countText(doc.expected_interruptions) })]));
    const ranked = section(root, 'Components ranked by expected interruptions', 'components');
    ranked.appendChild(t);
    if (comps.length > kTop) {
      const btn = el('button', { type: 'button', id: 'show-all-components', text: 'Show all ' + comps.length + ' components' });
      let open = false;
      btn.addEventListener('click', () => {
        open = !open;
        for (const tr of t.querySelectorAll('tr.more')) tr.style.display = open ? '' : 'none';
        btn.textContent = open ? 'Show the top ' + kTop : 'Show all ' + comps.length + ' components';
      });
      ranked.appendChild(el('p', {}, [btn]));
    }

    const mc = doc.monte_carlo || {};
    const ci = (v, lo, hi, f) => v === undefined ? '' : f(v) + ' (' + f(lo) + ' - ' + f(hi) + ')';
    const pc = v => percentText(v) + '%';
    const pc2 = v => fixed(100 * v, 2) + '%';  // goodput to two decimals, as the CLI prints it
    const sum = section(root, 'Closed form and Monte Carlo', 'summary');
    const win = fixed(days, Number.isInteger(days) ? 0 : 2);
    sum.appendChild(textTable([
      ['P(at least one interruption in ' + win + ' days)', cell(doc, 'interruption_probability'), ci(mc.interruption_probability, mc.ci95_low, mc.ci95_high, pc2)],
      ['expected interruptions', cell(doc, 'expected_interruptions', countText(doc.expected_interruptions)),
        ci(mc.expected_interruptions, mc.expected_interruptions_ci95_low, mc.expected_interruptions_ci95_high, countText)],
      ['mean time between interruptions (MTBI)', cell(doc, 'mtbi_hours', doc.mtbi_hours === null ? 'never' : show('mtbi_hours', doc.mtbi_hours)), ''],
      ['absorbed failures (routed around / failed over)', cell(doc, 'absorbed.expected_failures'), mc.absorbed_failures === undefined ? '' : countText(mc.absorbed_failures)],
      ['  stalling the job in total', cell(doc, 'absorbed.stall_seconds'), '']
    ], ['', 'closed form', 'Monte Carlo (95% CI)'], 'reliability-summary'));
    const ck = doc.checkpoint || {};
    sum.appendChild(el('h3', { text: 'Checkpoint advice (checkpoint ' + fixed(ck.checkpoint_cost_minutes, 1) + ' min, restart ' + fixed(ck.restart_cost_minutes, 1) + ' min)' }));
    const train = doc.training_days;
    sum.appendChild(textTable([
      ['checkpoint every (Daly)', cell(doc, 'checkpoint.interval_minutes', ck.interval_minutes === null ? 'never' : show('checkpoint.interval_minutes', ck.interval_minutes)), ''],
      ["  Young's first-order interval", cell(doc, 'checkpoint.young_interval_minutes', ck.young_interval_minutes === null ? 'never' : show('checkpoint.young_interval_minutes', ck.young_interval_minutes)), ''],
      ['goodput (useful / wall time)', cell(doc, 'checkpoint.goodput'), ci(mc.goodput, mc.goodput_ci95_low, mc.goodput_ci95_high, pc2)],
      [fixed(train, Number.isInteger(train) ? 0 : 2) + ' days of training take', cell(doc, 'days_to_train_with_failures', doc.days_to_train_with_failures === null ? 'never' : fixed(doc.days_to_train_with_failures, 2) + ' days'),
        mc.days_to_train_with_failures === undefined ? '' : fixed(mc.days_to_train_with_failures, 2) + ' days']
    ], ['', 'closed form', 'Monte Carlo (95% CI)'], 'checkpoint'));
    const nl = [];
    if (mc.trials !== undefined) nl.push('Monte Carlo: ' + fixed(mc.trials, 0) + ' trials (' + fixed(mc.training_trials || 0, 0) + ' for training), seed ' + (doc.run ? doc.run.seed : '-'));
    for (const k of ['skipped', 'training_skipped', 'reduced', 'training_reduced']) if (mc[k]) nl.push('Monte Carlo: ' + mc[k]);
    notes(sum, nl.concat(doc.notes || []));

    if (curve && curve.points.length) {
      const g = section(root, 'Goodput against checkpoint interval (Daly 2006); advised: every ' +
        fixed(curve.optimum[0], 1) + ' min, goodput ' + show('checkpoint.goodput', curve.optimum[1]), 'goodput');
      const gc = chart(g, 'goodput');
      gc.setOption({
        animation: false,
        tooltip: { trigger: 'axis', formatter: ps => 'every ' + fixed(ps[0].data[0], 1) + ' min: goodput ' + percentText(ps[0].data[1]) + '%' },
        grid: { left: 80, right: 40, top: 40, bottom: 60 },
        xAxis: { type: 'log', name: 'minutes between checkpoints (log scale)', ...AXIS_NAME, nameGap: 32, axisLabel: { formatter: v => fixed(v, v < 10 ? 1 : 0) },
          min: curve.points[0][0], max: curve.points[curve.points.length - 1][0] },
        yAxis: { type: 'value', name: 'goodput (%)', ...AXIS_NAME, nameGap: 50, scale: true, axisLabel: { formatter: v => percentText(v) } },
        series: [{
          name: 'goodput', type: 'line', showSymbol: false, data: curve.points,
          markLine: { symbol: 'none', lineStyle: { type: 'dashed', color: '#c0392b' }, label: { formatter: 'advised: ' + fixed(curve.optimum[0], 1) + ' min', position: 'insideStartTop' },
            data: [{ xAxis: curve.optimum[0] }] },
          markPoint: { symbol: 'circle', symbolSize: 9, itemStyle: { color: '#c0392b' }, label: { show: false }, data: [{ name: 'advised', coord: curve.optimum }] }
        }]
      });
    }
    renderGeneric(root, doc, ['by_component', 'monte_carlo', 'checkpoint', 'notes']);
  }

  // Every other figure of the document, labelled, folded away: "All figures".
  // inference: report::inference_document (what `podnet inference --format json` prints).
  function renderInference(root, doc) {
    const m = doc.model || {}, l = doc.layout || {}, lat = doc.latency || {}, th = doc.throughput || {}, u = doc.utilization || {};
    const ms = v => v === null || v === undefined ? '-' : fixed(v, v < 10 ? 2 : 1) + ' ms';
    const p99 = lat.ttft_ms ? lat.ttft_ms.p99 : null;
    const s = section(root, 'Time to first token ' + ms(p99) + ' and per output token ' + ms(lat.tpot_ms ? lat.tpot_ms.p99 : null) +
      ' (p99), ' + fixed(th.output_tokens_per_s || 0, 0) + ' output tokens/s', 'serving');
    const layout = l.disaggregated ? 'TP' + l.tp + ' x PP' + l.pp + ' replicas: ' + l.prefill_replicas + ' prefill, ' + l.decode_replicas + ' decode (disaggregated)'
      : 'TP' + l.tp + ' x PP' + l.pp + ' replicas: ' + l.replicas + ' (prefill and decode on each, ' + (l.scheduler === 'chunked' ? 'chunked prefill beside decode' : 'prefill first') + ')';
    s.appendChild(el('p', { class: 'muted', text: fmt(m.name) + ' (' + fixed((m.params || 0) / 1e9, 1) + 'B params, ' + fmt(m.precision) + ') on ' +
      fixed(l.gpus, 0) + ' x ' + fmt(m.gpu) + ' (' + fixed(l.gpus, 0) + ' of ' + fixed(l.fabric_gpus, 0) + ' GPUs); ' + layout }));
    const st = doc.stream || {};
    const range = r => r ? (r.min === r.max ? fixed(r.min, 0) : fixed(r.min, 0) + '-' + fixed(r.max, 0)) : '-';
    s.appendChild(el('p', { text: fixed(st.requests, 0) + ' requests at ' + fixed(st.rate_per_s, 2) + ' per second (prompt ' + range(st.prompt_tokens) +
      ', output ' + range(st.output_tokens) + ' tokens)' + (st.steady === false ? ': they arrive over ' + fixed(st.arrival_seconds, 1) +
      ' s, under 30 median end-to-end latencies, a burst more than a steady state' : '') }));
    const rows = [];
    const pct = (label, path) => {
      const v = path.split('.').reduce((o, k) => o ? o[k] : undefined, lat);
      if (v) rows.push([label, cell(doc, 'latency.' + path + '.p50', ms(v.p50)), cell(doc, 'latency.' + path + '.p90', ms(v.p90)), cell(doc, 'latency.' + path + '.p99', ms(v.p99))]);
    };
    pct('time to first token', 'ttft_ms');
    pct('time per output token', 'tpot_ms');
    pct('end to end', 'e2e_ms');
    pct('KV cache transfer', 'kv_transfer_ms');
    s.appendChild(textTable(rows, ['latency', 'p50', 'p90', 'p99'], 'latency'));
    const one = doc.single_request || {};
    const facts = [
      ['throughput', cell(doc, 'throughput.output_tokens_per_s', fixed(th.output_tokens_per_s || 0, 0) + ' output tokens/s (' + fixed(th.output_tokens_per_s_per_gpu || 0, 1) + ' per GPU), ' +
        fixed(th.requests_per_s || 0, 2) + ' requests/s')],
      ['replicas busy', cell(doc, 'utilization.busy', fixed(100 * (u.busy || 0), 1) + '% of the time in a pass; mean decode batch ' + fixed(u.mean_decode_batch || 0, 1) +
        (u.max_batch !== undefined ? ' of at most ' + fixed(u.max_batch, 0) : ''))],
      ['communication share', cell(doc, 'utilization.network_share', fixed(100 * (u.network_share || 0), 1) + '% of the busy time')],
      ['one request alone', cell(doc, 'single_request.ttft_ms', 'first token ' + ms(one.ttft_ms) + ' (communication ' + ms(one.ttft_network_ms) + '), then ' +
        ms(one.tpot_ms) + ' per token (communication ' + ms(one.tpot_network_ms) + ')' + (one.kv_transfer_ms !== undefined ? '; KV cache transfer ' + ms(one.kv_transfer_ms) : ''))],
      ['memory', cell(doc, 'memory.weights_gb_per_gpu', fixed(doc.memory.weights_gb_per_gpu, 1) + ' GB of weights per GPU; KV cache (' + fmt(m.kv_precision || 'bf16') + ') ' + fixed(doc.memory.kv_cache_kb_per_token, 1) +
        ' KB per token, ' + fixed(doc.memory.kv_capacity_tokens_per_replica, 0) + ' tokens per replica')]
    ];
    s.appendChild(textTable(facts, null, 'summary'));
    // Where the communication runs, as the CLI says it: NVLink alone, or the fabric too.
    s.appendChild(el('p', { class: 'muted', id: 'where-communication', text: l.fabric_carries_traffic === false
      ? 'communication: TP' + l.tp + ' inside one server, on NVLink; the fabric\'s NICs and switches carry none of this layout\'s traffic, so a NIC or switch what-if changes nothing here'
      : 'communication: NVLink inside a server, the fabric\'s NICs and switches between servers' }));
    const t = doc.target;
    if (t) {
      const p = 'p' + fixed(t.percentile, Number.isInteger(t.percentile) ? 0 : 1);
      const limits = [];
      if (t.ttft_ms !== null) limits.push(p + ' time to first token <= ' + fixed(t.ttft_ms, 0) + ' ms');
      if (t.tpot_ms !== null) limits.push(p + ' time per output token <= ' + fixed(t.tpot_ms, t.tpot_ms < 10 ? 1 : 0) + ' ms');
      const ts = section(root, 'Latency target: ' + limits.join(', '), 'target');
      const missed = { ttft: 'time to first token', tpot: 'time per output token', both: 'both targets', pace: 'the pace: the replicas fall behind the arrivals' };
      const a = t.at_rate || {};
      const rate = v => v >= 1 ? fixed(v, 2) : Number(v).toPrecision(3);
      const trows = t.met ? [
        ['highest rate meeting it', cell(doc, 'target.rate_per_s', rate(t.rate_per_s) + ' requests/s' +
          (t.missed_rate_per_s !== null ? ' (' + rate(t.missed_rate_per_s) + ' requests/s misses ' + missed[t.missed] + ')' : ''))],
        ['throughput at that rate', cell(doc, 'target.at_rate.output_tokens_per_s', fixed(a.output_tokens_per_s, 0) + ' output tokens/s (' + fixed(a.output_tokens_per_s_per_gpu, 1) + ' per GPU)')],
        [p + ' at that rate', cell(doc, 'target.at_rate.ttft_ms', 'time to first token ' + ms(a.ttft_ms) + ', time per output token ' + ms(a.tpot_ms))],
        ['search', cell(doc, 'target.runs', fixed(t.runs, 0) + ' runs; ' + fixed(a.requests, 0) + ' requests at that rate (' + fixed(a.requests / t.rate_per_s, 1) + ' s of arrivals)')]
      ] : [
        ['no rate meets it', cell(doc, 'target.at_rate.rate_per_s', 'at ' + rate(a.rate_per_s) + ' requests/s: ' + p + ' time to first token ' + ms(a.ttft_ms) +
          ', time per output token ' + ms(a.tpot_ms))]
      ];
      ts.appendChild(textTable(trows, null, 'target'));
    }
    notes(s, doc.notes);
    renderGeneric(root, doc);
  }

  function renderGeneric(root, doc, skip) {
    const box = el('details', { class: 'all-figures' });
    const rest = Object.keys(doc).filter(k => k !== 'run' && !(skip || []).includes(k));
    if (!rest.length) return;
    box.appendChild(el('summary', { text: 'All figures of the result' }));
    const scalars = [];
    for (const k of rest) {
      const v = doc[k];
      if (Array.isArray(v)) {
        if (!v.length) continue;
        box.appendChild(el('h3', { text: describe(k).label }));
        if (typeof v[0] === 'object' && v[0] !== null) {
          const cols = [];
          for (const r of v) for (const c of Object.keys(r)) if (!cols.includes(c)) cols.push(c);
          box.appendChild(rowsTable(v, cols, 'doc-' + k, k + '.'));
        } else {
          box.appendChild(el('ul', {}, v.map(x => el('li', { text: show(k, x) }))));
        }
      } else if (v !== null && typeof v === 'object') {
        if (k === 'definitions') {
          box.appendChild(el('h3', { text: 'definitions' }));
          box.appendChild(el('dl', {}, Object.entries(v).flatMap(([t, d]) => [el('dt', { text: words(t) }), el('dd', { text: d })])));
          continue;
        }
        box.appendChild(el('h3', { text: describe(k).label }));
        box.appendChild(keyValueTable(v, k + '.', 'facts doc-' + k));
      } else {
        scalars.push([k, v]);
      }
    }
    if (scalars.length) {
      box.appendChild(el('h3', { text: 'figures' }));
      box.appendChild(kvTable(scalars, 'facts doc-figures'));
    }
    section(root, 'Details', 'details').appendChild(box);
  }

  // compare: report::diff_document (what `podnet diff --format json` prints) of two results.
  // A bench field "busbw_gbyte_per_s@0000000002097152" reads "busbw at 2 MiB".
  function fieldLabel(f) {
    const at = f.indexOf('@');
    if (at > 0) return describe(f.slice(0, at)).label + ' at ' + bytesText(Number(f.slice(at + 1)));
    return describe(f).label;
  }
  function fieldPath(f) { const at = f.indexOf('@'); return at > 0 ? f.slice(0, at) : f; }
  function fieldUnit(f) { const k = KINDS[describe(fieldPath(f)).kind || 'num']; return k.unit || (describe(fieldPath(f)).kind === 'usd' ? 'USD' : ''); }
  function renderCompare(root, d) {
    const head = section(root, 'A = ' + d.a + ', B = ' + d.b, 'compare-head');
    if (d.inputs && d.inputs.length) {
      head.appendChild(el('h3', { text: 'Inputs that differ (' + d.inputs.length + ')' }));
      const t = el('table', { class: 'rows inputs' });
      t.appendChild(el('tr', {}, ['scenario key', 'A', 'B'].map(h => el('th', { text: h }))));
      for (const r of d.inputs)
        t.appendChild(el('tr', {}, [el('td', {}, [el('code', { class: 'key', 'data-col': 'key', 'data-value': JSON.stringify(r.key), text: r.key })]),
          el('td', { 'data-col': 'a', 'data-value': JSON.stringify(r.a), text: fmt(r.a) }), el('td', { 'data-col': 'b', 'data-value': JSON.stringify(r.b), text: fmt(r.b) })]));
      head.appendChild(t);
    } else {
      head.appendChild(el('p', { class: 'muted', text: 'No input compared (a result document carries no resolved scenario) or none differs.' }));
    }
    for (const study of Object.keys(d.studies || {}).sort()) {
      const st = d.studies[study];
      const s = section(root, study + ': ' + countOf(st.changed.length, 'figure', 'figures') + ' changed, ' + st.same + ' the same' +
        (st.only_a.length || st.only_b.length ? ', ' + st.only_a.length + ' only in A, ' + st.only_b.length + ' only in B' : ''), 'study-' + study);
      const at = d.attribution && d.attribution[study];
      if (at) {
        const parts = Object.entries(at.by_breakdown_ms).filter(([k, v]) => Math.abs(v) > 1e-9).map(([k, v]) => partName(k) + ' ' + (v >= 0 ? '+' : '') + fixed(v, 2) + ' ms');
        s.appendChild(el('p', { class: 'attribution', 'data-value': JSON.stringify(at.iteration_time_ms_delta),
          text: 'Iteration time ' + (at.iteration_time_ms_delta >= 0 ? '+' : '') + fixed(at.iteration_time_ms_delta, 2) + ' ms' + (parts.length ? ': ' + parts.join(', ') : '') }));
      }
      // Largest relative changes first (as podnet diff's table), numbers only, at most 25 bars; B / A has no unit,
      // so every bar shares one axis; the table gives A and B in their units.
      const numeric = st.changed.filter(c => c.ratio !== undefined && c.ratio !== null && c.ratio > 0);
      numeric.sort((x, y) => Math.abs(Math.log(y.ratio)) - Math.abs(Math.log(x.ratio)));
      const top = numeric.slice(0, 25);
      if (top.length) {
        s.appendChild(el('p', { class: 'muted', text: 'B / A of the ' + top.length + ' largest relative changes: each bar from 1x (the same), right when B is larger, left when smaller (log scale).' }));
        const c = chart(s, 'ratios');
        c.getDom().style.height = Math.max(180, 90 + 24 * top.length) + 'px';
        c.resize();
        c.setOption({
          animation: false,
          tooltip: { trigger: 'item', formatter: p => { const x = top[p.dataIndex]; return esc(x.label || fieldLabel(x.field)) + ': ' + esc(show(fieldPath(x.field), x.a)) + ' -> ' + esc(show(fieldPath(x.field), x.b)) + ' (B / A ' + fixed(x.ratio, 3) + ')'; } },
          grid: { left: 10, right: 60, top: 10, bottom: 50, containLabel: true },
          // log2 of B / A on a plain axis, so that a bar starts at 1x (a log axis drew every bar from its minimum,
          // 0.1, and 0.83x read as a long bar, not as a small fall).
          xAxis: { type: 'value', name: 'B / A', ...AXIS_NAME, nameGap: 28, axisLabel: { formatter: v => fixed(Math.pow(2, v), 2) + 'x' } },
          yAxis: { type: 'category', inverse: true, data: top.map(x => x.label || fieldLabel(x.field)), axisLabel: { width: 320, overflow: 'truncate' } },
          series: [{ type: 'bar', name: 'B / A', data: top.map(x => ({ value: Math.log2(x.ratio), ratio: x.ratio, label: { position: x.ratio < 1 ? 'left' : 'right' } })),
            label: { show: true, formatter: p => fixed(p.data.ratio, 2) + 'x', fontSize: 10 } }]
        });
      }
      if (st.changed.length) {
        const t = el('table', { class: 'rows changed' });
        t.appendChild(el('tr', {}, ['figure', 'unit', 'A', 'B', 'B - A', 'B / A'].map(h => el('th', { text: h }))));
        // As podnet diff's table: the largest relative changes first, a change without a ratio (from 0) before the
        // rest, text changes last; ties keep the document's order.
        const rel = c => typeof c.ratio === 'number' ? Math.abs(Math.log(Math.max(c.ratio, 1e-300))) : typeof c.delta === 'number' ? 1e300 : -1;
        const ordered = st.changed.map((c, i) => [c, i]).sort((x, y) => rel(y[0]) - rel(x[0]) || x[1] - y[1]).map(x => x[0]);
        for (const c of ordered) {
          const p = fieldPath(c.field), noUnit = v => typeof v === 'number' ? show(p, v, false) : fmt(v);
          t.appendChild(el('tr', {}, [
            el('td', { 'data-col': 'field', 'data-value': JSON.stringify(c.field), text: c.label || fieldLabel(c.field) }),
            el('td', { class: 'muted', text: fieldUnit(c.field) }),
            el('td', { class: 'num', 'data-col': 'a', 'data-value': JSON.stringify(c.a), text: noUnit(c.a) }),
            el('td', { class: 'num', 'data-col': 'b', 'data-value': JSON.stringify(c.b), text: noUnit(c.b) }),
            // B - A as podnet diff prints it: the difference of the values as shown (delta_shown), not of the raw ones.
            el('td', { class: 'num', 'data-col': 'delta', 'data-value': JSON.stringify(c.delta === undefined ? null : c.delta), text: typeof c.delta === 'number'
              ? (() => { const d = typeof c.delta_shown === 'number' ? c.delta_shown : c.delta;
                return (d >= 0 ? '+' : '') + (/^pct/.test(describe(p).kind || '') ? fixed(100 * d, 1) + ' points' : noUnit(d)); })() : '' }),
            el('td', { class: 'num', 'data-col': 'ratio', 'data-value': JSON.stringify(c.ratio === undefined ? null : c.ratio), text: typeof c.ratio === 'number' ? fixed(c.ratio, 3) + 'x' : '' })]));
        }
        s.appendChild(t);
      }
      if (st.only_a.length) s.appendChild(el('p', { class: 'muted', text: 'Only in A: ' + st.only_a.map(fieldLabel).join(', ') }));
      if (st.only_b.length) s.appendChild(el('p', { class: 'muted', text: 'Only in B: ' + st.only_b.map(fieldLabel).join(', ') }));
    }
  }

  // sweep: `podnet sweep --results DB --format json` ({study, axes, points}): the study's headline figures
  // against the first axis (one chart per figure, so one axis per unit; one line per value of the other axes),
  // bench's busbw against size (one line per point), and the points as a table.
  const HEADLINE = {
    train: ['iteration_time_ms', 'mfu', 'tokens_per_second', 'days_to_train'],
    reliability: ['mtbi_hours', 'checkpoint.interval_minutes', 'checkpoint.goodput', 'days_to_train_with_failures'],
    diagnose: ['evaluation.precision', 'evaluation.recall', 'evaluation.time_to_localize_seconds.max', 'probing.overhead_bytes_per_second_per_nic'],
    design: ['bom.switches.total', 'bom.transceivers', 'bom.power_kw', 'cost.capex_usd', 'cost.energy_usd_per_year', 'bisection_bandwidth_gbps', 'limits.max_gpus']
  };
  function renderSweep(root, d) {
    const pts = d.points || [], axes = d.axes || [];
    const ok = pts.filter(p => p.status === 'ok');
    const s = section(root, 'Sweep: ' + d.study + ' study, ' + pts.length + (pts.length === 1 ? ' point, ' : ' points, ') + (pts.length - ok.length) + ' with an error', 'sweep-head');
    s.appendChild(el('p', { class: 'muted' }, ['Axes (scenario keys): '].concat(axes.flatMap((a, i) => (i ? [', '] : []).concat([el('code', { class: 'key', text: a })])))));
    const columns = [];
    for (const p of pts) for (const k of Object.keys(p)) if (!columns.includes(k)) columns.push(k);
    let heads = (HEADLINE[d.study] || []).filter(k => columns.includes(k));
    const label = p => axes.map(a => a + ' = ' + fmt(p[a])).join(', ');
    if (d.study === 'bench') {
      const sizes = columns.filter(c => c.startsWith('busbw_gbyte_per_s@')).map(c => c.slice(c.indexOf('@')));
      sizes.sort((x, y) => Number(x.slice(1)) - Number(y.slice(1)));
      const last = sizes[sizes.length - 1];
      if (last) heads = ['time_us' + last, 'busbw_gbyte_per_s' + last].filter(k => columns.includes(k));
      if (sizes.length) {
        const c = chart(s, 'sweep-busbw');
        c.setOption({
          animation: false,
          tooltip: { trigger: 'item', formatter: p => esc(p.seriesName) + ': ' + bytesText(p.data[0]) + ', busbw ' + fixed(p.data[1], 2) + ' GB/s' },
          legend: { type: 'scroll', top: 4 },
          grid: { left: 80, right: 40, top: 50, bottom: 60 },
          xAxis: { type: 'log', logBase: 2, name: 'message size', ...AXIS_NAME, nameGap: 32, axisLabel: { formatter: v => bytesText(v), hideOverlap: true },
            min: Number(sizes[0].slice(1)), max: Number(last.slice(1)) },
          yAxis: { type: 'value', name: 'busbw (GB/s)', ...AXIS_NAME, nameGap: 55 },
          series: ok.map(p => ({ name: label(p), type: 'line', data: sizes.filter(z => typeof p['busbw_gbyte_per_s' + z] === 'number').map(z => [Number(z.slice(1)), p['busbw_gbyte_per_s' + z]]) }))
        });
      }
    }
    if (axes.length && ok.length) {
      const x = axes[0], rest = axes.slice(1);
      const numeric = ok.every(p => typeof p[x] === 'number');
      const groupName = p => rest.length ? rest.map(a => a + ' = ' + fmt(p[a])).join(', ') : d.study;
      const groups = [...new Set(ok.map(groupName))];
      const xs = [...new Set(ok.map(p => p[x]))];
      const logX = numeric && xs.every(v => v > 0) && Math.max(...xs) / Math.min(...xs) >= 8;
      const grid = el('div', { class: 'panels' });
      s.appendChild(grid);
      for (const h of heads.filter(h => !h.includes('@'))) {
        const box = el('div', {});
        grid.appendChild(box);
        const isPct = String(describe(h).kind).startsWith('pct');  // goodput (pct2) too: 87.05, not 0.8705
        const isUsd = String(describe(h).kind).startsWith('usd');
        box.appendChild(el('h3', { text: header(h) }));
        const c = chart(box, 'sweep-metric');
        const lineOf = g => ok.filter(p => groupName(p) === g && typeof p[h] === 'number').map(p => [numeric ? p[x] : String(p[x]), isPct ? 100 * p[h] : p[h]]);
        // Lines with the same points are drawn one over the other: say so, or one looks missing.
        const same = new Map();
        for (const g of groups) { const k = JSON.stringify(lineOf(g)); same.set(k, (same.get(k) || []).concat([g])); }
        for (const names of same.values())
          if (names.length > 1) box.appendChild(el('p', { class: 'muted coincide', text: names.join(' and ') + ': the same values, one line over the other' }));
        c.setOption({
          animation: false,
          tooltip: { trigger: 'item', formatter: p => esc(p.seriesName) + ': ' + esc(x) + ' = ' + fmt(p.data[0]) + ': ' + esc(show(h, isPct ? p.data[1] / 100 : p.data[1])) },
          legend: { show: groups.length > 1, type: 'scroll', top: 0 },
          grid: { left: 10, right: 30, top: groups.length > 1 ? 36 : 16, bottom: 50, containLabel: true },
          xAxis: numeric ? { type: logX ? 'log' : 'value', logBase: 2, name: x, ...AXIS_NAME, nameGap: 30, scale: true } : { type: 'category', data: xs.map(String), name: x, ...AXIS_NAME, nameGap: 30 },
          // Money on the axis reads as money: $1.2M, not 1,200,000 (the table's header says USD, the chart's did not).
          yAxis: { type: 'value', scale: true, axisLabel: { formatter: v => isUsd ? (v < 0 ? '-$' : '$') + bigText(Math.abs(v)) : plain(v) } },
          series: groups.map(g => ({ name: g, type: 'line', symbolSize: 8, data: lineOf(g) }))
        });
      }
    }
    const t = el('table', { class: 'rows sweep-points' });
    // The CLI table's columns (the GPU count and a layout that changes beside the axes), then the headline figures.
    const before = (d.columns || []).slice(0, Math.max(0, (d.columns || []).indexOf('status')));
    const cols = ['id'].concat(axes, before.filter(c => c !== 'id' && !axes.includes(c)), ['status'], heads);
    t.appendChild(el('tr', {}, cols.map(c => el('th', {}, axes.includes(c) ? [el('code', { class: 'key', text: c })] : [c === 'id' ? 'point' : c.includes('@') ? fieldLabel(c) + (KINDS[describe(fieldPath(c)).kind || 'num'].unit ? ' (' + KINDS[describe(fieldPath(c)).kind].unit + ')' : '') : header(c)]))));
    for (const p of pts)
      t.appendChild(el('tr', {}, cols.map(c => el('td', { class: typeof p[c] === 'number' ? 'num' : '', 'data-col': c, 'data-value': JSON.stringify(p[c] === undefined ? null : p[c]),
        text: axes.includes(c) || c === 'id' || c === 'status' ? fmt(p[c]) : show(fieldPath(c), p[c], false) }))));
    const tb = section(root, 'Points', 'points');
    tb.appendChild(t);
    notes(tb, pts.filter(p => p.error).map(p => 'point ' + p.id + ': ' + p.error));
  }

  function renderRun(root, doc) {
    if (!doc.run) return;
    const r = doc.run;
    const s = section(root, 'Run', 'run');
    s.appendChild(el('p', { class: 'muted run-line', text: 'podnet ' + fmt(r.command) + ' ' + fmt(r.scenario) + ' (' + fmt(r.source) + '), seed ' + fmt(r.seed) +
      (r.overrides && r.overrides.length ? ', --set ' + r.overrides.join(' --set ') : '') +
      // The study's own options (a page's fields), as the command's flags: --min 1MiB --max 16MiB.
      (r.options && Object.keys(r.options).length ? ', ' + Object.entries(r.options).map(([k, v]) => k + ' ' + v).join(' ') : '') +
      (r.podnet_version ? '; podnet ' + r.podnet_version : '') + (r.git_sha ? ' (' + r.git_sha + ')' : '') }));
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
    else if (payload.kind === 'sweep') renderSweep(root, payload.document);
    else if (payload.kind === 'inference') renderInference(root, doc);
    else {
      // plan-upgrade: its plans on one chart, the recommended one marked, before the CLI's report.
      if (Array.isArray(doc.plans) && doc.plans.length && doc.best) drawUpgradePlans(root, doc);
      // A study without a page of its own: the CLI's report, as `podnet <study>` prints it.
      if (payload.report_text) section(root, 'Report', 'report').appendChild(el('pre', { class: 'report-text', text: payload.report_text }));
      renderGeneric(root, doc);
    }
    renderRun(root, doc);
  }

  // plan-upgrade (report::upgrade_document): each plan as a point, its upgrade window against the training time it
  // costs, labelled by its switches per step and grouping; the recommended plan in red. A plan that stops the job
  // at some step is drawn hollow.
  function drawUpgradePlans(root, doc) {
    const s = section(root, 'Recommended: ' + doc.best.batch + ' switch' + (doc.best.batch === 1 ? '' : 'es') + ' per step (' + doc.best.grouping + '), ' +
      doc.best.steps + ' steps, a ' + fixed(doc.best.window_hours, 1) + ' h window, ' + durationText(doc.best.extra_hours) + ' of extra training time', 'upgrade');
    s.appendChild(el('p', { class: 'muted', text: 'Each plan of the ' + doc.switches + ' ' + words(doc.tier) + ' switches: its window (x) and the training time it costs (y). Lower is cheaper, left is shorter; the recommended plan is red.' }));
    const name = p => p.batch + ' per step' + (p.grouping === 'one at a time' ? '' : ', ' + p.grouping);
    const best = p => p.batch === doc.best.batch && p.grouping === doc.best.grouping;
    const c = chart(s, 'upgrade');
    c.setOption({
      animation: false,
      tooltip: { trigger: 'item', formatter: p => { const x = doc.plans[p.dataIndex]; return esc(name(x)) + ': window ' + fixed(x.window_hours, 1) + ' h, extra ' + esc(durationText(x.extra_hours)) +
        ', worst step ' + (x.worst_slowdown === null ? 'stops the job' : fixed(x.worst_slowdown, 3) + 'x'); } },
      grid: { left: 10, right: 40, top: 20, bottom: 50, containLabel: true },
      xAxis: { type: 'value', name: 'upgrade window (h)', ...AXIS_NAME, nameGap: 30, scale: true },
      yAxis: { type: 'value', name: 'extra training time (h)', ...AXIS_NAME, nameGap: 45, scale: true },
      series: [{ type: 'scatter', symbolSize: 12,
        data: doc.plans.map(p => ({ value: [p.window_hours, p.extra_hours], name: name(p),
          itemStyle: best(p) ? { color: '#c0392b' } : p.stopping_steps > 0 ? { color: 'transparent', borderColor: '#5470c6', borderWidth: 2 } : {} })),
        label: { show: true, position: 'right', formatter: p => p.name, fontSize: 10 }, labelLayout: { hideOverlap: true } }]
    });
  }
  // Hours as a person reads a short time: 14 min, 2.5 h.
  function durationText(h) { return h < 1 ? fixed(60 * h, h < 1 / 60 ? 2 : 0) + ' min' : fixed(h, 2) + ' h'; }

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
    // The header's links, as a study page draws them: one per study of the registry, and compare.
    api('GET', '/api/studies').then(st => {
      const nav = document.querySelector('header nav');
      if (nav) nav.replaceChildren(...st.studies.map(x => x.name).concat(['compare']).map(n =>
        el('a', Object.assign({ href: '/' + n, text: n }, n === 'compare' ? { class: 'active' } : {}))));
    }).catch(() => {});
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
        out.replaceChildren();  // the previous comparison is not this one's
        showError(e.message);
        out.setAttribute('data-compared', 'error');
      }
    });
    api('GET', '/api/runs').then(all => {
      const done = all.runs.filter(r => r.state === 'done');
      for (const k of ['a', 'b']) {
        pick[k].appendChild(el('option', { value: '', text: '(none)' }));
        for (const r of done) pick[k].appendChild(el('option', { value: String(r.id), text: '#' + r.id + ' ' + r.study + ' ' + r.scenario + (r.label ? ' (' + r.label + ')' : '') }));
      }
      // B: the newest run; A: the newest before it of the same study (two studies do not compare), if any.
      const prior = done.length ? done.slice(1).find(r => r.study === done[0].study) : undefined;
      if (prior) { pick.a.value = String(prior.id); pick.b.value = String(done[0].id); }
      root.setAttribute('data-ready', '1');
    }).catch(e => showError(e.message));
  }

  // Fields a page lays out first, with its own label and suggestions: [id, label, default, placeholder,
  // suggestions]. A field the study's registry declares takes the registry's default and help, as the CLI
  // does; the registry's other parameters follow it (studyForm). engine and routing are network.engine /
  // network.routing (bench sends them as its own fields, the others as --set).
  const ENGINES = ['analytical', 'flow', 'packet'];
  const ROUTINGS = ['ecmp', 'adaptive', 'spray', 'static', 'dimension_order', 'minimal', 'valiant', 'ugal'];
  const FORM = {
    bench: [['op', 'operation', 'allreduce', '', ['allreduce', 'allgather', 'reducescatter', 'alltoall', 'broadcast', 'reduce', 'sendrecv', 'permutation', 'incast']],
      ['algo', 'algorithm', 'auto', '', ['auto', 'ring', 'tree', 'nvls', 'nvls_tree', 'collnet_direct', 'collnet_chain', 'pat']],
      ['gpus', 'GPUs', '', 'all, or 0-127, 0-1023:8', null],
      ['min', 'min size', '', '', null], ['max', 'max size', '', '', null], ['factor', 'step factor', '', '', null],
      ['engine', 'engine', '', 'scenario\'s', ENGINES], ['routing', 'routing', '', 'scenario\'s', ROUTINGS],
      ['compare_cc', 'compare transports', '', 'e.g. dcqcn_nic,nscc,rccc or roce_dcqcn,uec', ['dcqcn_nic,dctcp,nscc,rccc', 'roce_dcqcn,spectrum_x,uec,uec_rccc']]],
    train: [['engine', 'engine', '', 'scenario\'s', ENGINES], ['routing', 'routing', '', 'scenario\'s', ROUTINGS]],
    diagnose: [['probe', 'probe mesh', '', '', ['rail', 'leaf-mesh', 'full-mesh']], ['duration', 'probing time', '', '', null], ['round', 'round', '', '', null]]
  };

  function startApp(root, kind) {
    if (kind === 'compare') return startCompare(root);
    const form = el('form', { id: 'run-form' });
    const scenario = el('select', { id: 'scenario', name: 'scenario' });
    const upload = el('input', { type: 'file', id: 'upload', accept: '.yaml,.yml' });
    const sets = el('input', { type: 'text', id: 'sets', placeholder: 'topology.gpus=4096, ...', class: 'wide' });
    const common = el('div', { class: 'fields' });
    common.appendChild(el('label', {}, [el('span', { text: 'scenario' }), scenario]));
    common.appendChild(el('label', {}, [el('span', { text: 'or upload YAML' }), upload]));
    common.appendChild(el('label', {}, [el('span', { text: '--set KEY=VALUE, ...' }), sets]));
    // An uploaded file replaces the built-in scenario: the list says so, and choosing one again drops the file.
    const uploadNote = el('span', { class: 'muted', id: 'upload-note' });
    common.appendChild(uploadNote);
    upload.addEventListener('change', () => {
      scenario.disabled = upload.files.length > 0;
      uploadNote.textContent = upload.files.length ? 'the run uses ' + upload.files[0].name + ', not the scenario list (clear the file to use it)' : '';
    });
    form.appendChild(common);
    const extra = {};
    const own = el('div', { class: 'fields' });
    for (const [k, label, v, placeholder, list] of FORM[kind] || []) {
      // Wide enough for its hint (a placeholder cut at "e.g. dcqcn_nic,i" taught nothing).
      extra[k] = el('input', { type: 'text', id: k, value: v, placeholder: placeholder || '', size: String(Math.max(12, (placeholder || '').length + 2)) });
      if (list) {
        const dl = el('datalist', { id: 'list-' + k }, list.map(x => el('option', { value: x })));
        extra[k].setAttribute('list', 'list-' + k);
        own.appendChild(dl);
      }
      own.appendChild(el('label', {}, [el('span', { text: label }), extra[k]]));
    }
    if (kind === 'train') {
      for (const [k, what] of [['sweep', 'scaling sweep'], ['trace', 'Perfetto trace']]) {
        extra[k] = el('input', { type: 'checkbox', id: k });
        own.appendChild(el('label', { class: 'check' }, [extra[k], el('span', { text: what })]));
      }
    }
    form.appendChild(own);
    // The study's parameters from the registry (GET /api/studies): those laid out above take its defaults, the
    // others follow, each a field (every option the CLI has); an empty field leaves the scenario's value.
    const studyForm = studies => {
      const st = studies.find(x => x.name === kind);
      if (!st) return;
      for (const p of st.params) {
        if (extra[p.name]) {  // laid out by FORM: the registry's default and help, as the CLI's
          if (!extra[p.name].value) extra[p.name].value = p.default;
          extra[p.name].title = p.help;
          continue;
        }
        const label = el('span', { text: words(p.name) });
        if (p.type === 'true|false') {
          extra[p.name] = el('input', Object.assign({ type: 'checkbox', id: p.name, title: p.help }, p.default === 'true' ? { checked: 'checked' } : {}));
          own.appendChild(el('label', { class: 'check' }, [extra[p.name], label]));
          continue;
        }
        // A key's field left empty runs the scenario's value: its default shown, as --help shows it.
        const hint = p.default ? '' : p.key_default ? 'scenario\'s; default ' + p.key_default : p.type === 'time' ? 'scenario\'s (a time)' : 'scenario\'s';
        extra[p.name] = el('input', { type: 'text', id: p.name, value: p.default, title: p.help, placeholder: hint, size: String(Math.max(12, hint.length + 2)) });
        extra[p.name].dataset.type = p.type;
        if (p.choices && p.choices.length) {
          own.appendChild(el('datalist', { id: 'list-' + p.name }, p.choices.map(x => el('option', { value: x }))));
          extra[p.name].setAttribute('list', 'list-' + p.name);
        }
        own.appendChild(el('label', {}, [label, extra[p.name]]));
      }
    };
    // The header's links: a page per study of the registry, and compare.
    const studyNav = studies => {
      const nav = document.querySelector('header nav');
      if (!nav) return;
      nav.replaceChildren(...studies.map(x => x.name).concat(['compare']).map(n =>
        el('a', Object.assign({ href: '/' + n, text: n }, n === kind ? { class: 'active' } : {}))));
    };
    const run = el('button', { type: 'submit', id: 'run', text: 'Run ' + kind });
    const cancel = el('button', { type: 'button', id: 'cancel', text: 'Cancel', disabled: 'disabled' });
    form.appendChild(el('div', { class: 'buttons' }, [run, cancel]));
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
        const a = el('a', { href: '#', 'data-run': r.id, text: '#' + r.id + ' ' + r.scenario + (r.label ? ' (' + r.label + ')' : '') + ': ' + r.state +
          (r.error ? ' (' + r.error + ')' : '') });
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
          text: 'Download the iteration\'s Perfetto trace (' + fixed(Math.round(payload.trace.bytes / 1024), 0) + ' KiB)' });
        const p = el('p', {}, [link, document.createTextNode(' and open it in ui.perfetto.dev (Open trace file) or chrome://tracing.')]);
        out.insertBefore(p, out.firstChild);
      }
      out.setAttribute('data-run', String(id));
      out.setAttribute('data-overlays', String(payload.overlays ? payload.overlays.length : 0));
    }

    function follow(id) {
      current = id;
      cancel.removeAttribute('disabled');
      let ended = false;
      const onStatus = async s => {
        // Steps done of several; a one-step run fills the bar by its transfers done (share).
        bar.max = 1;
        bar.value = s.state === 'done' ? 1 : s.total > 1 ? s.done / s.total : s.share !== undefined ? s.share : 0;
        const states = { done: 'done', failed: 'failed', cancelled: 'cancelled', running: 'running', queued: 'queued' };
        status.textContent = (states[s.state] || s.state) + (s.what && s.state === 'running' ? ': ' + s.what : '') +
          (s.total > 1 ? ' (' + fixed(s.done, 0) + ' of ' + fixed(s.total, 0) + ' steps done)' : '');
        if (s.state === 'done' || s.state === 'failed' || s.state === 'cancelled') {
          ended = true;
          if (source) source.close();
          cancel.setAttribute('disabled', 'disabled');
          if (s.state === 'failed') showError(s.error);
          if (s.state === 'done') await show(id);
          await refreshRuns();
          status.setAttribute('data-state', s.state);
        }
      };
      // The server answers 503 when too many progress streams are open: follow the run by polling instead.
      const poll = async () => {
        while (!ended && current === id) {
          try { await onStatus(await api('GET', '/api/runs/' + id)); } catch (e) { showError(e.message); return; }
          if (!ended) await new Promise(r => setTimeout(r, 1000));
        }
      };
      source = new EventSource('/api/runs/' + id + '/events');
      source.onmessage = ev => onStatus(JSON.parse(ev.data));
      source.onerror = () => {
        if (ended || source.readyState !== EventSource.CLOSED) return;
        poll();
      };
    }

    form.addEventListener('submit', async ev => {
      ev.preventDefault();
      showError('');
      status.removeAttribute('data-state');
      const body = { study: kind, sets: sets.value.split(',').map(s => s.trim()).filter(s => s) };
      for (const [k, input] of Object.entries(extra)) {
        if (input.type === 'checkbox') { body[k] = input.checked; continue; }
        const v = input.value.trim();
        if (kind !== 'bench' && (k === 'engine' || k === 'routing')) {
          // network.engine / network.routing after the user's own --set, as bench's own fields are; a bad value is
          // the field's, not a --set the user never typed.
          const choices = k === 'engine' ? ENGINES : ROUTINGS;
          if (v && !choices.includes(v)) { showError(k + ": '" + v + "' is not valid; expected one of: " + choices.join(', ')); return; }
          if (v) body.sets.push('network.' + k + '=' + v);
          continue;
        }
        if (k === 'gpus' && !v) continue;  // every GPU of the fabric
        if (input.dataset.type) {  // a registry parameter: sent when given, as its JSON type
          if (!v) continue;
          const n = Number(v);
          body[k] = (input.dataset.type === 'integer' && Number.isInteger(n)) || (input.dataset.type === 'number' && v !== '' && Number.isFinite(n)) ? n : v;
          continue;
        }
        body[k] = k === 'factor' ? Number(v) : v;
      }
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

    Promise.all([api('GET', '/api/scenarios'), api('GET', '/api/studies')]).then(([j, st]) => {
      for (const s of j.scenarios) scenario.appendChild(el('option', { value: s.name, text: s.name + ' - ' + s.description }));
      // The jobs study needs a scenario with jobs: open on the first built-in that has them.
      const withJobs = j.scenarios.find(s => s.jobs);
      if (kind === 'jobs' && withJobs) scenario.value = withJobs.name;
      studyForm(st.studies);
      studyNav(st.studies);
      root.setAttribute('data-ready', '1');
    }).catch(e => showError(e.message));
    refreshRuns().catch(e => showError(e.message));
  }

  window.podnet = { renderReport, render, startApp, format: { describe, show, header, fieldLabel, bytesText } };
})();
