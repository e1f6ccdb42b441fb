'use strict';
// The Parlance daemon as seen by the extension: started on first use, initialized once,
// restarted (and the user told) when it dies, every request asynchronous and cancellable.

const { Connection, ResponseError } = require('./jsonrpc');

const CANCELLED = -32800;

class ParlanceClient {
  /**
   * @param {() => {command: string, args: string[], env?: object}} commandLine  read at each start
   * @param {{onRestart?: (why: string) => void, onGiveUp?: (why: string) => void, log?: (text: string) => void}} hooks
   */
  constructor(commandLine, hooks = {}) {
    this.commandLine = commandLine;
    this.hooks = hooks;
    this.conn = null;
    this.ready = null; // Promise of the initialize result for this.conn
    this.capabilities = null;
    this.progress = new Map(); // workDoneToken -> handler(value)
    this.tokenSeq = 0;
    this.restarts = [];
    this.stopping = false;
    this.stderrTail = [];
    this.docs = new Map(); // uri -> text last sent
  }

  get running() {
    return !!this.conn && this.conn.running;
  }

  get pid() {
    return this.running ? this.conn.pid : 0;
  }

  /** Start the daemon if needed; resolves once initialize has answered. */
  start() {
    if (this.running) return this.ready;
    const { command, args, env } = this.commandLine();
    const conn = new Connection(command, args, env ? { env } : {});
    this.conn = conn;
    this.stopping = false;
    this.capabilities = null;
    this.stderrTail = [];
    this.docs.clear();
    conn.on('notification', (method, params) => this._onNotification(method, params));
    conn.on('stderr', (text) => {
      for (const line of text.split('\n').filter(Boolean)) {
        this.stderrTail.push(line);
        if (this.stderrTail.length > 20) this.stderrTail.shift();
        if (this.hooks.log) this.hooks.log(line);
      }
    });
    conn.on('exit', (code, signal, err) => this._onExit(conn, code, signal, err));
    this.ready = conn
      .request('initialize', {
        processId: process.pid,
        clientInfo: { name: 'parlance-vscode', version: '0.1.0' },
        capabilities: { window: { workDoneProgress: true } },
      })
      .promise.then((result) => {
        this.capabilities = (result && result.capabilities) || {};
        conn.notify('initialized', {});
        return result;
      });
    this.ready.catch(() => {}); // reported to whoever awaits it
    return this.ready;
  }

  /**
   * Send a request. With `onProgress`, a workDoneToken is added and `$/progress` values for it
   * are passed on. Returns { promise, cancel() }; a cancelled request rejects with code -32800.
   */
  request(method, params, onProgress) {
    let cancelled = false;
    let finished = false;
    let sent = null;
    let token = null;
    if (onProgress) {
      token = `parlance-vscode-${process.pid}-${++this.tokenSeq}`;
      this.progress.set(token, onProgress);
      params = { ...params, workDoneToken: token };
    }
    const promise = (async () => {
      try {
        await this.start();
        if (cancelled) throw new ResponseError({ code: CANCELLED, message: 'cancelled' });
        sent = { conn: this.conn, ...this.conn.request(method, params) };
        return await sent.promise;
      } finally {
        finished = true;
        if (token) this.progress.delete(token);
      }
    })();
    const cancel = () => {
      if (cancelled || finished) return;
      cancelled = true;
      if (sent && sent.conn === this.conn && this.running) sent.conn.notify('$/cancelRequest', { id: sent.id });
    };
    return { promise, cancel, get id() { return sent ? sent.id : null; } };
  }

  /** Open (or update) a document on the daemon, once per distinct text. */
  async syncDocument(uri, text) {
    await this.start();
    const known = this.docs.get(uri);
    if (known === text) return;
    await this.request(known === undefined ? 'document/open' : 'document/change', { uri, text, format: 'text' }).promise;
    this.docs.set(uri, text);
  }

  /** shutdown, then exit; killed if it lingers. */
  async stop() {
    if (!this.running) return;
    const conn = this.conn;
    this.stopping = true;
    try {
      await Promise.race([conn.request('shutdown', {}).promise, new Promise((r) => setTimeout(r, 2000))]);
    } catch (_) {
      // exiting anyway
    }
    conn.notify('exit', {});
    await new Promise((resolve) => {
      if (!conn.running) return resolve();
      const timer = setTimeout(() => {
        conn.kill('SIGKILL');
        resolve();
      }, 2000);
      conn.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  _onNotification(method, params) {
    if (method !== '$/progress' || !params) return;
    const handler = this.progress.get(params.token);
    if (handler) handler(params.value || {});
  }

  _onExit(conn, code, signal, err) {
    if (conn !== this.conn) return;
    this.conn = null;
    if (this.stopping) return;
    if (err) {
      // could not even start (no such binary): restarting would fail the same way
      if (this.hooks.onGiveUp) this.hooks.onGiveUp(`could not start the daemon: ${err.message}`);
      return;
    }
    const tail = this.stderrTail.length ? `: ${this.stderrTail[this.stderrTail.length - 1]}` : '';
    const why = `the daemon exited (${err ? err.message : signal ? `signal ${signal}` : `status ${code}`})${tail}`;
    const now = Date.now();
    this.restarts = this.restarts.filter((t) => now - t < 60000);
    if (this.restarts.length >= 3) {
      if (this.hooks.onGiveUp) this.hooks.onGiveUp(why);
      return;
    }
    this.restarts.push(now);
    if (this.hooks.onRestart) this.hooks.onRestart(why);
    this.start().catch(() => {});
  }
}

module.exports = { ParlanceClient, ResponseError, CANCELLED };
