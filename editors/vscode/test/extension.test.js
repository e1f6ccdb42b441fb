'use strict';
// Scenario tests of the extension against the real daemon and model, with the stand-in
// vscode module.  PARLANCE_BIN names the daemon.  Run: node --test test/

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const path = require('path');
const { install } = require('./vscode-stub');

const { vscode, helpers } = install();
const extension = require('../extension');

const TIMEOUT = Number(process.env.PARLANCE_TEST_TIMEOUT || 240) * 1000;
const LINES = [
  'Project notes',
  'hey team, the launch slipped to march because the vendor is late again. sorry, we will fix the plan.',
  '',
  'Thanks',
];
const ORIGINAL = LINES.join('\n');
const state = helpers.state;

/** Poll `cond`; give up after `ms`, or as soon as the command `run` (if given) has ended. */
async function waitFor(cond, ms = TIMEOUT, what = 'condition', run = null) {
  const start = Date.now();
  for (;;) {
    const value = cond();
    if (value) return value;
    if (run && run.settled) throw new Error(`the command ended before ${what}: ${JSON.stringify(run.outcome, errorFields)}`);
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const errorFields = (key, value) => (value instanceof Error ? { message: value.message, code: value.code } : value);

/** Run a command, noting when it ends. */
function run(name, ...args) {
  const r = { settled: false, outcome: undefined };
  r.promise = vscode.commands.executeCommand(name, ...args).then((outcome) => {
    r.settled = true;
    r.outcome = outcome;
    return outcome;
  });
  return r;
}

/** An editor on ORIGINAL with line 2 selected. */
function editorWithLine2Selected() {
  return helpers.openEditor(ORIGINAL, new vscode.Selection(new vscode.Position(1, 0), new vscode.Position(1, LINES[1].length)));
}

function lastQuickPick() {
  return state.quickPicks[state.quickPicks.length - 1];
}

before(() => {
  assert.ok(process.env.PARLANCE_BIN, 'PARLANCE_BIN names the daemon');
  state.settings['parlance.binaryPath'] = path.resolve(process.env.PARLANCE_BIN);
  state.settings['parlance.variantCount'] = 1;
  extension.activate({ subscriptions: [] });
});

after(async () => {
  await extension.deactivate();
});

test('rewrite: variants stream into the QuickPick, picking one replaces the selection, one undo restores it', { timeout: TIMEOUT + 30000 }, async () => {
  const editor = editorWithLine2Selected();
  const quickPicks = state.quickPicks.length;
  const running = run('parlance.rewriteSelection', { tone: 'formal' });
  const qp = await waitFor(() => state.quickPicks.length > quickPicks && lastQuickPick(), 5000, 'the QuickPick');
  assert.ok(qp.visible, 'the QuickPick opens at once');
  const progress = state.progresses[state.progresses.length - 1];
  assert.equal(progress.options.location, vscode.ProgressLocation.Notification);
  assert.equal(progress.options.cancellable, true, 'the notification has a Cancel button');
  await waitFor(() => !qp.busy && qp.items.some((i) => i.variant), TIMEOUT, 'the variants', running);
  assert.ok(qp.history.some((h) => h.busy && h.items.length > 0 && h.items[0].detail), 'items appeared while streaming');
  const item = qp.items[0];
  assert.match(item.detail, /\S/);
  qp.pick(item);
  const outcome = await running.promise;
  assert.equal(outcome.status, 'picked');
  const want = [LINES[0], item.variant.text, ...LINES.slice(2)].join('\n');
  assert.equal(editor.document.getText(), want, 'the selection became the variant');
  assert.equal(editor.edits.length, 1, 'one edit');
  assert.deepEqual(editor.edits[0].options, { undoStopBefore: true, undoStopAfter: true });
  await vscode.commands.executeCommand('undo');
  assert.equal(editor.document.getText(), ORIGINAL, 'one undo restores the original');
  assert.equal(qp.visible, false);
});

test('rewrite: the notification\'s Cancel button sends $/cancelRequest and nothing changes', { timeout: TIMEOUT + 30000 }, async () => {
  const editor = editorWithLine2Selected();
  state.settings['parlance.variantCount'] = 3;
  const running = run('parlance.rewriteSelection');
  state.settings['parlance.variantCount'] = 1;
  const qp = await waitFor(() => lastQuickPick().visible && lastQuickPick(), 5000, 'the QuickPick');
  await waitFor(() => qp.items.length > 0 || !qp.busy, TIMEOUT, 'streaming', running);
  assert.ok(qp.busy, 'still writing when cancelled');
  state.progresses[state.progresses.length - 1].cancel();
  const outcome = await running.promise;
  assert.equal(outcome.status, 'cancelled');
  assert.equal(outcome.error.code, -32800, 'the daemon answered -32800');
  assert.equal(editor.document.getText(), ORIGINAL);
  assert.equal(qp.visible, false, 'the QuickPick closed');
  assert.equal(state.messages.error.length, 0, 'a cancel is no error');
});

test('rewrite: dismissing the QuickPick (Esc) cancels the request', { timeout: TIMEOUT + 30000 }, async () => {
  const editor = editorWithLine2Selected();
  const running = run('parlance.rewriteSelection', { tone: 'casual' });
  const qp = await waitFor(() => lastQuickPick().visible && lastQuickPick(), 5000, 'the QuickPick');
  await waitFor(() => qp.items.length > 0 || !qp.busy, TIMEOUT, 'streaming', running);
  qp.escape();
  const outcome = await running.promise;
  assert.equal(outcome.status, 'cancelled');
  assert.equal(outcome.error.code, -32800);
  assert.equal(editor.document.getText(), ORIGINAL);
});

test('a daemon error is shown with its message', { timeout: 60000 }, async () => {
  editorWithLine2Selected();
  const errors = state.messages.error.length;
  const outcome = await vscode.commands.executeCommand('parlance.rewriteSelection', { tone: 'no-such-tone' });
  assert.equal(outcome.status, 'error');
  assert.equal(state.messages.error.length, errors + 1);
  assert.equal(state.messages.error[errors], `Parlance: ${outcome.error.message}`);
});

test('the daemon is restarted when it dies, and the user is told', { timeout: 60000 }, async () => {
  const client = extension._internals.getClient();
  await client.start();
  const pid = client.pid;
  const warnings = state.messages.warning.length;
  process.kill(pid, 'SIGKILL');
  await waitFor(() => client.pid && client.pid !== pid && client.capabilities, 30000, 'a new daemon');
  assert.match(state.messages.warning[warnings], /exited.*restarting/);
});

test('summarize: the summary opens in a Markdown document', { timeout: TIMEOUT + 30000 }, async () => {
  helpers.openEditor(ORIGINAL, new vscode.Selection(new vscode.Position(0, 0), new vscode.Position(0, 0)));
  const outcome = await vscode.commands.executeCommand('parlance.summarize');
  assert.equal(outcome.status, 'done', outcome.error && outcome.error.message);
  assert.match(outcome.result.summary, /\S/);
  assert.ok(outcome.deltas > 0, 'the summary streamed');
  assert.equal(outcome.document.languageId, 'markdown');
  assert.ok(outcome.document.getText().includes(outcome.result.summary));
});

test('ask: the answer streams into the Parlance output', { timeout: TIMEOUT + 30000 }, async (t) => {
  const client = extension._internals.getClient();
  await client.start();
  if (!(client.capabilities.methods || []).includes('ask/stream')) {
    t.skip('the daemon has no ask/stream yet');
    return;
  }
  helpers.openEditor(ORIGINAL, new vscode.Selection(new vscode.Position(0, 0), new vscode.Position(0, 0)), 'untitled:ask');
  const outcome = await vscode.commands.executeCommand('parlance.ask', 'When is the launch now?');
  assert.equal(outcome.status, 'done', outcome.error && outcome.error.message);
  assert.match(outcome.answer, /\S/);
  assert.ok(state.output.join('').includes('Q: When is the launch now?'));
});
