// The round trip of tools/list and of a trivial run_code through airlock's
// MCP server, over stdio (airlock mcp) and Streamable HTTP (/mcp), with
// the direct API call as the baseline, all in one run against one
// airlock serve on loopback, interleaved so that load hits each alike.
// Run by bench/mcp_roundtrip.sh (it finds the binary and the SDK).
import { performance } from 'node:perf_hooks';
import { startServe } from '../tests/mcp/serve.mjs';
import { stdioClient, httpClient } from '../tests/mcp/clients.mjs';

const rounds = Number(process.argv[2] || 20);
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };

const serve = await startServe();
try {
  const key = serve.keys.alpha;
  const stdio = await stdioClient(serve, key);
  const http = await httpClient(serve, key);
  const auth = { Authorization: `Bearer ${key}` };
  const code = 'print(1)';
  const cases = {
    // Baselines: the API itself. tools/list needs no API call, so its
    // baseline is the cheapest authenticated one (GET /v1/usage).
    'list: direct API (GET /v1/usage)': async () => { const r = await fetch(`${serve.url}/v1/usage`, { headers: auth }); await r.text(); },
    'list: MCP stdio tools/list': () => stdio.listTools(),
    'list: MCP http tools/list': () => http.listTools(),
    'run: direct API (POST /v1/jobs wait_s)': async () => {
      const r = await fetch(`${serve.url}/v1/jobs`, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' },
                                                      body: JSON.stringify({ code, wait_s: 60 }) });
      const j = await r.json();
      if (j.outcome !== 'succeeded') throw new Error(JSON.stringify(j));
    },
    'run: MCP stdio run_code': async () => {
      const r = await stdio.callTool({ name: 'run_code', arguments: { code } });
      if (r.isError) throw new Error(JSON.stringify(r));
    },
    'run: MCP http run_code': async () => {
      const r = await http.callTool({ name: 'run_code', arguments: { code } });
      if (r.isError) throw new Error(JSON.stringify(r));
    },
  };
  const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  for (const f of Object.values(cases)) await f();  // warm up each path once
  for (let i = 0; i < rounds; ++i) {
    for (const [name, f] of Object.entries(cases)) {
      const t0 = performance.now();
      await f();
      times[name].push(performance.now() - t0);
    }
  }
  console.log(`MCP round trips, ${rounds} rounds interleaved, medians (ms) and ratio to the direct API call:`);
  for (const group of ['list', 'run']) {
    const names = Object.keys(cases).filter((n) => n.startsWith(group));
    const base = median(times[names[0]]);
    for (const n of names) {
      const m = median(times[n]);
      console.log(`  ${n.padEnd(42)} ${m.toFixed(2).padStart(8)} ms  x${(m / base).toFixed(2)}`);
    }
  }
  await stdio.close();
  await http.close();
} finally {
  await serve.stop();
}
