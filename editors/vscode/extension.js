'use strict';
// Parlance for VS Code: rewrite the selection into tone variants (a QuickPick filled as they
// stream), summarize the document, ask about it — through the local `parlance --stdio` daemon.
// Plain JavaScript, no dependencies; the JSON-RPC framing is in lib/jsonrpc.js.

const vscode = require('vscode');
const fs = require('fs');
const path = require('path');
const { ParlanceClient, CANCELLED } = require('./lib/client');

let client = null;
let output = null;

function config() {
  return vscode.workspace.getConfiguration('parlance');
}

/** Resolve a command name against PATH, so a missing binary is reported before spawning. */
function findExecutable(name) {
  const expanded = name.replace(/^~(?=$|\/)/, process.env.HOME || '~');
  if (expanded.includes(path.sep)) return isExecutable(expanded) ? expanded : null;
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    const candidate = path.join(dir || '.', expanded);
    if (isExecutable(candidate)) return candidate;
  }
  return null;
}

function isExecutable(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch (_) {
    return false;
  }
}

function commandLine() {
  const c = config();
  const wanted = c.get('binaryPath') || process.env.PARLANCE_BIN || 'parlance';
  const command = findExecutable(wanted);
  if (!command) throw new Error(`daemon not found: ${wanted} (set "parlance.binaryPath")`);
  const args = ['--stdio'];
  const model = c.get('modelPath');
  if (model) args.push('--model', model.replace(/^~(?=$|\/)/, process.env.HOME || '~'));
  args.push(...(c.get('extraArgs') || []));
  return { command, args };
}

function getClient() {
  if (!client) {
    client = new ParlanceClient(commandLine, {
      onRestart: (why) => vscode.window.showWarningMessage(`Parlance: ${why}; restarting it.`),
      onGiveUp: (why) => vscode.window.showErrorMessage(`Parlance: ${why}; not restarting it (run "Parlance: Restart").`),
      log: (line) => output && output.appendLine(`[daemon] ${line}`),
    });
  }
  return client;
}

function reportError(err) {
  const message = err && err.message ? err.message : String(err);
  vscode.window.showErrorMessage(`Parlance: ${message}`);
}

const isCancel = (err) => !!err && err.code === CANCELLED;

/** A string from the structured object streamed so far (`partial`), if there is one. */
function partialField(value, field) {
  const p = value && value.partial;
  return p && typeof p === 'object' && typeof p[field] === 'string' ? p[field] : null;
}

function oneLine(text, max = 80) {
  const flat = String(text).replace(/\s+/g, ' ').trim();
  return flat.length > max ? `…${flat.slice(flat.length - max + 1)}` : flat;
}

function clock(seconds) {
  const t = Math.floor(seconds);
  return `${String(Math.floor(t / 60)).padStart(2, '0')}:${String(t % 60).padStart(2, '0')}`;
}

function variantTitle(v, i) {
  const bits = [v.tone, v.audience].filter((x) => typeof x === 'string' && x);
  if (typeof v.formalityScore === 'number') bits.push(`formality ${v.formalityScore.toFixed(2)}`);
  return `${i + 1}. ${bits.join(', ') || 'variant'}`;
}

/**
 * Parlance: Rewrite Selection. The QuickPick opens at once and fills as variants stream;
 * picking one replaces the selection in one edit (one undo step). The notification's Cancel
 * button, or dismissing the QuickPick, sends $/cancelRequest.
 * Resolves to {status: 'picked'|'cancelled'|'dismissed'|'error'|'none', ...} (for tests).
 */
