/**
 * A scripted model on 127.0.0.1 that the real harness binaries talk to
 * instead of Anthropic, Google or OpenAI. It plays a fixed list of tool calls,
 * one per model turn, then ends; it logs every request so a test can read
 * what the harness told the model (above all: the tool result that followed a
 * hook's deny).
 *
 * Which turn a request is in is read from the conversation it carries (how
 * many tool calls the model has made so far), not from a request counter:
 * harnesses retry, and send side requests (titles, JSON classifiers) that
 * must not advance the script.
 *
 * Bounded: at most `maxRequests` model requests (then 500s), and the server
 * closes itself after `lifetimeMs` even if the test forgot to.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type ModelApi = 'anthropic' | 'gemini' | 'openai' | 'chat';

/**
 * OpenAI Chat Completions (Copilot CLI, Qwen Code, Continue CLI...): each
 * harness names its tools and their arguments its own way.
 */
export interface ChatVocab {
  /** A request of the agent loop offers one of these tools. */
  loopTools: string[];
  read(file: string): { name: string; args: object };
  edit(file: string, old: string, now: string): { name: string; args: object };
  write(file: string, content: string): { name: string; args: object };
  /** `background`: the harness's own way to run it in the background (Copilot: mode async). */
  shell(command: string, background?: boolean): { name: string; args: object };
  patch?(patch: string): { name: string; args: object | string };
}

/** One model turn, in the harness's own tool vocabulary. */
export type Action =
  /** Claude Edit / Gemini replace (absolute path). */
  | { kind: 'edit'; file: string; old: string; new: string }
  /** Claude Write / Gemini write_file (absolute path). */
  | { kind: 'write'; file: string; content: string }
  /** Claude Bash / Gemini run_shell_command / Codex exec_command. */
  | {
      kind: 'shell';
      command: string;
      /** Claude: run_in_background; Copilot: mode "async" */
      background?: boolean;
    }
  /** Codex's freeform apply_patch tool (the whole patch text). */
  | { kind: 'patch'; patch: string }
  /** A read of one file (absolute path; Chat Completions harnesses only). */
  | { kind: 'read'; file: string }
  /** Any other tool by its own name and input (Claude only: NotebookEdit, mcp__SERVER__TOOL). */
  | { kind: 'tool'; name: string; input: object }
  | { kind: 'end'; text: string };

export interface LoggedRequest {
  time: number;
  method: string;
  url: string;
  body: any;
  /** A request of the agent loop (it offers the write and shell tools). */
  agentLoop: boolean;
  /** Script step this request was answered with (agent loop only). */
  step?: number;
  /**
   * The tool results this request reports for the model's previous call, as
   * text the model reads (Claude: tool_result content; Gemini: the
   * functionResponse.response as JSON; Codex: the call output).
   */
  toolResults: { text: string; isError?: boolean }[];
}

export interface ModelServer {
  api: ModelApi;
  port: number;
  /** http://127.0.0.1:PORT (no trailing slash, no /v1). */
  origin: string;
  requests: LoggedRequest[];
  /** Agent-loop requests only, in order. */
  agentRequests(): LoggedRequest[];
  /** The agent-loop request answered with `step` (the first one, if retried). */
  requestAtStep(step: number): LoggedRequest | undefined;
  close(): Promise<void>;
}

export interface ServerOptions {
  maxRequests?: number;
  lifetimeMs?: number;
  /** For the `chat` API: the harness's tool vocabulary. */
  vocab?: ChatVocab;
  /**
   * Awaited before the agent-loop request of `step` is answered: the model "thinking" while
   * something happens in the project (a command detached at an earlier step doing its work).
   */
  before?: (step: number) => Promise<void> | void;
}

// ---------------------------------------------------------------- reading

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((c: any) => (typeof c === 'string' ? c : (c?.text ?? JSON.stringify(c))))
      .join('\n');
  return JSON.stringify(content ?? '');
}

