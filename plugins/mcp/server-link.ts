import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { secretForms, type Logger } from '../../core/index.js';
import { boundedFetch, MAX_MCP_MESSAGE_BYTES } from './bounded-fetch.js';
import { LineBuffer } from './line-buffer.js';
import type { McpServerEntry } from './mcp-config.js';
import { framedResult, type ToolResult } from './results.js';

export type LinkState = 'starting' | 'up' | 'down' | 'off';

export interface LinkTiming {
  /** First wait before a restart; it doubles on each failure in a row, up to `maxBackoffMs`. */
  backoffMs: number;
  maxBackoffMs: number;
}

/** A server that stays up this long has its backoff forgotten: its next failure restarts it quickly again. */
const STABLE_MS = 60_000;
const STDERR_TAIL = 400;

/**
 * The SDK, loaded when the first server starts: it weighs ~0.2 s of start-up (zod and its schemas), which a bot
 * without MCP servers should not pay.
 */
async function loadSdk() {
  const [client, stdio, http, types, shared] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
    import('@modelcontextprotocol/sdk/shared/stdio.js'),
  ]);
  return { Client: client.Client, StdioClientTransport: stdio.StdioClientTransport, StreamableHTTPClientTransport: http.StreamableHTTPClientTransport, ErrorCode: types.ErrorCode, McpError: types.McpError, deserializeMessage: shared.deserializeMessage };
}
type Sdk = Awaited<ReturnType<typeof loadSdk>>;
let sdkLoading: Promise<Sdk> | undefined;
const sdk = () => (sdkLoading ??= loadSdk());

/** The SDK's error code of a request that timed out or whose connection closed, else undefined. */
function mcpErrorCode(err: unknown, loaded: Sdk): 'timeout' | 'closed' | undefined {
  if (!(err instanceof loaded.McpError)) return undefined;
  if (err.code === loaded.ErrorCode.RequestTimeout) return 'timeout';
  if (err.code === loaded.ErrorCode.ConnectionClosed) return 'closed';
  return undefined;
}

/** Why a start or a call failed, in words an owner acts on. */
function describe(err: unknown, entry: McpServerEntry, loaded: Sdk): string {
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'ENOENT' && entry.command) return `the command "${entry.command}" was not found`;
  if (e?.code === 'EACCES' && entry.command) return `the command "${entry.command}" is not executable`;
  const code = mcpErrorCode(err, loaded);
  if (code === 'timeout') return 'it did not answer in time';
  if (code === 'closed') return 'the connection closed';
  return (e?.message ?? String(err)).slice(0, 300);
}

/**
 * One declared MCP server kept running: started, its tools listed, restarted with backoff when it fails to start,
 * exits or stops answering. While it is down it offers no tools. It never throws into the bot.
 */
export class McpServerLink {
  state: LinkState;
  /** Why it is down (for the start log and the dashboard). */
  problem: string | undefined;
  tools: Tool[] = [];
  restarts = 0;
  private client: Client | undefined;
  private failuresInRow = 0;
  private upSince = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private stderrTail = '';
  private nextRetryAt = 0;
  /** Set when the running server's message passed the bound (the connection is then closed). */
  private cutOff = false;
  /** The running stdio server's process id (none over HTTP). */
  private serverPid: () => number | null = () => null;
  /** The entry's env and header values (see `hide`). */
  private readonly secrets: string[];

  constructor(
    readonly entry: McpServerEntry,
    private readonly log: Logger,
    private readonly timing: LinkTiming,
    /** Called whenever the state or the tool list changes. */
    private readonly onChange: () => void,
  ) {
    this.state = entry.enabled ? 'starting' : 'off';
    const headers = Object.values(entry.headers ?? {});
    const credentials = headers.map((v) => v.trim().split(/\s+/).slice(1).join(' ')).filter(Boolean);
    const values = [...Object.values(entry.env ?? {}), ...headers, ...credentials].filter((v) => v.length >= 6);
    // Each also escaped or encoded as a server echoing it may write it (JSON, URL, base64); longest first, so a
    // whole header value is hidden before its credential part.
    this.secrets = [...new Set(values.flatMap(secretForms))].sort((a, b) => b.length - a.length);
  }

