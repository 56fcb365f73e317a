#!/usr/bin/env python3
"""A hostile-input campaign against podnet: the command line, the dashboard
server and resumable sweeps, fed what a careless or malicious user might give.

    python3 tests/hostile/campaign.py PODNET [--size small|full] [--seed N]

small (ctest hostile_campaign, under a minute) and full (`make hostile`) run
the same cases; full runs more of each. What must hold:
  - the command line: every case ends with exit 0 or 2 (never a signal, never
    exit 1 for bad input) within its time limit, and prints no raw control
    character;
  - the server: every bad request is answered 4xx, never 5xx or a dropped
    connection, while a probe request from another client keeps being answered
    within 2 s; progress streams past the cap get 503; a packet-engine run is
    stopped by cancel and by the time limit within seconds;
  - sweeps: killed with SIGKILL at random moments and resumed, a sweep ends
    with every point once and the same results as an uninterrupted run.
Only the Python standard library is used. Exit status 0 when every check held.
"""
import argparse
import json
import os
import random
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

CONTROL = re.compile(rb'[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]')
failures = []
passes = 0


def check(cond, what):
    global passes
    if cond:
        passes += 1
    else:
        failures.append(what)
        print('FAIL ' + what, flush=True)


# ---------------------------------------------------------------- inputs

def laughs(levels, fan=10):
    doc = 'a0: &a0 [' + ', '.join(['x'] * fan) + ']\n'
    for i in range(1, levels):
        doc += f'a{i}: &a{i} [' + ', '.join([f'*a{i - 1}'] * fan) + ']\n'
    return doc


def yaml_cases(rng, n_mutations):
    cases = {
        'self_alias_list': 'x: &a [*a]\n',
        'self_alias_topology': 'topology: &a {family: fat_tree, gpus: 64, x: *a}\n',
        'self_alias_root': '&r {schema_version: 1, me: *r}\n',
        'self_alias_deep': 'a: &top\n  b:\n    c: [1, *top]\n',
        'laughs_6': laughs(6),
        'laughs_9': laughs(9),
        'laughs_wide': laughs(4, fan=60),
        'deep_flow': 'topology: ' + '[' * 5000 + ']' * 5000 + '\n',
        'deep_block': ''.join('  ' * i + f'k{i}:\n' for i in range(300)),
        'two_documents': 'schema_version: 1\n---\nseed: 1\n',
        'esc_value': 'name: "a\\e[2Jb"\n',
        'nul_byte': 'name: a\x00b\ntopology: {family: fat_tree}\n',
        'undefined_alias': 'topology: *nope\n',
        'huge_number': 'topology: {family: fat_tree, gpus: 1e308}\n',
        'huge_oversub': 'topology: {family: rail_optimized, oversubscription: ' + '9' * 300 + '}\n',
        'negative_everything': 'topology: {gpus: -1}\nserver: {gpus: -8}\n',
        'wrong_types': 'topology: [1, 2]\nworkload: "x"\n',
        'unicode_keys': 'topologý: {gpus: 64}\n',
    }
    # Mutations of a valid scenario: bytes flipped, lines cut, lines repeated.
    base = ('schema_version: 1\nname: m\ntopology:\n  family: fat_tree\n  gpus: 64\nnetwork:\n'
            '  engine: analytical\nworkload:\n  model: llama3-8b\n  tp: 8\n')
    for k in range(n_mutations):
        b = bytearray(base.encode())
        for _ in range(rng.randint(1, 4)):
            op = rng.randint(0, 2)
            i = rng.randrange(len(b))
            if op == 0:
                b[i] = rng.choice(b'&*[]{}:-|>!%@`\'"\\\x00\x1b\n ')
            elif op == 1:
                del b[i:i + rng.randint(1, 8)]
            else:
                b[i:i] = b[i:i + rng.randint(1, 20)]
        cases[f'mutation_{k}'] = b.decode('utf-8', 'replace')
    return cases


def json_cases():
    return {
        'deep_array': '[' * 200000 + ']' * 200000,
        'deep_object': '{"a":' * 100000 + '1' + '}' * 100000,
        'duplicate_keys': '{"schema_version": 1, "run": {"command": "bench"}, "run": {}}',
        'not_json': '{"a": ',
        'huge_number': '{"schema_version": 1e999}',
    }


# ---------------------------------------------------------------- command line

