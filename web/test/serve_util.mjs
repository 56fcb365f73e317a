// Starts `podnet serve --port 0` on loopback and returns its base URL.
import { spawn } from 'node:child_process';

export function startServer(podnet, extra = []) {
  return new Promise((resolve, reject) => {
    const proc = spawn(podnet, ['serve', '--port', '0', ...extra], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    const timer = setTimeout(() => reject(new Error('podnet serve did not print its address in 10 s')), 10000);
    proc.stdout.on('data', d => {
      out += d;
      const m = out.match(/http:\/\/127\.0\.0\.1:(\d+)\//);
      if (m) { clearTimeout(timer); resolve({ proc, url: m[0].replace(/\/$/, ''), port: Number(m[1]) }); }
    });
    proc.on('exit', code => { clearTimeout(timer); reject(new Error('podnet serve exited with ' + code)); });
  });
}

export function stopServer(s) {
  s.proc.removeAllListeners('exit');
  s.proc.kill('SIGTERM');
}

let failures = 0, passes = 0;
export function check(cond, what) {
  if (cond) { ++passes; console.log('ok   ' + what); } else { ++failures; console.log('FAIL ' + what); }
}
export function summary() {
  console.log(`${passes} passed, ${failures} failed`);
  return failures === 0 ? 0 : 1;
}
