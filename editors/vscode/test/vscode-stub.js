'use strict';
// A small stand-in for the `vscode` module: only what extension.js calls, plus hooks for the
// tests to play the user (accept a QuickPick item, press Esc, press a notification's Cancel,
// undo). Documents keep an undo stack where each TextEditor.edit() is one step, as in VS Code.

const Module = require('module');

function event() {
  const listeners = [];
  const on = (listener) => {
    listeners.push(listener);
    return { dispose: () => listeners.splice(listeners.indexOf(listener) >>> 0, 1) };
  };
  on.fire = (...args) => [...listeners].forEach((l) => l(...args));
  return on;
}

class Position {
  constructor(line, character) {
    this.line = line;
    this.character = character;
  }
}

class Range {
  constructor(a, b, c, d) {
    if (typeof a === 'number') {
      this.start = new Position(a, b);
      this.end = new Position(c, d);
    } else {
      this.start = a;
      this.end = b;
    }
  }
  get isEmpty() {
    return this.start.line === this.end.line && this.start.character === this.end.character;
  }
}

class Selection extends Range {
  constructor(anchor, active) {
    const before = anchor.line < active.line || (anchor.line === active.line && anchor.character <= active.character);
    super(before ? anchor : active, before ? active : anchor);
    this.anchor = anchor;
    this.active = active;
  }
}

class TextDocument {
  constructor(text, uri = 'untitled:Untitled-1', languageId = 'plaintext') {
    this.text = text;
    this.uri = { toString: () => uri, fsPath: uri };
    this.languageId = languageId;
    this.version = 1;
    this.undoStack = [];
  }
  offsetAt(pos) {
    const lines = this.text.split('\n');
    let offset = 0;
    for (let i = 0; i < pos.line; i++) offset += lines[i].length + 1;
    return offset + pos.character;
  }
  getText(range) {
    return range ? this.text.slice(this.offsetAt(range.start), this.offsetAt(range.end)) : this.text;
  }
  lineAt(line) {
    const text = this.text.split('\n')[line];
    return { text, range: new Range(line, 0, line, text.length) };
  }
  get lineCount() {
    return this.text.split('\n').length;
  }
  _replace(edits) {
    this.undoStack.push(this.text);
    // apply from the end so offsets stay valid
    const sorted = edits.map((e) => [this.offsetAt(e.range.start), this.offsetAt(e.range.end), e.text]).sort((x, y) => y[0] - x[0]);
    for (const [from, to, text] of sorted) this.text = this.text.slice(0, from) + text + this.text.slice(to);
    this.version++;
  }
  _undo() {
    if (this.undoStack.length) {
      this.text = this.undoStack.pop();
      this.version++;
    }
  }
}

class TextEditor {
  constructor(document, selection) {
    this.document = document;
    this.selection = selection;
    this.edits = [];
  }
  async edit(callback, options) {
    const edits = [];
    callback({ replace: (range, text) => edits.push({ range, text }), insert: (pos, text) => edits.push({ range: new Range(pos, pos), text }) });
    this.edits.push({ edits, options });
    this.document._replace(edits);
    return true;
  }
}

function createStub() {
  const state = {
    settings: {},
    messages: { error: [], warning: [], info: [] },
    quickPicks: [],
    progresses: [],
    commands: new Map(),
    openedDocuments: [],
    output: [],
    inputBoxAnswers: [],
  };

  const window = {
    activeTextEditor: undefined,
    visibleTextEditors: [],
    showErrorMessage: async (m) => void state.messages.error.push(m),
    showWarningMessage: async (m) => void state.messages.warning.push(m),
    showInformationMessage: async (m) => void state.messages.info.push(m),
    showInputBox: async () => state.inputBoxAnswers.shift(),
    createOutputChannel: (name) => ({
      name,
      append: (t) => state.output.push(t),
      appendLine: (t) => state.output.push(`${t}\n`),
      show: () => {},
      dispose: () => {},
    }),
    async showTextDocument(document) {
      let editor = window.visibleTextEditors.find((e) => e.document === document);
      if (!editor) {
        editor = new TextEditor(document, new Selection(new Position(0, 0), new Position(0, 0)));
        window.visibleTextEditors.push(editor);
      }
      window.activeTextEditor = editor;
      return editor;
    },
    createQuickPick() {
      const onDidAccept = event();
      const onDidHide = event();
      let items = [];
      let busy = false;
      const qp = {
        title: '', placeholder: '', matchOnDetail: false, selectedItems: [], activeItems: [],
        visible: false, disposed: false, history: [],
        get items() { return items; },
        set items(v) { items = v; qp.history.push({ busy, items: v.map((i) => ({ ...i })) }); },
        get busy() { return busy; },
        set busy(v) { busy = v; },
        onDidAccept, onDidHide,
        onDidChangeSelection: event(),
        onDidChangeValue: event(),
        show() { qp.visible = true; },
        hide() { if (qp.visible) { qp.visible = false; onDidHide.fire(); } },
        dispose() { qp.disposed = true; },
        // test hooks: what a person does
        pick(item) { qp.selectedItems = [item]; qp.activeItems = [item]; onDidAccept.fire(); },
        escape() { qp.hide(); },
      };
      state.quickPicks.push(qp);
      return qp;
    },
    withProgress(options, task) {
      const onCancel = event();
      const token = { isCancellationRequested: false, onCancellationRequested: onCancel };
      const entry = {
        options, reports: [], done: false,
        // test hook: the notification's Cancel button
        cancel() { if (!token.isCancellationRequested) { token.isCancellationRequested = true; onCancel.fire(); } },
      };
      state.progresses.push(entry);
      const promise = Promise.resolve(task({ report: (r) => entry.reports.push(r) }, token));
      promise.finally(() => { entry.done = true; }).catch(() => {});
      return promise;
    },
  };

  const workspace = {
    getConfiguration(section) {
      return { get: (key, fallback) => (`${section}.${key}` in state.settings ? state.settings[`${section}.${key}`] : fallback) };
    },
    async openTextDocument(options) {
      const doc = new TextDocument(options.content || '', `untitled:Untitled-${state.openedDocuments.length + 2}`, options.language);
      state.openedDocuments.push(doc);
      return doc;
    },
  };

  const commands = {
    registerCommand(name, fn) {
      state.commands.set(name, fn);
      return { dispose: () => state.commands.delete(name) };
    },
    async executeCommand(name, ...args) {
      if (name === 'undo') return window.activeTextEditor && window.activeTextEditor.document._undo();
      const fn = state.commands.get(name);
      if (!fn) throw new Error(`command '${name}' not found`);
      return fn(...args);
    },
  };

  const vscode = {
    window, workspace, commands, Position, Range, Selection,
    ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
    ViewColumn: { Active: -1, Beside: -2, One: 1, Two: 2 },
    Disposable: class { constructor(fn) { this.dispose = fn; } },
  };

  // test helpers
  const helpers = {
    state,
    openEditor(text, selection, uri) {
      const document = new TextDocument(text, uri);
      const editor = new TextEditor(document, selection);
      window.visibleTextEditors = [editor];
      window.activeTextEditor = editor;
      return editor;
    },
    TextDocument, TextEditor,
  };
  return { vscode, helpers };
}

/** Make `require('vscode')` return the stand-in. */
function install() {
  const { vscode, helpers } = createStub();
  const load = Module._load;
  Module._load = function (request, ...rest) {
    if (request === 'vscode') return vscode;
    return load.call(this, request, ...rest);
  };
  return { vscode, helpers };
}

module.exports = { install };