def run_cli(podnet, args, limit, stdin=None):
    t0 = time.monotonic()
    try:
        p = subprocess.run([podnet] + args, capture_output=True, timeout=limit, input=stdin)
    except subprocess.TimeoutExpired:
        return None, b'', time.monotonic() - t0
    return p.returncode, p.stdout + p.stderr, time.monotonic() - t0


def cli_campaign(podnet, tmp, rng, size):
    cases = yaml_cases(rng, 20 if size == 'small' else 400)
    commands = [['resolve', '{f}'], ['design', '{f}'], ['design', 'aipod-16k', '--config-add', '{f}']]
    if size == 'full':
        commands += [['train', '{f}'], ['bench', '{f}', '--max', '1MiB']]
    n = 0
    for name, text in cases.items():
        path = os.path.join(tmp, name + '.yaml')
        with open(path, 'w', encoding='utf-8', errors='surrogateescape') as f:
            f.write(text)
        for cmd in commands:
            args = [a.replace('{f}', path) for a in cmd]
            rc, out, secs = run_cli(podnet, args, 30)
            n += 1
            label = f'cli {name}: podnet {" ".join(cmd)}'
            check(rc is not None, f'{label}: ends within 30 s')
            if rc is None:
                continue
            check(rc in (0, 2), f'{label}: exit 0 or 2 (got {rc}): {out[-300:]!r}')
            check(secs < 10, f'{label}: answered in {secs:.1f} s < 10 s')
            check(not CONTROL.search(out.replace(b'\n', b'').replace(b'\t', b'')),
                  f'{label}: no raw control character in the output')
    for name, text in json_cases().items():
        path = os.path.join(tmp, name + '.json')
        with open(path, 'w') as f:
            f.write(text)
        rc, out, secs = run_cli(podnet, ['diff', path, path], 30)
        n += 1
        check(rc == 2, f'cli diff {name}: exit 2 (got {rc}): {out[-300:]!r}')
    # Bad options.
    for args in (['design', 'aipod-16k', '--max-memory', '0'], ['design', 'aipod-16k', '--max-memory', ''],
                 ['reliability', 'aipod-16k', '--set', 'reliability.gpu_mtbf=1e308h'],
                 ['design', 'aipod-16k', '--config-add', tmp], ['serve', '--bind', 'nope', '--port', '0'],
                 ['design', 'aipod-16k', '--set', 'topology.gp\x1b[31mus=5']):
        rc, out, _ = run_cli(podnet, args, 30)
        n += 1
        check(rc == 2, f'cli {args}: exit 2 (got {rc}): {out[-200:]!r}')
        check(b'\x1b' not in out, f'cli {args}: no raw ESC in the output')
    print(f'command line: {n} cases', flush=True)


# ---------------------------------------------------------------- server