async function rewriteSelection(options = {}) {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    vscode.window.showErrorMessage('Parlance: no active editor.');
    return { status: 'none' };
  }
  const document = editor.document;
  const range = editor.selection.isEmpty ? document.lineAt(editor.selection.active.line).range : editor.selection;
  const original = document.getText(range);
  if (!original.trim()) {
    vscode.window.showErrorMessage('Parlance: nothing to rewrite — select some text.');
    return { status: 'none' };
  }
  const c = config();
  const tone = options.tone || c.get('defaultTone');
  const params = { text: original };
  if (tone) params.tones = String(tone).split(/[,\s]+/).filter(Boolean);
  if (c.get('audience')) params.audience = c.get('audience');
  if (c.get('variantCount')) params.count = c.get('variantCount');
  if (c.get('instructions')) params.instructions = c.get('instructions');

  const streams = new Map(); // part (variation id) -> {text so far, finished variation}
  let variants = null;
  let phase = '';
  const quickPick = vscode.window.createQuickPick();
  quickPick.title = 'Parlance: rewrite';
  quickPick.placeholder = 'Writing variants… (Esc cancels)';
  quickPick.matchOnDetail = true;
  quickPick.busy = true;
  quickPick.items = [];
  const refresh = () => {
    if (variants) {
      quickPick.items = variants.map((v, i) => ({ label: variantTitle(v, i), detail: v.text, variant: v }));
    } else {
      quickPick.items = [...streams.values()].map((stream, i) => ({
        label: stream.finished ? `${variantTitle(stream.finished, i)} (done)` : `${i + 1}. writing…`,
        detail: stream.text,
      }));
    }
  };
  quickPick.show();

  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'Parlance: rewriting', cancellable: true },
    (progress, token) =>
      new Promise((resolve) => {
        let settled = false;
        const finish = (outcome) => {
          if (!settled) {
            settled = true;
            resolve(outcome);
          }
        };
        const call = getClient().request('compose/variations', params, (value) => {
          if (value.phase && value.phase !== phase) {
            phase = value.phase;
            progress.report({ message: phase });
          }
          const part = value.part == null ? '' : String(value.part);
          if (part === 'analysis' || part === 'prefix') return;
          const stream = streams.get(part) || { text: '', finished: null };
          if (value.phase === 'done' && partialField(value, 'text') !== null) {
            // a finished variation: its final text, tone and scores
            stream.finished = value.partial;
            stream.text = value.partial.text;
          } else if (typeof value.delta === 'string' && value.delta) {
            stream.text += value.delta;
          } else {
            return;
          }
          streams.set(part, stream);
          if (!variants) refresh();
        });
        token.onCancellationRequested(() => call.cancel());
        let picking = false;
        quickPick.onDidHide(() => {
          call.cancel();
          quickPick.dispose();
          if (variants && !picking) finish({ status: 'dismissed', variants });
        });
        quickPick.onDidAccept(async () => {
          const item = quickPick.selectedItems[0];
          if (!item || !item.variant) {
            vscode.window.showInformationMessage('Parlance: still writing — pick when the variants are done.');
            return;
          }
          picking = true;
          quickPick.hide();
          const ok = await replace(editor, range, original, item.variant.text);
          finish(ok ? { status: 'picked', text: item.variant.text, variants } : { status: 'error', variants });
        });
        call.promise.then(
          (result) => {
            variants = (result && result.variations) || [];
            quickPick.busy = false;
            if (!variants.length) {
              vscode.window.showErrorMessage('Parlance: the daemon returned no variants.');
              finish({ status: 'error', variants });
              quickPick.hide();
              return;
            }
            quickPick.placeholder = 'Pick a variant to replace the selection';
            refresh();
          },
          (err) => {
            quickPick.busy = false;
            if (isCancel(err)) {
              finish({ status: 'cancelled', error: err });
            } else {
              reportError(err);
              finish({ status: 'error', error: err });
            }
            quickPick.hide();
          },
        );
      }),
  );
}

/** Replace `range` (still holding `original`) with `text` as one edit: one undo step. */
async function replace(editor, range, original, text) {
  const document = editor.document;
  if (document.getText(range) !== original) {
    vscode.window.showErrorMessage('Parlance: the selection changed while rewriting; not replacing it.');
    return false;
  }
  let target = vscode.window.visibleTextEditors.find((e) => e.document === document);
  if (!target) target = await vscode.window.showTextDocument(document);
  const ok = await target.edit((builder) => builder.replace(range, text), { undoStopBefore: true, undoStopAfter: true });
  if (!ok) vscode.window.showErrorMessage('Parlance: the edit was rejected.');
  return ok;
}

function documentText(editor) {
  return editor.selection && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : editor.document.getText();
}

function summaryMarkdown(r) {
  const lines = ['# Summary', '', r.summary || ''];
  const list = (title, items) => {
    if (Array.isArray(items) && items.length) lines.push('', `## ${title}`, '', ...items.map((x) => `- ${x}`));
  };
  list('Main topics', r.mainTopics);
  list('Key takeaways', r.keyTakeaways);
  const meta = [];
  if (r.targetAudience) meta.push(`Audience: ${r.targetAudience}`);
  if (r.engagementLevel) meta.push(`engagement: ${r.engagementLevel}`);
  if (meta.length) lines.push('', meta.join(' · '));
  return `${lines.join('\n')}\n`;
}

