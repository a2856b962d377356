// The official SDK client over either transport.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { airlock } from './serve.mjs';

export async function stdioClient(serve, key) {
  const transport = new StdioClientTransport({
    command: airlock,
    args: ['mcp', '--url', serve.url],
    env: { AIRLOCK_API_KEY: key, PATH: process.env.PATH },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'airlock-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

export async function httpClient(serve, key) {
  const transport = new StreamableHTTPClientTransport(new URL(serve.url + '/mcp'), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  const client = new Client({ name: 'airlock-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

export const transports = { stdio: stdioClient, http: httpClient };