/** Claude: tool_use blocks so far; the tool_result blocks of the last user message. */
function readAnthropic(body: any): {
  agentLoop: boolean;
  calls: number;
  results: LoggedRequest['toolResults'];
} {
  const tools: any[] = Array.isArray(body?.tools) ? body.tools : [];
  const agentLoop =
    body?.stream === true && tools.some((t) => t?.name === 'Write' || t?.name === 'Bash');
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  let calls = 0;
  for (const m of messages)
    if (m.role === 'assistant' && Array.isArray(m.content))
      calls += m.content.filter((c: any) => c?.type === 'tool_use').length;
  // After the last assistant turn: the user message with the tool results,
  // and whatever the harness adds (2.1.330 appends `system` messages, e.g. a
  // post-tool hook's additional context).
  const lastAssistant = messages.map((m) => m.role).lastIndexOf('assistant');
  const results = messages
    .slice(lastAssistant + 1)
    .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
    .filter((c: any) => c?.type === 'tool_result')
    .map((c: any) => ({ text: textOf(c.content), isError: c.is_error === true }));
  return { agentLoop, calls, results };
}

/** Gemini: functionCall parts so far; the functionResponse parts of the last content. */
function readGemini(body: any): {
  agentLoop: boolean;
  calls: number;
  results: LoggedRequest['toolResults'];
} {
  const decls: any[] = (Array.isArray(body?.tools) ? body.tools : []).flatMap(
    (t: any) => t?.functionDeclarations ?? [],
  );
  const agentLoop = decls.some((d) => d?.name === 'write_file' || d?.name === 'run_shell_command');
  const contents: any[] = Array.isArray(body?.contents) ? body.contents : [];
  let calls = 0;
  for (const c of contents)
    if (c.role === 'model') calls += (c.parts ?? []).filter((p: any) => p?.functionCall).length;
  const lastModel = contents.map((c) => c.role).lastIndexOf('model');
  const results = contents
    .slice(lastModel + 1)
    .flatMap((c) => c.parts ?? [])
    .filter((p: any) => p?.functionResponse)
    .map((p: any) => ({
      text: JSON.stringify(p.functionResponse.response),
      isError: p.functionResponse.response?.error !== undefined,
    }));
  return { agentLoop, calls, results };
}

/** Codex (Responses API): call items so far; the outputs after the last call. */
function readOpenAI(body: any): {
  agentLoop: boolean;
  calls: number;
  results: LoggedRequest['toolResults'];
} {
  const tools: any[] = Array.isArray(body?.tools) ? body.tools : [];
  const agentLoop = tools.some(
    (t) => t?.name === 'apply_patch' || t?.name === 'exec_command' || t?.name === 'shell',
  );
  const input: any[] = Array.isArray(body?.input) ? body.input : [];
  const isCall = (i: any) => i?.type === 'function_call' || i?.type === 'custom_tool_call';
  const calls = input.filter(isCall).length;
  let lastCall = -1;
  input.forEach((i, n) => {
    if (isCall(i)) lastCall = n;
  });
  const results = input
    .slice(lastCall + 1)
    .filter((i) => i?.type === 'function_call_output' || i?.type === 'custom_tool_call_output')
    .map((i) => ({ text: textOf(i.output) }));
  return { agentLoop, calls, results };
}

/** Chat Completions: assistant tool_calls so far; the tool messages after the last assistant message. */
function readChat(
  body: any,
  vocab: ChatVocab,
): { agentLoop: boolean; calls: number; results: LoggedRequest['toolResults'] } {
  const tools: any[] = Array.isArray(body?.tools) ? body.tools : [];
  const names = new Set(tools.map((t) => t?.function?.name ?? t?.name));
  const agentLoop = vocab.loopTools.some((n) => names.has(n));
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  let calls = 0;
  for (const m of messages)
    if (m.role === 'assistant' && Array.isArray(m.tool_calls)) calls += m.tool_calls.length;
  const lastAssistant = messages.map((m) => m.role).lastIndexOf('assistant');
  const results = messages
    .slice(lastAssistant + 1)
    .filter((m) => m.role === 'tool' || m.role === 'user' || m.role === 'system')
    .map((m) => ({ text: textOf(m.content), isError: undefined }));
  return { agentLoop, calls, results };
}

// ---------------------------------------------------------------- answering

let ids = 0;
const nextId = (prefix: string) => `${prefix}_${Date.now().toString(36)}${(++ids).toString(36)}`;