  get name(): string {
    return this.entry.name;
  }

  /** Seconds until the next restart, while down. */
  retryInSeconds(): number {
    return Math.max(0, Math.ceil((this.nextRetryAt - Date.now()) / 1000));
  }

  /** The first start; resolves once it is up or has failed (a restart is then scheduled). */
  start(): Promise<void> {
    if (!this.entry.enabled) return Promise.resolve();
    return this.connect();
  }

  private transport({ StdioClientTransport, StreamableHTTPClientTransport, deserializeMessage }: Sdk): Transport {
    const { entry } = this;
    // Each message the server sends is bounded by the bytes received (see bounded-fetch.ts).
    if (entry.url) return new StreamableHTTPClientTransport(new URL(entry.url), { requestInit: { headers: entry.headers ?? {} }, fetch: boundedFetch(entry.name) });
    // Only what the entry names (the SDK adds PATH, HOME, USER, LOGNAME, SHELL, TERM): never the bot's keys. Each line
    // (one message) is bounded as over HTTP: past the bound the SDK drops what it buffered and closes the server,
    // so a server printing an endless line costs at most the bound, and is restarted.
    const stdio = new StdioClientTransport({ command: entry.command!, args: entry.args ?? [], env: { ...(entry.env ?? {}) }, cwd: entry.cwd, stderr: 'pipe', maxBufferSize: MAX_MCP_MESSAGE_BYTES });
    this.serverPid = () => stdio.pid;
    // The SDK's reader joins all it holds at every chunk (quadratic in a long line): ours joins once per line.
    const reader = stdio as unknown as { _readBuffer?: unknown };
    if (!reader._readBuffer) throw new Error('the MCP SDK changed its stdio reader; the bound on a server\'s lines cannot be set');
    reader._readBuffer = new LineBuffer(MAX_MCP_MESSAGE_BYTES, deserializeMessage);
    stdio.stderr?.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString()).slice(-STDERR_TAIL);
    });
    return stdio;
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    this.state = 'starting';
    this.stderrTail = '';
    let loaded: Sdk;
    try {
      loaded = await sdk();
    } catch (err) {
      this.failed(`failed to start: the MCP SDK could not be loaded (${(err as Error).message})`);
      return;
    }
    const client = new loaded.Client({ name: 'wa-assistant-bot', version: '1.0.0' });
    this.cutOff = false;
    client.onclose = () => {
      if (this.client === client) this.lost(this.cutOff ? this.cutOffReason() : 'it exited or closed the connection');
    };
    client.onerror = (err) => {
      // The SDK's stdio reader past its bound (maxBufferSize): it closes the server; calls waiting on it fail saying why.
      if (/ReadBuffer exceeded maximum size/.test(err.message) && !this.cutOff) {
        this.cutOff = true;
        this.log.warn({ server: this.name, bound: MAX_MCP_MESSAGE_BYTES }, `MCP server "${this.name}" ${this.cutOffReason()}; it is closed and restarted`);
        // Stopped at once: the SDK would first wait up to 2 s for it to exit, reading (and dropping) all it writes.
        const pid = this.serverPid();
        if (pid) {
          try {
            process.kill(pid, 'SIGTERM');
          } catch {
            // Gone already.
          }
        }
      }
      this.log.debug({ server: this.name, err: this.hide(err.message) }, 'MCP server transport error');
    };
    // Starting and listing tools are bounded: a server that hangs at start is restarted, not waited on.
    const timeout = this.entry.startTimeoutMs;
    try {
      await client.connect(this.transport(loaded), { timeout });
      const tools: Tool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : undefined, { timeout });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor && tools.length < 1000);
      if (this.stopped) {
        await client.close().catch(() => undefined);
        return;
      }
      this.client = client;
      this.tools = tools;
      this.state = 'up';
      this.problem = undefined;
      this.upSince = Date.now();
      this.log.info({ server: this.name, tools: tools.length, restarts: this.restarts }, `MCP server "${this.name}" is up with ${tools.length} tool(s)`);
      this.onChange();
    } catch (err) {
      await client.close().catch(() => undefined);
      this.failed(`failed to start: ${describe(err, this.entry, loaded)}`);
    }
  }

  /** A running server went away: drop its tools and restart it. */
  private lost(reason: string): void {
    this.client = undefined;
    if (Date.now() - this.upSince > STABLE_MS) this.failuresInRow = 0;
    this.failed(reason);
  }

  private failed(reason: string): void {
    this.client = undefined;
    this.tools = [];
    if (this.stopped) return;
    const stderr = this.stderrTail.trim().split('\n').at(-1)?.trim();
    this.problem = this.hide(stderr ? `${reason} (it said: ${stderr.slice(0, 200)})` : reason);
    this.state = 'down';
    const wait = Math.min(this.timing.backoffMs * 2 ** this.failuresInRow, this.timing.maxBackoffMs);
    this.failuresInRow++;
    this.nextRetryAt = Date.now() + wait;
    this.log.warn({ server: this.name, reason: this.problem, retryInMs: wait }, `MCP server "${this.name}" is down: ${this.problem}; its tools are not offered; restarting in ${Math.ceil(wait / 1000)} s`);
    this.onChange();
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.restarts++;
      void this.connect();
    }, wait);
    this.timer.unref();
  }

  /**
   * The entry's own env values and headers (its tokens) replaced by `[hidden]`: applied to everything the link passes
   * on — log lines, the dashboard's status, tool results and errors the model reads (and so the chat reply), tool
   * descriptions. A header's credential is hidden on its own too (`Bearer <token>` → the token), since servers echo
   * it without its scheme; and each in the forms a server may echo it in (JSON-escaped, URL-encoded, base64). Values
   * shorter than 6 characters are left (they would blank out ordinary words).
   */
  hide(text: string): string {
    let out = text;
    for (const secret of this.secrets) if (out.includes(secret)) out = out.split(secret).join('[hidden]');
    return out;
  }

  /** Calls one of its tools with the entry's timeout; the answer is framed text, errors included (never thrown). */
  async call(tool: string, args: Record<string, unknown>): Promise<string> {
    const client = this.client;
    if (!client) return `The MCP server "${this.name}" is down (${this.problem ?? 'starting'}); the tool "${tool}" cannot run now.`;
    try {
      // Said before the call (its timeout starts with it): what a stuck turn was waiting for. Never the arguments.
      this.log.debug({ server: this.name, tool, timeoutMs: this.entry.timeoutMs }, `MCP tool "${tool}" of "${this.name}" called`);
      const result = (await client.callTool({ name: tool, arguments: args }, undefined, { timeout: this.entry.timeoutMs })) as ToolResult;
      return this.hide(framedResult(this.name, tool, result));
    } catch (err) {
      const loaded = await sdk();
      const reason = this.cutOff ? this.cutOffReason() : this.hide(describe(err, this.entry, loaded));
      this.log.warn({ server: this.name, tool, reason }, `MCP tool "${tool}" of "${this.name}" failed: ${reason}`);
      if (mcpErrorCode(err, loaded) === 'timeout') {
        void this.checkAlive(client);
        return `The tool "${tool}" of the MCP server "${this.name}" did not answer within ${this.entry.timeoutMs / 1000} s and was cancelled.`;
      }
      return `The tool "${tool}" of the MCP server "${this.name}" failed: ${reason}.`;
    }
  }

  private cutOffReason(): string {
    return `sent a message larger than ${MAX_MCP_MESSAGE_BYTES / (1024 * 1024)} MB; it was cut off unread`;
  }

  /** After a timed-out call: a server that no longer answers a ping is hung, and is restarted. */
  private async checkAlive(client: Client): Promise<void> {
    try {
      await client.ping({ timeout: Math.min(this.entry.timeoutMs, 5000) });
    } catch {
      if (this.client !== client) return;
      this.client = undefined;
      await client.close().catch(() => undefined);
      this.lost('it stopped answering');
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    this.tools = [];
    await client?.close().catch(() => undefined);
  }
}