class Server:
    def __init__(self, podnet, extra):
        self.proc = subprocess.Popen([podnet, 'serve', '--port', '0'] + extra, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)
        line = ''
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            line += self.proc.stdout.readline()
            m = re.search(r'http://127\.0\.0\.1:(\d+)/', line)
            if m:
                self.port = int(m.group(1))
                return
        raise RuntimeError('podnet serve did not print its address')

    def request(self, method, path, body=None, timeout=10, raw=False):
        data = body if isinstance(body, (bytes, type(None))) else (
            body.encode() if isinstance(body, str) else json.dumps(body).encode())
        req = urllib.request.Request(f'http://127.0.0.1:{self.port}{path}', data=data, method=method,
                                     headers={'Content-Type': 'application/json'})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, (r.read() if not raw else r)
        except urllib.error.HTTPError as e:
            return e.code, e.read()
        except Exception as e:  # noqa: BLE001 - a dropped connection is a finding
            return -1, str(e).encode()

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def server_campaign(podnet, rng, size):
    s = Server(podnet, ['--time-limit', '8'])
    try:
        bad = []
        for name, text in yaml_cases(rng, 10 if size == 'small' else 200).items():
            bad.append(('POST', '/api/runs', {'study': 'design', 'yaml': text, 'file': name + '.yaml'}, name))
        for name, text in json_cases().items():
            if len(text) < 1 << 20:
                bad.append(('POST', '/api/runs', text, 'runs ' + name))
            bad.append(('POST', '/api/compare', '{"a": {"document": ' + text[:500000] + '}, "b": {"run": 1}}',
                        'compare ' + name))
        bad += [('POST', '/api/runs', '{"study": "bench", "study": "train", "scenario": "aipod-16k"}', 'dup study'),
                ('POST', '/api/runs', {'study': 'nope'}, 'unknown study'),
                ('POST', '/api/runs', {'study': 'bench', 'scenario': '../../etc/passwd'}, 'path as scenario'),
                ('POST', '/api/runs', {'study': 'bench', 'scenario': 'aipod-16k', 'sets': ['x\x00y=1']}, 'NUL set'),
                ('POST', '/api/runs', 'x' * (2 << 20), 'oversized body'),
                ('DELETE', '/api/runs', None, 'DELETE /api/runs'),
                ('PUT', '/api/compare', '{}', 'PUT /api/compare'),
                ('GET', '/api/compare', None, 'GET /api/compare'),
                ('POST', '/api/studies', '{}', 'POST /api/studies'),
                ('GET', '/api/runs/99999999/events', None, 'events of no run')]
        if size == 'full':
            bad = bad * 3
        results = []
        lock = threading.Lock()
        stop_probe = threading.Event()
        probe_worst = [0.0]

        def probe():
            while not stop_probe.is_set():
                t0 = time.monotonic()
                code, _ = s.request('GET', '/api/scenarios', timeout=10)
                dt = time.monotonic() - t0
                with lock:
                    probe_worst[0] = max(probe_worst[0], dt if code == 200 else 99)
                time.sleep(0.05)

        def client(items):
            for method, path, body, name in items:
                code, out = s.request(method, path, body)
                with lock:
                    results.append((name, method, path, code, out[:200]))

        threads = [threading.Thread(target=probe)]
        chunks = [bad[i::8] for i in range(8)]
        threads += [threading.Thread(target=client, args=(c,)) for c in chunks]
        for t in threads:
            t.start()
        for t in threads[1:]:
            t.join()
        stop_probe.set()
        threads[0].join()
        for name, method, path, code, out in results:
            # A mutation may still be a valid scenario: then the run starts (202), which is right too.
            ok = 400 <= code < 500 or (name.startswith('mutation_') and code == 202)
            check(ok, f'server {name} ({method} {path}): answered 4xx (got {code}: {out!r})')
            if method in ('DELETE', 'PUT') or (method == 'GET' and path == '/api/compare') or \
                    (method == 'POST' and path == '/api/studies'):
                check(code == 405, f'server {name}: 405 for a method the route does not take (got {code})')
        check(probe_worst[0] < 2, f'server: another client answered within 2 s throughout (worst {probe_worst[0]:.2f} s)')
        print(f'server: {len(results)} bad requests from 8 clients', flush=True)

        # Progress streams: at most half the 16 workers, 4 per client; the rest answered 503, the server still up.
        code, out = s.request('POST', '/api/runs', {'study': 'bench', 'scenario': 'two-jobs', 'engine': 'packet',
                                                    'min': '1GiB', 'max': '1GiB'})
        check(code == 202, f'server: a 1 GiB packet bench starts (got {code} {out!r})')
        run_id = json.loads(out)['id'] if code == 202 else 0
        socks, answers = [], []
        for _ in range(16):
            sk = socket.create_connection(('127.0.0.1', s.port), timeout=5)
            sk.sendall(f'GET /api/runs/{run_id}/events HTTP/1.1\r\nHost: x\r\n\r\n'.encode())
            socks.append(sk)
        for sk in socks:
            try:
                answers.append(int(sk.recv(64).split(b' ')[1]))
            except Exception:  # noqa: BLE001
                answers.append(-1)
        check(answers.count(200) == 4 and answers.count(503) == 12,
              f'server: 16 streams from one client: 4 open, 12 answered 503 (got {answers})')
        # The refused ones are closed (each idle connection holds a worker for the 2 s keep-alive at most).
        for sk, code in zip(socks, answers):
            if code != 200:
                sk.close()
        t0 = time.monotonic()
        code, _ = s.request('GET', '/api/scenarios', timeout=5)
        check(code == 200 and time.monotonic() - t0 < 2,
              f'server: still answers with 4 streams open ({time.monotonic() - t0:.2f} s)')
        # Cancel reaches the packet engine between transfers.
        t0 = time.monotonic()
        s.request('POST', f'/api/runs/{run_id}/cancel')
        state = ''
        while time.monotonic() - t0 < 15:
            code, out = s.request('GET', f'/api/runs/{run_id}')
            state = json.loads(out).get('state', '') if code == 200 else ''
            if state in ('cancelled', 'done', 'failed'):
                break
            time.sleep(0.2)
        check(state == 'cancelled' and time.monotonic() - t0 < 5,
              f'server: cancel stops a 1 GiB packet run within 5 s (state {state}, {time.monotonic() - t0:.1f} s)')
        for sk in socks:
            sk.close()
        # The time limit (8 s here) stops one too: 4 GiB, four times a 1 GiB run, which took 7-9 s (at the limit).
        code, out = s.request('POST', '/api/runs', {'study': 'bench', 'scenario': 'two-jobs', 'engine': 'packet',
                                                    'min': '4GiB', 'max': '4GiB'})
        run_id = json.loads(out)['id'] if code == 202 else 0
        t0 = time.monotonic()
        while time.monotonic() - t0 < 30:
            code, out = s.request('GET', f'/api/runs/{run_id}')
            status = json.loads(out) if code == 200 else {}
            if status.get('state') in ('cancelled', 'done', 'failed'):
                break
            time.sleep(0.3)
        check(status.get('state') == 'cancelled' and 'time limit' in status.get('error', '') and
              time.monotonic() - t0 < 12,
              f'server: the 8 s time limit stops a packet run by 12 s ({status}, {time.monotonic() - t0:.1f} s)')
    finally:
        s.stop()


