#!/usr/bin/env node
/**
 * The smallest MCP server over stdio (newline-delimited JSON-RPC 2.0), as a
 * filesystem server offers it: one tool, write_file {path, content}, that
 * writes the file whole. For test/clients/holes3-real.test.ts: an MCP tool
 * writes files where guard's Write gate never sees it.
 */
import { writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const TOOLS = [
  {
    name: 'write_file',
    description: 'Create or overwrite a file with the given content.',
    inputSchema: {
      type: 'object',
      properties: { path: { type: 'string' }, content: { type: 'string' } },
      required: ['path', 'content'],
    },
  },
];

const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');

createInterface({ input: process.stdin }).on('line', (line) => {
  let m;
  try {
    m = JSON.parse(line);
  } catch {
    return;
  }
  if (m.id === undefined) return; // notifications
  if (m.method === 'initialize')
    return send({
      id: m.id,
      result: {
        protocolVersion: m.params?.protocolVersion ?? '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name: 'fs', version: '1.0.0' },
      },
    });
  if (m.method === 'tools/list') return send({ id: m.id, result: { tools: TOOLS } });
  if (m.method === 'tools/call' && m.params?.name === 'write_file') {
    writeFileSync(m.params.arguments.path, m.params.arguments.content);
    return send({ id: m.id, result: { content: [{ type: 'text', text: 'written' }] } });
  }
  if (m.method === 'ping') return send({ id: m.id, result: {} });
  send({ id: m.id, error: { code: -32601, message: `no method ${m.method}` } });
});
