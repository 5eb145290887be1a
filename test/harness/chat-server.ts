/**
 * The scripted model for the plugin harnesses (Cline CLI, opencode, Kilo
 * Code), which all speak OpenAI Chat Completions (streamed) to an
 * "OpenAI-compatible" provider on 127.0.0.1. Same rules as model-server.ts:
 * the turn is read from the conversation (assistant tool calls so far), not
 * from a request counter; every request is logged with what the model was
 * told about its previous call; bounded in requests and time.
 *
 * Each harness has its own tool vocabulary; the action is put into the one
 * the request offers (Cline: editor / run_commands; opencode and Kilo:
 * edit / write / bash).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Action } from './model-server.js';

/** The scenario's actions, plus a read (which guard must let through untouched). */
export type ChatAction = Action | { kind: 'read'; file: string };

export interface ChatRequest {
  time: number;
  url: string;
  body: any;
  agentLoop: boolean;
  step?: number;
  /** What the model reads about its previous call: the tool messages, and the user messages the harness added after them. */
  toolResults: { text: string }[];
}

export interface ChatServer {
  port: number;
  /** http://127.0.0.1:PORT/v1 */
  baseUrl: string;
  requests: ChatRequest[];
  requestAtStep(step: number): ChatRequest | undefined;
  close(): Promise<void>;
}

const WRITE_TOOLS = ['editor', 'apply_patch', 'write', 'edit'];

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((c: any) => (typeof c === 'string' ? c : (c?.text ?? JSON.stringify(c))))
      .join('\n');
  return JSON.stringify(content ?? '');
}

function read(body: any): {
  agentLoop: boolean;
  calls: number;
  results: ChatRequest['toolResults'];
  tools: string[];
} {
  const tools: string[] = (Array.isArray(body?.tools) ? body.tools : [])
    .map((t: any) => t?.function?.name ?? t?.name)
    .filter(Boolean);
  const agentLoop = tools.some((t) => WRITE_TOOLS.includes(t));
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  let calls = 0;
  for (const m of messages)
    if (m.role === 'assistant' && Array.isArray(m.tool_calls)) calls += m.tool_calls.length;
  const last = messages.map((m) => m.role).lastIndexOf('assistant');
  const results =
    last < 0
      ? []
      : messages
          .slice(last + 1)
          .filter((m) => m.role === 'tool' || m.role === 'user')
          .map((m) => ({ text: textOf(m.content) }));
  return { agentLoop, calls, results, tools };
}

let ids = 0;
const nextId = (p: string) => `${p}_${Date.now().toString(36)}${(++ids).toString(36)}`;

/** The action as a call of one of the offered tools, or null (then the model just answers with text). */
function toolCall(action: ChatAction, tools: string[]): { name: string; args: object } | null {
  const has = (t: string) => tools.includes(t);
  switch (action.kind) {
    case 'edit':
      if (has('editor'))
        return {
          name: 'editor',
          args: { path: action.file, old_text: action.old, new_text: action.new },
        };
      if (has('edit'))
        return {
          name: 'edit',
          args: { filePath: action.file, oldString: action.old, newString: action.new },
        };
      return null;
    case 'write':
      if (has('write'))
        return { name: 'write', args: { filePath: action.file, content: action.content } };
      return null;
    case 'shell':
      if (has('run_commands'))
        return { name: 'run_commands', args: { commands: [action.command] } };
      if (has('bash'))
        return { name: 'bash', args: { command: action.command, description: 'Scripted command' } };
      return null;
    case 'patch':
      if (has('apply_patch'))
        return {
          name: 'apply_patch',
          args: has('editor') ? { input: action.patch } : { patchText: action.patch },
        };
      return null;
    case 'read':
      if (has('read_files')) return { name: 'read_files', args: { file_paths: [action.file] } };
      if (has('read')) return { name: 'read', args: { filePath: action.file } };
      return null;
    case 'tool':
      return has(action.name) ? { name: action.name, args: action.input } : null;
    case 'end':
      return null;
  }
}

function answer(res: http.ServerResponse, body: any, action: ChatAction, tools: string[]): void {
  const id = nextId('chatcmpl');
  const model = body?.model ?? 'scripted';
  const chunk = (delta: object, finish: string | null, extra: object = {}) => ({
    id,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...extra,
  });
  const call = toolCall(action, tools);
  const usage = { usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } };
  const events: object[] = call
    ? [
        chunk(
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                index: 0,
                id: nextId('call'),
                type: 'function',
                function: { name: call.name, arguments: '' },
              },
            ],
          },
          null,
        ),
        chunk(
          { tool_calls: [{ index: 0, function: { arguments: JSON.stringify(call.args) } }] },
          null,
        ),
        chunk({}, 'tool_calls', usage),
      ]
    : [
        chunk(
          { role: 'assistant', content: action.kind === 'end' ? action.text : 'no such tool here' },
          null,
        ),
        chunk({}, 'stop', usage),
      ];
  if (body?.stream === false) {
    const message = call
      ? {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: nextId('call'),
              type: 'function',
              function: { name: call.name, arguments: JSON.stringify(call.args) },
            },
          ],
        }
      : { role: 'assistant', content: action.kind === 'end' ? action.text : 'ok' };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id,
        object: 'chat.completion',
        created: 1,
        model,
        choices: [{ index: 0, message, finish_reason: call ? 'tool_calls' : 'stop' }],
        ...usage,
      }),
    );
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const e of events) res.write(`data: ${JSON.stringify(e)}\n\n`);
  res.write('data: [DONE]\n\n');
  res.end();
}

export async function startChatServer(
  script: ChatAction[],
  opts: { maxRequests?: number; lifetimeMs?: number } = {},
): Promise<ChatServer> {
  const maxRequests = opts.maxRequests ?? 60;
  const requests: ChatRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = req.url ?? '/';
      let body: any = null;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
      } catch {
        body = null;
      }
      const entry: ChatRequest = { time: Date.now(), url, body, agentLoop: false, toolResults: [] };
      requests.push(entry);
      const fail = (status: number, message: string) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message } }));
      };
      if (requests.length > maxRequests)
        return fail(500, `scripted model: more than ${maxRequests} requests`);
      if (req.method === 'GET' && url.endsWith('/models')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(
          JSON.stringify({
            object: 'list',
            data: [{ id: 'scripted-model', object: 'model', owned_by: 'guard-test' }],
          }),
        );
      }
      if (req.method !== 'POST' || !url.includes('/chat/completions'))
        return fail(404, 'scripted model: not found');
      const r = read(body);
      entry.agentLoop = r.agentLoop;
      entry.toolResults = r.results;
      if (!r.agentLoop) return answer(res, body, { kind: 'end', text: 'ok' }, []);
      entry.step = r.calls;
      return answer(res, body, script[r.calls] ?? { kind: 'end', text: 'Done.' }, r.tools);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  let closed: Promise<void> | undefined;
  const close = () =>
    (closed ??= new Promise<void>((resolve) => {
      clearTimeout(lifetime);
      server.closeAllConnections();
      server.close(() => resolve());
    }));
  const lifetime = setTimeout(close, opts.lifetimeMs ?? 180_000);
  lifetime.unref();
  return {
    port,
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    requestAtStep: (step) => requests.find((r) => r.agentLoop && r.step === step),
    close,
  };
}