function sse(res: http.ServerResponse, events: { event?: string; data: unknown }[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const e of events)
    res.write(`${e.event ? `event: ${e.event}\n` : ''}data: ${JSON.stringify(e.data)}\n\n`);
  res.end();
}

function json(res: http.ServerResponse, status: number, data: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(data));
}

const CLAUDE_TOOL = { edit: 'Edit', write: 'Write', shell: 'Bash', read: 'Read' } as const;

function answerAnthropic(res: http.ServerResponse, body: any, action: Action): void {
  const model = body?.model ?? 'claude';
  const usage = { input_tokens: 1, output_tokens: 1 };
  const ev = (type: string, data: object) => ({ event: type, data: { type, ...data } });
  let block: object;
  let delta: object;
  let stop: string;
  if (action.kind === 'tool') {
    block = { type: 'tool_use', id: nextId('toolu'), name: action.name, input: {} };
    delta = { type: 'input_json_delta', partial_json: JSON.stringify(action.input) };
    stop = 'tool_use';
  } else if (action.kind === 'end' || action.kind === 'patch') {
    block = { type: 'text', text: '' };
    delta = {
      type: 'text_delta',
      text: action.kind === 'end' ? action.text : 'no patch tool here',
    };
    stop = 'end_turn';
  } else {
    const input =
      action.kind === 'edit'
        ? { file_path: action.file, old_string: action.old, new_string: action.new }
        : action.kind === 'write'
          ? { file_path: action.file, content: action.content }
          : action.kind === 'read'
            ? { file_path: action.file }
            : {
                command: action.command,
                description: 'Scripted command',
                ...(action.background ? { run_in_background: true } : {}),
              };
    block = { type: 'tool_use', id: nextId('toolu'), name: CLAUDE_TOOL[action.kind], input: {} };
    delta = { type: 'input_json_delta', partial_json: JSON.stringify(input) };
    stop = 'tool_use';
  }
  sse(res, [
    ev('message_start', {
      message: {
        id: nextId('msg'),
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage,
      },
    }),
    ev('content_block_start', { index: 0, content_block: block }),
    ev('content_block_delta', { index: 0, delta }),
    ev('content_block_stop', { index: 0 }),
    ev('message_delta', {
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: 1 },
    }),
    ev('message_stop', {}),
  ]);
}

function geminiChunk(parts: object[]): object {
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 },
    modelVersion: 'scripted',
  };
}

function answerGemini(res: http.ServerResponse, url: string, action: Action): void {
  let part: object;
  if (action.kind === 'edit')
    part = {
      functionCall: {
        name: 'replace',
        args: {
          file_path: action.file,
          old_string: action.old,
          new_string: action.new,
          instruction: 'Scripted edit',
        },
      },
    };
  else if (action.kind === 'write')
    part = {
      functionCall: {
        name: 'write_file',
        args: { file_path: action.file, content: action.content },
      },
    };
  else if (action.kind === 'shell')
    part = {
      functionCall: {
        name: 'run_shell_command',
        args: { command: action.command, description: 'Scripted command' },
      },
    };
  else part = { text: action.kind === 'end' ? action.text : 'no patch tool here' };
  if (url.includes(':streamGenerateContent')) sse(res, [{ data: geminiChunk([part]) }]);
  else json(res, 200, geminiChunk([part]));
}

/**
 * Gemini's side requests ask for JSON against a schema (the next-speaker
 * check, the loop detector, the model router). Answer each so it ends the
 * question at once: the user speaks next, no loop, the default model.
 */
function answerGeminiSide(res: http.ServerResponse, url: string, body: any): void {
  const schema =
    body?.generationConfig?.responseJsonSchema ?? body?.generationConfig?.responseSchema;
  const props = Object.keys(schema?.properties ?? {});
  const out: Record<string, unknown> = {};
  for (const p of props) {
    if (p === 'next_speaker') out[p] = 'user';
    else if (p === 'model_choice') out[p] = 'flash';
    else if (p === 'complexity_score') out[p] = 1;
    else if (/loop/i.test(p)) out[p] = false;
    else if (/confidence/i.test(p)) out[p] = 0;
    else out[p] = 'scripted';
  }
  const text = schema ? JSON.stringify(out) : 'ok';
  if (url.includes(':streamGenerateContent')) sse(res, [{ data: geminiChunk([{ text }]) }]);
  else json(res, 200, geminiChunk([{ text }]));
}