/** Parlance: Summarize — the selection, or the whole document; result in a Markdown tab. */
async function summarize() {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    vscode.window.showErrorMessage('Parlance: no active editor.');
    return { status: 'none' };
  }
  const text = documentText(editor);
  if (!text.trim()) {
    vscode.window.showErrorMessage('Parlance: nothing to summarize.');
    return { status: 'none' };
  }
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'Parlance: summarizing', cancellable: true },
    async (progress, token) => {
      let deltas = 0;
      const call = getClient().request('analysis/summarize', { text }, (value) => {
        if (typeof value.delta === 'string') deltas++;
        const partial = partialField(value, 'summary');
        if (partial) progress.report({ message: oneLine(partial) });
        else if (value.message) progress.report({ message: value.message });
      });
      token.onCancellationRequested(() => call.cancel());
      try {
        const result = await call.promise;
        const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: summaryMarkdown(result) });
        await vscode.window.showTextDocument(doc, { preview: true, viewColumn: vscode.ViewColumn.Beside });
        return { status: 'done', result, deltas, document: doc };
      } catch (err) {
        if (isCancel(err)) return { status: 'cancelled', error: err };
        reportError(err);
        return { status: 'error', error: err };
      }
    },
  );
}

/** Parlance: Ask — a question about the document; the answer streams into the Parlance output. */
async function ask(question) {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    vscode.window.showErrorMessage('Parlance: no active editor.');
    return { status: 'none' };
  }
  if (typeof question !== 'string') {
    question = await vscode.window.showInputBox({ prompt: 'Ask Parlance about this document', ignoreFocusOut: true });
  }
  if (!question || !question.trim()) return { status: 'none' };
  const document = editor.document;
  const text = document.getText();
  if (!text.trim()) {
    vscode.window.showErrorMessage('Parlance: the document is empty.');
    return { status: 'none' };
  }
  const uri = document.uri.toString();
  output.show(true);
  output.appendLine(`\nQ: ${question}`);
  output.append('A: ');
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'Parlance: answering', cancellable: true },
    async (progress, token) => {
      let shown = '';
      let current = null;
      let cancelled = false;
      token.onCancellationRequested(() => {
        cancelled = true;
        if (current) current.cancel();
      });
      const show = (answer) => {
        if (answer.startsWith(shown)) output.append(answer.slice(shown.length));
        else output.append(`\n${answer}`);
        shown = answer;
      };
      try {
        await getClient().syncDocument(uri, text);
        if (cancelled) return { status: 'cancelled' };
        let raw = '';
        current = getClient().request('ask/stream', { uri, question }, (value) => {
          if (typeof value.delta !== 'string') return;
          const partial = partialField(value, 'answer');
          if (partial !== null) show(partial);
          else if (!value.partial) show((raw += value.delta));
        });
        const result = await current.promise;
        if (typeof result.answer === 'string') show(result.answer);
        output.appendLine('');
        for (const c of result.citations || []) {
          const where = typeof c.start === 'number' ? `${clock(c.start)}–${clock(typeof c.end === 'number' ? c.end : c.start)}` : `segment ${c.segmentId}`;
          output.appendLine(`  [${where}] ${String(c.text || '').replace(/\s+/g, ' ')}`);
        }
        if (result.confidence !== undefined) output.appendLine(`  confidence: ${result.confidence}`);
        if (Array.isArray(result.relatedTopics) && result.relatedTopics.length) output.appendLine(`  related: ${result.relatedTopics.join(', ')}`);
        return { status: 'done', result, answer: shown };
      } catch (err) {
        output.appendLine(isCancel(err) ? ' (cancelled)' : ` (failed: ${err.message})`);
        if (isCancel(err)) return { status: 'cancelled', error: err };
        reportError(err);
        return { status: 'error', error: err };
      }
    },
  );
}

async function restart() {
  if (client) await client.stop();
  client = null;
  try {
    await getClient().start();
    vscode.window.showInformationMessage('Parlance: daemon restarted.');
  } catch (err) {
    reportError(err);
  }
}

function activate(context) {
  output = vscode.window.createOutputChannel('Parlance');
  const guard = (fn) => async (...args) => {
    try {
      return await fn(...args);
    } catch (err) {
      reportError(err);
      return { status: 'error', error: err };
    }
  };
  context.subscriptions.push(
    output,
    vscode.commands.registerCommand('parlance.rewriteSelection', guard(rewriteSelection)),
    vscode.commands.registerCommand('parlance.summarize', guard(summarize)),
    vscode.commands.registerCommand('parlance.ask', guard(ask)),
    vscode.commands.registerCommand('parlance.restart', guard(restart)),
    { dispose: () => deactivate() },
  );
}

function deactivate() {
  const c = client;
  client = null;
  return c ? c.stop() : undefined;
}

module.exports = { activate, deactivate, _internals: { getClient: () => getClient() } };
