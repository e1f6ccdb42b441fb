'use strict';
// JSON-RPC 2.0 over a child process's stdio with LSP framing (Content-Length headers).
// No dependencies: the framing is written here.

const { spawn } = require('child_process');
const { EventEmitter } = require('events');

/** Frame one message: `Content-Length: N\r\n\r\n{json}`. */
function encode(message) {
  const body = Buffer.from(JSON.stringify(message), 'utf8');
  return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body]);
}

/** Incremental decoder: feed it chunks, get whole messages back. */
class Decoder {
  constructor(maxBytes = 64 * 1024 * 1024) {
    this.buffer = Buffer.alloc(0);
    this.expected = -1;
    this.maxBytes = maxBytes;
  }

  /** Returns the messages completed by `chunk`; throws on a malformed header. */
  push(chunk) {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    const out = [];
    for (;;) {
      if (this.expected < 0) {
        const end = this.buffer.indexOf('\r\n\r\n');
        if (end < 0) {
          if (this.buffer.length > 8192) throw new Error('header block too long');
          return out;
        }
        const header = this.buffer.subarray(0, end).toString('ascii');
        const match = /^content-length:\s*(\d+)\s*$/im.exec(header);
        if (!match) throw new Error(`header without Content-Length: ${JSON.stringify(header.slice(0, 80))}`);
        this.expected = Number(match[1]);
        if (this.expected > this.maxBytes) throw new Error(`message of ${this.expected} bytes is too large`);
        this.buffer = this.buffer.subarray(end + 4);
      }
      if (this.buffer.length < this.expected) return out;
      const body = this.buffer.subarray(0, this.expected).toString('utf8');
      this.buffer = this.buffer.subarray(this.expected);
      this.expected = -1;
      out.push(JSON.parse(body));
    }
  }
}

/** An error answered by the other side: `code`, `message`, `data`. */
class ResponseError extends Error {
  constructor(error) {
    super(error && typeof error.message === 'string' ? error.message : 'unknown error');
    this.name = 'ResponseError';
    this.code = error && error.code;
    this.data = error && error.data;
  }
}

/**
 * A connection to a process speaking JSON-RPC on stdin/stdout.
 * Events: 'notification' (method, params), 'exit' (code, signal), 'stderr' (text).
 */
class Connection extends EventEmitter {
  constructor(command, args, options = {}) {
    super();
    this.nextId = 1;
    this.pending = new Map();
    this.decoder = new Decoder();
    this.exited = false;
    this.process = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], ...options });
    this.process.stdout.on('data', (chunk) => this._onData(chunk));
    this.process.stderr.on('data', (chunk) => this.emit('stderr', chunk.toString('utf8')));
    this.process.stdin.on('error', () => {}); // EPIPE after the process died: 'exit' reports it
    this.process.on('error', (err) => this._onExit(null, null, err));
    this.process.on('exit', (code, signal) => this._onExit(code, signal, null));
  }

  get pid() {
    return this.process.pid;
  }

  get running() {
    return !this.exited;
  }

  /** Send a request; returns { id, promise }. */
  request(method, params) {
    const id = this.nextId++;
    const promise = new Promise((resolve, reject) => {
      if (this.exited) {
        reject(new ResponseError({ code: -32099, message: 'the daemon is not running' }));
        return;
      }
      this.pending.set(id, { resolve, reject, method });
      this._write({ jsonrpc: '2.0', id, method, params });
    });
    return { id, promise };
  }

  notify(method, params) {
    if (!this.exited) this._write({ jsonrpc: '2.0', method, params });
  }

  kill(signal = 'SIGTERM') {
    if (!this.exited) this.process.kill(signal);
  }

  _write(message) {
    try {
      this.process.stdin.write(encode(message));
    } catch (err) {
      this._onExit(null, null, err);
    }
  }

  _onData(chunk) {
    let messages;
    try {
      messages = this.decoder.push(chunk);
    } catch (err) {
      this.emit('stderr', `parlance: bad frame from the daemon: ${err.message}\n`);
      this.kill();
      return;
    }
    for (const msg of messages) this._dispatch(msg);
  }

  _dispatch(msg) {
    if (msg.method !== undefined && msg.id !== undefined) {
      // A request from the server: this client implements none.
      this._write({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: `${msg.method}: not supported` } });
    } else if (msg.method !== undefined) {
      this.emit('notification', msg.method, msg.params);
    } else if (this.pending.has(msg.id)) {
      const { resolve, reject } = this.pending.get(msg.id);
      this.pending.delete(msg.id);
      if (msg.error) reject(new ResponseError(msg.error));
      else resolve(msg.result);
    }
  }

  _onExit(code, signal, err) {
    if (this.exited) return;
    this.exited = true;
    const why = err ? err.message : signal ? `signal ${signal}` : `status ${code}`;
    for (const { reject } of this.pending.values()) {
      reject(new ResponseError({ code: -32099, message: `the daemon exited (${why})` }));
    }
    this.pending.clear();
    this.emit('exit', code, signal, err);
  }
}

module.exports = { encode, Decoder, Connection, ResponseError };