function answerOpenAI(res: http.ServerResponse, action: Action): void {
  const id = nextId('resp');
  let item: object;
  if (action.kind === 'patch')
    item = {
      type: 'custom_tool_call',
      id: nextId('ctc'),
      call_id: nextId('call'),
      name: 'apply_patch',
      input: action.patch,
      status: 'completed',
    };
  else if (action.kind === 'shell')
    item = {
      type: 'function_call',
      id: nextId('fc'),
      call_id: nextId('call'),
      name: 'exec_command',
      arguments: JSON.stringify({ cmd: action.command }),
      status: 'completed',
    };
  else {
    const text = action.kind === 'end' ? action.text : 'no such tool here';
    item = {
      type: 'message',
      role: 'assistant',
      id: nextId('msg'),
      status: 'completed',
      content: [{ type: 'output_text', text, annotations: [] }],
    };
  }
  const ev = (type: string, data: object) => ({ event: type, data: { type, ...data } });
  sse(res, [
    ev('response.created', { response: { id } }),
    ev('response.output_item.done', { output_index: 0, item }),
    ev('response.completed', {
      response: {
        id,
        usage: {
          input_tokens: 1,
          input_tokens_details: null,
          output_tokens: 1,
          output_tokens_details: null,
          total_tokens: 2,
        },
      },
    }),
  ]);
}