# ---------------------------------------------------------------- sweeps

def sweep_rows(db):
    c = sqlite3.connect(db)
    cols = [r[1] for r in c.execute('PRAGMA table_info(points)') if r[1] != 'wall_seconds']
    rows = c.execute('SELECT ' + ', '.join(f'"{k}"' for k in cols) + ' FROM points ORDER BY id').fetchall()
    c.close()
    return rows


def sweep_campaign(podnet, tmp, rng, size):
    # A job every point fits (a sweep whose points fail exits 1): Llama 3 8B's own recipe, DP from the GPUs.
    args = ['sweep', 'aipod-16k', '--study', 'train', '--vary', 'topology.gpus=512,1024,2048,4096',
            '--vary', 'collective.channels=auto,8', '--set', 'network.engine=analytical',
            '--set', 'workload.model=llama3-8b', '--set', 'workload.recipe=preset', '--set', 'workload.dp=auto',
            '-j', '2']
    if size == 'full':
        args[5] = 'topology.gpus=512,1024,2048,4096,8192,16384'
    ref = os.path.join(tmp, 'ref.sqlite')
    rc, out, _ = run_cli(podnet, args + ['--results', ref], 600)
    check(rc == 0, f'sweep: the uninterrupted run ends 0 (got {rc}: {out[-300:]!r})')
    expected = sweep_rows(ref)
    kills = 3 if size == 'small' else 30
    db = os.path.join(tmp, 'killed.sqlite')
    for k in range(kills):
        p = subprocess.Popen([podnet] + args + ['--results', db], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.05, 1.5))
        p.send_signal(signal.SIGKILL)
        p.wait()
    rc, out, _ = run_cli(podnet, args + ['--results', db], 600)
    check(rc == 0, f'sweep: resumed after {kills} kills, ends 0 (got {rc}: {out[-300:]!r})')
    got = sweep_rows(db)
    check(got == expected, f'sweep: after {kills} SIGKILLs and a resume, every point once with the results of an '
                           f'uninterrupted run ({len(got)} rows, {len(expected)} expected)')


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('podnet')
    ap.add_argument('--size', choices=['small', 'full'], default='small')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--only', choices=['cli', 'server', 'sweep'])
    a = ap.parse_args()
    rng = random.Random(a.seed)
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix='podnet_hostile_') as tmp:
        if a.only in (None, 'cli'):
            cli_campaign(a.podnet, tmp, rng, a.size)
        if a.only in (None, 'server'):
            server_campaign(a.podnet, rng, a.size)
        if a.only in (None, 'sweep'):
            sweep_campaign(a.podnet, tmp, rng, a.size)
    print(f'{passes} passed, {len(failures)} failed ({time.monotonic() - t0:.0f} s)')
    return 0 if not failures else 1


if __name__ == '__main__':
    sys.exit(main())