function answerChat(
  res: http.ServerResponse,
  body: any,
  action: Action,
  vocab: ChatVocab | undefined,
): void {
  const id = nextId('chatcmpl');
  const model = body?.model ?? 'scripted';
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: object, finish: string | null) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  let call: { name: string; args: object | string } | null = null;
  if (vocab && action.kind === 'edit') call = vocab.edit(action.file, action.old, action.new);
  else if (vocab && action.kind === 'write') call = vocab.write(action.file, action.content);
  else if (vocab && action.kind === 'shell') call = vocab.shell(action.command, action.background);
  else if (vocab?.patch && action.kind === 'patch') call = vocab.patch(action.patch);
  else if (vocab && action.kind === 'read') call = vocab.read(action.file);
  const text = action.kind === 'end' ? action.text : call ? '' : 'no such tool here';
  const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
  if (body?.stream === false) {
    const message = call
      ? {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: nextId('call'),
              type: 'function',
              function: {
                name: call.name,
                arguments: typeof call.args === 'string' ? call.args : JSON.stringify(call.args),
              },
            },
          ],
        }
      : { role: 'assistant', content: text };
    return json(res, 200, {
      id,
      object: 'chat.completion',
      created,
      model,
      choices: [{ index: 0, message, finish_reason: call ? 'tool_calls' : 'stop' }],
      usage,
    });
  }
  const events: { data: unknown }[] = [{ data: chunk({ role: 'assistant', content: '' }, null) }];
  if (call) {
    const args = typeof call.args === 'string' ? call.args : JSON.stringify(call.args);
    events.push({
      data: chunk(
        {
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
    });
    events.push({
      data: chunk({ tool_calls: [{ index: 0, function: { arguments: args } }] }, null),
    });
    events.push({ data: { ...chunk({}, 'tool_calls'), usage } });
  } else {
    events.push({ data: chunk({ content: text }, null) });
    events.push({ data: { ...chunk({}, 'stop'), usage } });
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const e of events) res.write(`data: ${JSON.stringify(e.data)}\n\n`);
  res.write('data: [DONE]\n\n');
  res.end();
}

// ---------------------------------------------------------------- server

export async function startModelServer(
  api: ModelApi,
  script: Action[],
  opts: ServerOptions = {},
): Promise<ModelServer> {
  const maxRequests = opts.maxRequests ?? 60;
  const requests: LoggedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = req.url ?? '/';
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: any = null;
      try {
        body = raw ? JSON.parse(raw) : null;
      } catch {
        body = raw;
      }
      const entry: LoggedRequest = {
        time: Date.now(),
        method: req.method ?? 'GET',
        url,
        body,
        agentLoop: false,
        toolResults: [],
      };
      requests.push(entry);
      if (requests.length > maxRequests)
        return json(res, 500, {
          error: { message: `scripted model: more than ${maxRequests} requests` },
        });
      try {
        route(entry, res);
      } catch (e) {
        json(res, 500, { error: { message: `scripted model: ${String(e)}` } });
      }
    });
  });

  const stepAction = (step: number): Action => script[step] ?? { kind: 'end', text: 'Done.' };
  /** Answer the agent-loop request of `step`, after `opts.before` when there is one. */
  const answerStep = (res: http.ServerResponse, step: number, answer: () => void): void => {
    const wait = opts.before?.(step);
    if (!wait) return answer();
    wait.then(answer, (e) =>
      json(res, 500, { error: { message: `scripted model: ${String(e)}` } }),
    );
  };

  function route(entry: LoggedRequest, res: http.ServerResponse): void {
    const { url, body } = entry;
    if (api === 'chat' && url.includes('/models'))
      return json(res, 200, {
        object: 'list',
        data: [{ id: 'scripted', object: 'model', owned_by: 'scripted', created: 0 }],
      });
    if (entry.method !== 'POST')
      return json(res, 404, { error: { message: 'scripted model: not found' } });
    if (api === 'anthropic') {
      if (url.startsWith('/v1/messages/count_tokens')) return json(res, 200, { input_tokens: 1 });
      if (!url.startsWith('/v1/messages'))
        return json(res, 404, { error: { message: 'not found' } });
      const r = readAnthropic(body);
      entry.agentLoop = r.agentLoop;
      entry.toolResults = r.results;
      if (!r.agentLoop) {
        // Side requests (titles, quota probes), streaming or not: plain text.
        if (body?.stream) return answerAnthropic(res, body, { kind: 'end', text: 'ok' });
        return json(res, 200, {
          id: nextId('msg'),
          type: 'message',
          role: 'assistant',
          model: body?.model,
          content: [{ type: 'text', text: 'ok' }],
          stop_reason: 'end_turn',
          stop_sequence: null,
          usage: { input_tokens: 1, output_tokens: 1 },
        });
      }
      entry.step = r.calls;
      return answerStep(res, r.calls, () => answerAnthropic(res, body, stepAction(r.calls)));
    }
    if (api === 'chat') {
      if (url.includes('/models'))
        return json(res, 200, {
          object: 'list',
          data: [{ id: 'scripted', object: 'model', owned_by: 'scripted' }],
        });
      if (!url.includes('/chat/completions'))
        return json(res, 404, { error: { message: 'not found' } });
      const r = readChat(body, opts.vocab!);
      entry.agentLoop = r.agentLoop;
      entry.toolResults = r.results;
      if (!r.agentLoop) return answerChat(res, body, { kind: 'end', text: 'ok' }, opts.vocab);
      entry.step = r.calls;
      return answerStep(res, r.calls, () => answerChat(res, body, stepAction(r.calls), opts.vocab));
    }
    if (api === 'gemini') {
      if (url.includes(':countTokens')) return json(res, 200, { totalTokens: 1 });
      if (!/generateContent/i.test(url)) return json(res, 404, { error: { message: 'not found' } });
      const r = readGemini(body);
      entry.agentLoop = r.agentLoop;
      entry.toolResults = r.results;
      if (!r.agentLoop) return answerGeminiSide(res, url, body);
      entry.step = r.calls;
      return answerStep(res, r.calls, () => answerGemini(res, url, stepAction(r.calls)));
    }
    if (!url.startsWith('/v1/responses'))
      return json(res, 404, { error: { message: 'not found' } });
    const r = readOpenAI(body);
    entry.agentLoop = r.agentLoop;
    entry.toolResults = r.results;
    if (!r.agentLoop) return answerOpenAI(res, { kind: 'end', text: 'ok' });
    entry.step = r.calls;
    return answerStep(res, r.calls, () => answerOpenAI(res, stepAction(r.calls)));
  }

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
    api,
    port,
    origin: `http://127.0.0.1:${port}`,
    requests,
    agentRequests: () => requests.filter((r) => r.agentLoop),
    requestAtStep: (step) => requests.find((r) => r.agentLoop && r.step === step),
    close,
  };
}
