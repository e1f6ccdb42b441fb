-- Headless scenario tests: Neovim's built-in LSP client (0.7.2 API, no plugin) drives
-- `parlance --stdio` as a plain language server, with the real model.
--
--   PARLANCE_BIN=... PARLANCE_TEST_OUT=result.txt PARLANCE_TEST_WORK=dir \
--     nvim --headless --clean -c 'luafile editors/neovim/test.lua'
--
-- Writes one line per case ("ok - …" / "not ok - …: reason") and a closing
-- "N passed, M failed" line to $PARLANCE_TEST_OUT, then quits (exit 1 on any failure).
-- PARLANCE_TEST_DRY=1 only checks that this file loads and the APIs it uses exist.
-- Every wait is for an observable event (the buffer changed, an answer or an error arrived,
-- progress ended); PARLANCE_TEST_LIMIT_MS (default 600000) only guards against a hang.

local api = vim.api
local BIN = os.getenv('PARLANCE_BIN') or 'parlance'
local OUT = os.getenv('PARLANCE_TEST_OUT') or 'nvim-test-result.txt'
local WORK = os.getenv('PARLANCE_TEST_WORK') or vim.fn.tempname()
local DAEMON_LOG = os.getenv('PARLANCE_TEST_LOG') or (WORK .. '/parlance.log')
local DAEMON_LOG_LEVEL = os.getenv('PARLANCE_TEST_LOG_LEVEL') or 'debug'
local NVIM_LOG_LEVEL = os.getenv('PARLANCE_TEST_NVIM_LOG_LEVEL') or 'debug'
local LIMIT = tonumber(os.getenv('PARLANCE_TEST_LIMIT_MS') or '') or 600000
local MAX_TOKENS = tonumber(os.getenv('PARLANCE_TEST_MAX_TOKENS') or '') or 128
local DRY = os.getenv('PARLANCE_TEST_DRY') == '1'

local TITLES = { 'Rewrite: formal', 'Rewrite: casual', 'Rewrite: diplomatic', 'Rewrite: empathetic',
  'Rewrite: direct', 'Shorter', 'Clearer' }
local KIND = 'refactor.rewrite'
local CONTENT_MODIFIED = -32801

-- A ~60-word casual business note (Markdown): title, blank, paragraph, blank, sign-off.
local PARAGRAPH = 'hey all, quick note on the Q3 launch. Priya and Tom met the vendor on tuesday and the '
  .. 'new date is march 14, about two weeks later than we said. the budget is still 48k but '
  .. 'shipping will cost roughly 3k more. sorry for the late notice, we should have flagged this '
  .. 'sooner. ping me if you have questions or want to join the call on friday.'
local SENTENCE = 'Priya and Tom met the vendor on tuesday and the new date is march 14, about two weeks '
  .. 'later than we said.'
local NOTE = { '# Launch update', '', PARAGRAPH, '', 'Thanks, Dana' }

-- A line with an emoji, CJK and a combining mark (e + U+0301) before the selected words,
-- multi-byte text after them, and multi-byte lines around it.
local MB_WORDS = 'please send the updated numbers to Maria before the review'
local MB_LINE = 'Status 😀 日本語 cafe\204\129: ' .. MB_WORDS .. ' — merci 🙏 東京です.'
local MB_NOTE = { '# Notes 📝 (draft)', MB_LINE, 'Ünïcödé after: ½ × 3 — naïve 👍🏽 한국어', 'end' }

------------------------------------------------------------------------------------------
-- Results

local out, passed, failed = {}, 0, 0
local function emit(line)
  table.insert(out, (line:gsub('\n', '\\n'))) -- writefile() would turn a newline into NUL
  vim.fn.writefile(out, OUT)
end

local function short(s, n)
  n = n or 400
  s = tostring(s)
  if #s > n then return s:sub(1, n) .. '…' end
  return s
end
local function ins(v, n) return short(vim.inspect(v, { newline = ' ', indent = '' }), n or 600) end

local Failure = {}
local function fail(fmt, ...)
  error(setmetatable({ msg = string.format(fmt, ...) }, Failure), 0)
end
local function check(cond, fmt, ...)
  if not cond then fail(fmt, ...) end
end

------------------------------------------------------------------------------------------
-- What the client saw: captured by wrapping (not replacing) Neovim's own behaviour.

local S = {
  notes = {},          -- vim.notify calls: { msg, level }
  progress = {},       -- $/progress: { token, kind, title, message }
  creates = {},        -- window/workDoneProgress/create tokens
  apply_requests = {}, -- workspace/applyEdit requests from the server
  edits = {},          -- every WorkspaceEdit Neovim applied (util.apply_workspace_edit)
  edit_errors = {},    -- errors applying them
  requests = {},       -- client.request calls: { method, params, err, result, done }
  client_errors = {},  -- on_error callbacks
  exited = nil,        -- { code, signal } once the daemon exits
  init = nil,          -- the initialize result
  select = nil,        -- the last code action menu: { items, opts, on_choice }
}

vim.notify = function(msg, level)
  table.insert(S.notes, { msg = tostring(msg), level = level })
end
vim.ui.select = function(items, opts, on_choice)
  S.select = { items = items, opts = opts, on_choice = on_choice }
end

local util = require('vim.lsp.util')
local orig_apply = util.apply_workspace_edit
util.apply_workspace_edit = function(edit, encoding)
  table.insert(S.edits, { edit = vim.deepcopy(edit), encoding = encoding })
  local ok, err = pcall(orig_apply, edit, encoding)
  if not ok then
    table.insert(S.edit_errors, tostring(err))
    error(err, 0)
  end
end

local function wrap_handler(method, record)
  return function(err, result, ctx, config)
    record(result)
    return vim.lsp.handlers[method](err, result, ctx, config)
  end
end
local handlers = {
  ['$/progress'] = wrap_handler('$/progress', function(r)
    local v = type(r) == 'table' and r.value or nil
    table.insert(S.progress, { token = r and r.token, kind = type(v) == 'table' and v.kind or nil,
      title = type(v) == 'table' and v.title or nil, message = type(v) == 'table' and v.message or nil })
  end),
  ['window/workDoneProgress/create'] = wrap_handler('window/workDoneProgress/create', function(r)
    table.insert(S.creates, r and r.token)
  end),
  ['workspace/applyEdit'] = wrap_handler('workspace/applyEdit', function(r)
    table.insert(S.apply_requests, vim.deepcopy(r))
  end),
}

------------------------------------------------------------------------------------------
-- Helpers

-- Waits until cond() returns a truthy value (or the daemon exits); LIMIT is only a hang guard.
local function wait(cond)
  local r
  vim.wait(LIMIT, function()
    r = cond()
    return r or S.exited ~= nil
  end, 20)
  if not r and S.exited then
    fail('the daemon exited (code %s, signal %s)', tostring(S.exited.code), tostring(S.exited.signal))
  end
  if not r then fail('nothing happened within %d ms', LIMIT) end
  return r
end

local function notes_since(n0)
  local t = {}
  for i = n0 + 1, #S.notes do table.insert(t, S.notes[i].msg) end
  return #t > 0 and table.concat(t, ' | ') or 'no messages'
end

local function lines_of(buf) return api.nvim_buf_get_lines(buf, 0, -1, true) end
local function text_of(buf) return table.concat(lines_of(buf), '\n') end

-- byte offset in the '\n'-joined text of (0-based row, 0-based byte col)
local function offset_of(lines, row, col)
  local o = 0
  for i = 1, row do o = o + #lines[i] + 1 end
  return o + col
end

local function first_diff(a, b)
  local i = 1
  while i <= #a and i <= #b and a:byte(i) == b:byte(i) do i = i + 1 end
  return string.format('first difference at byte %d: was %q, now %q', i - 1,
    a:sub(math.max(1, i - 20), i + 40), b:sub(math.max(1, i - 20), i + 40))
end

-- `before` with bytes [sb, eb) replaced must give `after`: the text outside byte-for-byte
-- the same, the inside non-blank (and different, when must_differ). Returns the new text.
local function check_replaced(before, sb, eb, after, must_differ)
  local prefix, old, suffix = before:sub(1, sb), before:sub(sb + 1, eb), before:sub(eb + 1)
  check(after:sub(1, #prefix) == prefix, 'the text before the range changed (%s)', first_diff(prefix, after))
  check(#after >= #prefix + #suffix and after:sub(#after - #suffix + 1) == suffix,
    'the text after the range changed (%s)', first_diff(suffix:reverse(), after:reverse()) .. ' [reversed]')
  local new = after:sub(#prefix + 1, #after - #suffix)
  check(new:find('%S') ~= nil, 'the range became blank: %q', new)
  if must_differ then check(new ~= old, 'the range is unchanged: %q', new) end
  return new
end

local function same_lines(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

-- The TextEdits of a WorkspaceEdit, whichever form the server chose.
local function text_edits(edit)
  local t = {}
  if type(edit) ~= 'table' then return t end
  if type(edit.documentChanges) == 'table' then
    for _, dc in ipairs(edit.documentChanges) do
      for _, e in ipairs(dc.edits or {}) do table.insert(t, { uri = dc.textDocument and dc.textDocument.uri, edit = e }) end
    end
  elseif type(edit.changes) == 'table' then
    for uri, es in pairs(edit.changes) do
      for _, e in ipairs(es) do table.insert(t, { uri = uri, edit = e }) end
    end
  end
  return t
end

local client_id, client

-- Opens `lines` as a Markdown file in the current window and attaches the client.
local doc_n = 0
local function open_doc(lines)
  doc_n = doc_n + 1
  local path = string.format('%s/note-%d.md', WORK, doc_n)
  vim.fn.writefile(lines, path)
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  local buf = api.nvim_get_current_buf()
  check(vim.bo[buf].filetype == 'markdown', 'filetype is %q, not markdown', vim.bo[buf].filetype)
  check(vim.lsp.buf_attach_client(buf, client_id), 'buf_attach_client failed')
  return buf
end

-- Requests code actions on a range the way a user does (vim.lsp.buf.range_code_action, marks
-- when no positions) and waits for the menu (vim.ui.select) or a message.
local function open_menu(start_pos, end_pos)
  S.select = nil
  local n0 = #S.notes
  local t0 = vim.loop.hrtime()
  if start_pos then
    vim.lsp.buf.range_code_action(nil, start_pos, end_pos)
  else
    vim.lsp.buf.range_code_action()
  end
  wait(function() return S.select ~= nil or #S.notes > n0 end)
  check(S.select ~= nil, 'no code action menu: %s', notes_since(n0))
  local menu = S.select
  menu.ms = math.floor((vim.loop.hrtime() - t0) / 1e6)
  menu.titles = {}
  for _, it in ipairs(menu.items) do table.insert(menu.titles, it[2].title) end
  return menu
end

local function check_menu(menu)
  local have = {}
  for _, t in ipairs(menu.titles) do have[t] = (have[t] or 0) + 1 end
  for _, t in ipairs(TITLES) do
    check(have[t] == 1, 'the menu lacks %q (offered: %s)', t, table.concat(menu.titles, ', '))
  end
  check(#menu.titles == #TITLES, 'the menu offers %d items, expected %d: %s', #menu.titles, #TITLES,
    table.concat(menu.titles, ', '))
  for _, it in ipairs(menu.items) do
    local a = it[2]
    check(a.kind == KIND, '%q has kind %s, expected %s', a.title, tostring(a.kind), KIND)
    check(a.edit == nil, '%q carries an edit although the client declared resolveSupport {edit}: %s', a.title, ins(a))
    check(a.command == nil, '%q carries a command although the client resolves: %s', a.title, ins(a))
    check(a.data ~= nil, '%q carries no data: %s', a.title, ins(a))
  end
end

-- Picks the item titled `title` as a user does in the menu; returns the request it caused.
local function pick(menu, title)
  for _, it in ipairs(menu.items) do
    if it[2].title == title then
      local r0 = #S.requests
      menu.on_choice(it)
      return S.requests[r0 + 1]
    end
  end
  fail('the menu has no %q: %s', title, table.concat(menu.titles, ', '))
end

-- Waits until every progress token begun after index p0 has ended; returns begins, reports, ends.
-- Called after the work was answered, so its begin has arrived.
local function await_progress(p0)
  local b, r, e
  local begun = false
  for i = p0 + 1, #S.progress do begun = begun or S.progress[i].kind == 'begin' end
  check(begun, 'no $/progress begin for the work (the client has window.workDoneProgress)')
  wait(function()
    local open = {}
    b, r, e = 0, 0, 0
    for i = p0 + 1, #S.progress do
      local p = S.progress[i]
      if p.kind == 'begin' then b = b + 1; open[p.token] = true
      elseif p.kind == 'report' then r = r + 1
      elseif p.kind == 'end' then e = e + 1; open[p.token] = nil end
    end
    return b > 0 and next(open) == nil
  end)
  return b, r, e
end

-- Whether the server answered `rec`. Neovim 0.7.2 drops an answer with error -32800
-- (RequestCancelled) without calling the handler; only client.requests shows the reply.
local function replied(rec)
  return rec.done or (rec.id ~= nil and client.requests[rec.id] == nil)
end

-- Waits for the answer to `rec` (or `also()`); fails if it was a muted -32800.
local function await_answer(rec, also)
  wait(function() return replied(rec) or (also and also()) end)
  wait(function() return replied(rec) end)
  if not rec.done then -- the handler, when there is one, is already queued behind the reply
    vim.wait(2000, function() return rec.done end, 10)
  end
  check(rec.done, '%s was answered with -32800 RequestCancelled, which Neovim 0.7.2 drops silently '
    .. '(the user sees nothing)', rec.method)
end

-- Runs `fn` on a resolved rewrite: picks `title`, waits for the buffer to change or the
-- resolve answer, and checks the answer is an edit that Neovim applied without error.
local function rewrite(buf, menu, title)
  local tick0, e0, n0 = api.nvim_buf_get_changedtick(buf), #S.edit_errors, #S.notes
  local t0 = vim.loop.hrtime()
  local rec = pick(menu, title)
  check(rec ~= nil, 'choosing %q sent no request (the action was applied as offered)', title)
  check(rec.method == 'codeAction/resolve', 'choosing %q sent %s, expected codeAction/resolve', title, rec.method)
  await_answer(rec, function() return api.nvim_buf_get_changedtick(buf) ~= tick0 or #S.edit_errors > e0 end)
  local secs = (vim.loop.hrtime() - t0) / 1e9
  check(rec.err == nil, 'codeAction/resolve failed: %s (messages: %s)', ins(rec.err), notes_since(n0))
  check(type(rec.result) == 'table' and type(rec.result.edit) == 'table',
    'codeAction/resolve answered without an edit: %s', ins(rec.result))
  check(#S.edit_errors == e0, 'Neovim could not apply the edit: %s; edit: %s', S.edit_errors[#S.edit_errors],
    ins(rec.result.edit))
  check(api.nvim_buf_get_changedtick(buf) ~= tick0, 'the buffer did not change; resolved action: %s', ins(rec.result))
  return rec, secs
end

-- Like rewrite(), but when the daemon's guard rejects the model's output (-32803
-- rewriteRejected, "try again or choose another action") picks the next title, as a user would.
local function rewrite_first(buf, menu, titles)
  local rejected = {}
  for i, title in ipairs(titles) do
    local ok, rec, secs = pcall(rewrite, buf, menu, title)
    if ok then return rec, secs, title, rejected end
    local last = S.requests[#S.requests]
    local err = last and last.method == 'codeAction/resolve' and last.err
    if i < #titles and err and err.code == -32803 and type(err.data) == 'table' and err.data.error == 'rewriteRejected' then
      table.insert(rejected, string.format('%s rejected (%s)', title, tostring(err.data.code)))
    else
      error(rec, 0)
    end
  end
end

local function check_single_edit(rec, uri, want_range)
  local es = text_edits(rec.result.edit)
  check(#es == 1, 'the WorkspaceEdit has %d text edits, expected 1: %s', #es, ins(rec.result.edit))
  check(es[1].uri == uri, 'the edit targets %s, expected %s', tostring(es[1].uri), uri)
  local r = es[1].edit.range
  check(r.start.line == want_range.start.line and r.start.character == want_range.start.character
    and r['end'].line == want_range['end'].line and r['end'].character == want_range['end'].character,
    'the edit replaces %s, expected %s (UTF-16)', ins(r), ins(want_range))
  return es[1].edit
end

------------------------------------------------------------------------------------------
-- Cases

local cases = {}
local function case(name, fn) table.insert(cases, { name = name, fn = fn }) end

case('initialize: standard LSP capabilities', function()
  local caps = S.init.capabilities
  local sync = caps.textDocumentSync
  check(type(sync) == 'table' and sync.openClose == true and sync.change == 2,
    'textDocumentSync is %s, expected {openClose=true, change=2}', ins(sync))
  local cap = caps.codeActionProvider
  check(type(cap) == 'table' and cap.resolveProvider == true and vim.tbl_contains(cap.codeActionKinds or {}, KIND),
    'codeActionProvider is %s', ins(cap))
  local ex = caps.executeCommandProvider
  check(type(ex) == 'table' and vim.tbl_contains(ex.commands or {}, 'parlance.rewrite'),
    'executeCommandProvider is %s', ins(ex))
  check(caps.positionEncoding == 'utf-16', 'positionEncoding is %s, expected "utf-16" (Neovim 0.7.2 offers none)',
    ins(caps.positionEncoding))
  return string.format('%s %s', S.init.serverInfo and S.init.serverInfo.name or '?',
    S.init.serverInfo and S.init.serverInfo.version or '')
end)

case('empty range: textDocument/codeAction offers no rewrite', function()
  local buf = open_doc(NOTE)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = { start = { line = 2, character = 10 }, ['end'] = { line = 2, character = 10 } },
    context = { diagnostics = {} },
  }
  local answer
  local t0 = vim.loop.hrtime()
  client.request('textDocument/codeAction', params, function(err, result) answer = { err = err, result = result } end, buf)
  await_answer(S.requests[#S.requests])
  check(answer.err == nil, 'error: %s', ins(answer.err))
  local titles = {}
  for _, a in ipairs(type(answer.result) == 'table' and answer.result or {}) do table.insert(titles, a.title) end
  check(#titles == 0, 'offered on an empty range: %s', table.concat(titles, ', '))
  return string.format('answered in %d ms', (vim.loop.hrtime() - t0) / 1e6)
end)

local progress_mark
case('rewrite formal: range_code_action menu → resolve → only the range replaced', function()
  local buf = open_doc(NOTE)
  local before = text_of(buf)
  local s = PARAGRAPH:find(SENTENCE, 1, true) - 1 -- 0-based byte column
  local menu = open_menu({ 3, s }, { 3, s + #SENTENCE - 1 })
  check_menu(menu)
  check(menu.ms < 30000, 'the menu took %d ms; code actions should answer at once', menu.ms)
  progress_mark = { p0 = #S.progress, c0 = #S.creates }
  local rec, secs = rewrite(buf, menu, 'Rewrite: formal')
  local uri = vim.uri_from_bufnr(buf)
  check_single_edit(rec, uri, { start = { line = 2, character = s }, ['end'] = { line = 2, character = s + #SENTENCE } })
  local new = check_replaced(before, offset_of(NOTE, 2, s), offset_of(NOTE, 2, s + #SENTENCE), text_of(buf), true)
  progress_mark.done = true
  return string.format('menu in %d ms, rewrite in %.1f s: %q', menu.ms, secs, short(new, 160))
end)

case('progress: workDoneProgress/create and $/progress begin … end around the rewrite', function()
  check(progress_mark and progress_mark.done, 'the rewrite case did not complete')
  local b, r, e = await_progress(progress_mark.p0)
  check(#S.creates > progress_mark.c0, 'no window/workDoneProgress/create (client has window.workDoneProgress)')
  local created = {}
  for i = progress_mark.c0 + 1, #S.creates do created[S.creates[i]] = true end
  for i = progress_mark.p0 + 1, #S.progress do
    local p = S.progress[i]
    check(created[p.token], '$/progress for token %s that was not created (created: %s)', ins(p.token), ins(S.creates))
  end
  return string.format('%d begin, %d report, %d end', b, r, e)
end)

case('multi-byte line: UTF-16 positions are right both ways', function()
  local buf = open_doc(MB_NOTE)
  -- the user types an emoji on that line first: an incremental didChange in UTF-16 units
  local at = MB_LINE:find('日本語', 1, true) - 1
  api.nvim_buf_set_text(buf, 1, at, 1, at, { '🎉 ' })
  local line = api.nvim_buf_get_lines(buf, 1, 2, true)[1]
  local before, lines = text_of(buf), lines_of(buf)
  local s = line:find(MB_WORDS, 1, true) - 1
  local e = s + #MB_WORDS
  local menu = open_menu({ 2, s }, { 2, e - 1 })
  local req = S.requests[#S.requests]
  local _, us = vim.str_utfindex(line, s)
  local _, ue = vim.str_utfindex(line, e)
  check(req and req.params.range.start.character == us and req.params.range['end'].character == ue,
    'Neovim itself sent %s, expected characters %d–%d', ins(req and req.params.range), us, ue)
  check(#menu.titles == #TITLES, 'the menu offers %s', table.concat(menu.titles, ', '))
  local p0 = #S.progress
  local rec, secs = rewrite(buf, menu, 'Rewrite: direct')
  check_single_edit(rec, vim.uri_from_bufnr(buf), { start = { line = 1, character = us }, ['end'] = { line = 1, character = ue } })
  local new = check_replaced(before, offset_of(lines, 1, s), offset_of(lines, 1, e), text_of(buf), false)
  -- text from outside the range in the rewrite means the daemon read the wrong slice
  for _, w in ipairs({ '😀', '🎉', '日本語', '🙏', '東京', '—', 'merci' }) do
    check(not new:find(w, 1, true), 'the rewrite contains %q from outside the range: %q', w, new)
  end
  await_progress(p0)
  return string.format('UTF-16 %d–%d (bytes %d–%d), rewrite in %.1f s: %q', us, ue, s, e, secs, short(new, 120))
end)

case('line-wise selection (V): the end one past the line is clamped to the line end', function()
  -- one sentence on its own line keeps the model's work short
  local LINES = { NOTE[1], '', SENTENCE, '', NOTE[5] }
  local buf = open_doc(LINES)
  local before = lines_of(buf)
  vim.cmd('normal! 3GV\27') -- select line 3 line-wise, as a user does, then leave Visual mode
  local menu = open_menu() -- from the '< '> marks, like :'<,'>lua vim.lsp.buf.range_code_action()
  local req = S.requests[#S.requests]
  local len16 = select(2, vim.str_utfindex(SENTENCE))
  check(req and req.params.range['end'].line == 2 and req.params.range['end'].character == len16 + 1,
    'Neovim sent %s; expected the end one past the line (character %d)', ins(req and req.params.range), len16 + 1)
  check(#menu.titles == #TITLES, 'the menu offers %s', table.concat(menu.titles, ', '))
  local p0 = #S.progress
  local rec, secs, title, rejected = rewrite_first(buf, menu, { 'Shorter', 'Clearer', 'Rewrite: formal' })
  check_single_edit(rec, vim.uri_from_bufnr(buf), { start = { line = 2, character = 0 }, ['end'] = { line = 2, character = len16 } })
  local after = lines_of(buf)
  check(#after >= #before and after[1] == before[1] and after[2] == before[2]
    and after[#after - 1] == before[4] and after[#after] == before[5],
    'lines outside the selection changed: %s', ins(after))
  local new = table.concat(vim.list_slice(after, 3, #after - 2), '\n')
  check(new:find('%S') ~= nil and new ~= SENTENCE, 'the line became %q', new)
  await_progress(p0)
  return string.format('%s%s in %.1f s: %q', #rejected > 0 and (table.concat(rejected, ', ') .. '; ') or '', title, secs,
    short(new, 120))
end)

-- Checks a resolve was refused as stale and nothing was applied.
local function check_refused(buf, rec, expected, e0, a0, n0)
  await_answer(rec)
  check(rec.err ~= nil, 'codeAction/resolve succeeded on a changed buffer: %s', ins(rec.result))
  check(rec.err.code == CONTENT_MODIFIED, 'error code %s, expected %d: %s', tostring(rec.err.code), CONTENT_MODIFIED, ins(rec.err))
  check(tostring(rec.err.message):lower():find('changed', 1, true) ~= nil, 'the message lacks "changed": %q', tostring(rec.err.message))
  -- the user is told (Neovim's on_user_choice notifies the error)
  local told = false
  for i = n0 + 1, #S.notes do
    if S.notes[i].msg:find(tostring(CONTENT_MODIFIED), 1, true) then told = true end
  end
  check(told, 'no error shown to the user: %s', notes_since(n0))
  check(#S.edits == e0, 'an edit was applied: %s', ins(S.edits[#S.edits]))
  check(#S.apply_requests == a0, 'the server sent workspace/applyEdit: %s', ins(S.apply_requests[#S.apply_requests]))
  check(same_lines(lines_of(buf), expected), 'the buffer is %s, expected %s', ins(lines_of(buf)), ins(expected))
  return string.format('%d: %s', rec.err.code, short(rec.err.message, 120))
end

case('stale: an edit before choosing → resolve refused (-32801), nothing applied', function()
  local buf = open_doc(NOTE)
  local s = PARAGRAPH:find(SENTENCE, 1, true) - 1
  local menu = open_menu({ 3, s }, { 3, s + #SENTENCE - 1 })
  -- while the menu is open, the user edits another line
  api.nvim_buf_set_lines(buf, 0, 1, true, { '# Launch update (draft 2)' })
  local expected = lines_of(buf)
  local e0, a0, n0 = #S.edits, #S.apply_requests, #S.notes
  local p0 = #S.progress
  local rec = pick(menu, 'Rewrite: casual')
  check(rec and rec.method == 'codeAction/resolve', 'choosing sent %s', ins(rec and rec.method))
  local r = check_refused(buf, rec, expected, e0, a0, n0)
  -- progress, if any was begun for it, must end too
  for i = p0 + 1, #S.progress do
    if S.progress[i].kind == 'begin' then await_progress(p0); break end
  end
  return r
end)

case('stale: an edit while the model works → resolve refused (-32801), nothing applied', function()
  local buf = open_doc(NOTE)
  local s = PARAGRAPH:find(SENTENCE, 1, true) - 1
  local menu = open_menu({ 3, s }, { 3, s + #SENTENCE - 1 })
  local e0, a0, n0 = #S.edits, #S.apply_requests, #S.notes
  local p0 = #S.progress
  local rec = pick(menu, 'Rewrite: empathetic')
  check(rec and rec.method == 'codeAction/resolve', 'choosing sent %s', ins(rec and rec.method))
  -- the model is working once its progress begins; then the user types on the last line
  wait(function()
    for i = p0 + 1, #S.progress do if S.progress[i].kind == 'begin' then return true end end
    return replied(rec)
  end)
  check(not replied(rec), 'resolve answered before any $/progress begin, so the buffer could not change while it '
    .. 'worked (answer: %s)', ins(rec.err or rec.result))
  api.nvim_buf_set_lines(buf, 4, 5, true, { 'Thanks, Dana (edited while the rewrite ran)' })
  local expected = lines_of(buf)
  local r = check_refused(buf, rec, expected, e0, a0, n0)
  await_progress(p0)
  return r
end)

-- A second daemon, for a client that does not resolve code actions and asks for two tones.
local cases2 = {}
local function case2(name, fn) table.insert(cases2, { name = name, fn = fn }) end
local TONES2 = { 'formal', 'casual' }
local TITLES2 = { 'Rewrite: formal', 'Rewrite: casual', 'Shorter', 'Clearer' }
local menu2, buf2

case2('initializationOptions.tones: only those tones offered; without resolveSupport each action has a command', function()
  buf2 = open_doc(NOTE)
  local s = PARAGRAPH:find(SENTENCE, 1, true) - 1
  menu2 = open_menu({ 3, s }, { 3, s + #SENTENCE - 1 })
  menu2.s = s
  check(table.concat(menu2.titles, '|') == table.concat(TITLES2, '|'), 'the menu offers %s, expected %s',
    table.concat(menu2.titles, ', '), table.concat(TITLES2, ', '))
  for _, it in ipairs(menu2.items) do
    local a = it[2]
    check(a.kind == KIND, '%q has kind %s', a.title, tostring(a.kind))
    check(a.edit == nil, '%q carries an edit: %s', a.title, ins(a))
    check(type(a.command) == 'table' and a.command.command == 'parlance.rewrite' and type(a.command.arguments) == 'table'
      and #a.command.arguments >= 1, '%q has no parlance.rewrite command: %s', a.title, ins(a))
  end
  return table.concat(menu2.titles, ', ')
end)

case2('without resolve: workspace/executeCommand answers null at once, then workspace/applyEdit replaces the range', function()
  check(menu2 ~= nil, 'no menu from the previous case')
  local action
  for _, it in ipairs(menu2.items) do if it[2].title == 'Rewrite: casual' then action = it[2] end end
  check(action ~= nil and type(action.command) == 'table', 'no "Rewrite: casual" with a command: %s', ins(action))
  local before = text_of(buf2)
  local a0, tick0, p0 = #S.apply_requests, api.nvim_buf_get_changedtick(buf2), #S.progress
  local t0 = vim.loop.hrtime()
  -- what Neovim's apply_action sends for a command when the server does not resolve
  client.request('workspace/executeCommand', { command = action.command.command, arguments = action.command.arguments },
    function() end, buf2)
  local rec = S.requests[#S.requests]
  await_answer(rec)
  local ms = (vim.loop.hrtime() - t0) / 1e6
  check(rec.err == nil, 'workspace/executeCommand failed: %s', ins(rec.err))
  check(rec.result == nil or rec.result == vim.NIL, 'workspace/executeCommand answered %s, expected null', ins(rec.result))
  check(#S.apply_requests == a0, 'workspace/applyEdit came before the executeCommand answer (not "at once")')
  wait(function() return #S.apply_requests > a0 end)
  local req = S.apply_requests[a0 + 1]
  -- Neovim's own handler applies it (synchronously, on the request)
  wait(function() return api.nvim_buf_get_changedtick(buf2) ~= tick0 end)
  local secs = (vim.loop.hrtime() - t0) / 1e9
  check(#S.apply_requests == a0 + 1, '%d workspace/applyEdit requests, expected 1', #S.apply_requests - a0)
  local es = text_edits(req.edit)
  local s = menu2.s
  check(#es == 1 and es[1].uri == vim.uri_from_bufnr(buf2) and es[1].edit.range.start.line == 2
    and es[1].edit.range.start.character == s and es[1].edit.range['end'].line == 2
    and es[1].edit.range['end'].character == s + #SENTENCE, 'workspace/applyEdit carries %s', ins(req))
  local new = check_replaced(before, offset_of(NOTE, 2, s), offset_of(NOTE, 2, s + #SENTENCE), text_of(buf2), true)
  await_progress(p0)
  return string.format('executeCommand answered in %d ms, applyEdit after %.1f s: %q', ms, secs, short(new, 120))
end)

------------------------------------------------------------------------------------------
-- Run

local function finish()
  emit(string.format('%d passed, %d failed', passed, failed))
  if failed == 0 then vim.cmd('qall!') else vim.cmd('cquit 1') end
end

local function run_case(c)
  local t0 = vim.loop.hrtime()
  local ok, res = xpcall(c.fn, function(e)
    if getmetatable(e) == Failure then return e.msg end
    return 'script error: ' .. debug.traceback(tostring(e), 2)
  end)
  local secs = (vim.loop.hrtime() - t0) / 1e9
  if ok then
    passed = passed + 1
    emit(string.format('ok - %s (%.1f s)%s', c.name, secs, res and (': ' .. tostring(res)) or ''))
  else
    failed = failed + 1
    emit(string.format('not ok - %s: %s', c.name, tostring(res):gsub('\n', ' | ')))
  end
end

local function start(opts)
  S.init, S.exited, S.client_errors = nil, nil, {}
  client_id = vim.lsp.start_client({
    name = opts.name,
    cmd = { BIN, '--stdio', '--log-file', DAEMON_LOG, '--log-level', DAEMON_LOG_LEVEL },
    root_dir = WORK,
    capabilities = opts.capabilities,
    init_options = opts.init_options,
    handlers = handlers,
    on_init = function(_, result) S.init = result end,
    on_error = function(code, err)
      table.insert(S.client_errors, string.format('%s: %s', tostring(vim.lsp.client_errors[code] or code), tostring(err)))
    end,
    on_exit = function(code, signal) S.exited = { code = code, signal = signal } end,
  })
  if not client_id then
    return false, 'vim.lsp.start_client failed: ' .. notes_since(0)
  end
  local ok, err = pcall(wait, function() return S.init or #S.client_errors > 0 end)
  if not S.init then
    return false, string.format('initialize failed: %s; client errors: %s; messages: %s',
      ok and '' or tostring(type(err) == 'table' and err.msg or err),
      table.concat(S.client_errors, ' | '), notes_since(0))
  end
  client = vim.lsp.get_client_by_id(client_id)
  if not client then return false, 'no client object after initialize' end
  -- record every request Neovim sends (and its answer), then hand it on unchanged
  local orig_request = client.request
  client.request = function(method, params, handler, bufnr)
    local rec = { method = method, params = vim.deepcopy(params) }
    table.insert(S.requests, rec)
    local h = handler or client.handlers[method] or vim.lsp.handlers[method]
    local ok, id = orig_request(method, params, function(err, result, ctx, config)
      rec.err, rec.result = err, result
      local r = { pcall(h, err, result, ctx, config) }
      rec.done = true
      if not r[1] then error(r[2], 0) end
      return unpack(r, 2)
    end, bufnr)
    rec.id = ok and id or nil
    return ok, id
  end
  return true
end

-- Starts a daemon with `opts`, runs `list`, then shuts the daemon down (one daemon at a time).
local function phase(opts, list)
  local t0 = vim.loop.hrtime()
  local ok, why = start(opts)
  if not ok then
    failed = failed + 1
    emit(string.format('not ok - start and initialize the daemon (%s): %s', opts.name, tostring(why):gsub('\n', ' | ')))
    emit('# daemon log: ' .. DAEMON_LOG .. '; Neovim LSP log (daemon stderr): ' .. vim.lsp.get_log_path())
    if client_id then pcall(vim.lsp.stop_client, client_id, true) end
    return false
  end
  emit(string.format('# %s: initialized in %.1f s', opts.name, (vim.loop.hrtime() - t0) / 1e9))
  for _, c in ipairs(list) do
    if S.exited then
      failed = failed + 1
      emit(string.format('not ok - %s: the daemon had exited (code %s, signal %s)', c.name,
        tostring(S.exited.code), tostring(S.exited.signal)))
    else
      run_case(c)
    end
  end
  -- shutdown + exit: the daemon must exit by itself, cleanly
  run_case({ name = 'shutdown (' .. opts.name .. '): the daemon exits cleanly', fn = function()
    check(not S.exited, 'it had already exited')
    vim.lsp.stop_client(client_id)
    local t1 = vim.loop.hrtime()
    vim.wait(60000, function() return S.exited ~= nil end, 20)
    if not S.exited then
      vim.lsp.stop_client(client_id, true)
      fail('still running 60 s after shutdown/exit')
    end
    check(S.exited.code == 0 and S.exited.signal == 0, 'exit code %s, signal %s', tostring(S.exited.code),
      tostring(S.exited.signal))
    return string.format('in %d ms', (vim.loop.hrtime() - t1) / 1e6)
  end })
  if not S.exited then -- never two daemons at once
    pcall(vim.lsp.stop_client, client_id, true)
    vim.wait(10000, function() return S.exited ~= nil end, 20)
  end
  return true
end

local function main()
  vim.o.hidden = true
  vim.o.more = false
  vim.fn.mkdir(WORK, 'p')
  vim.lsp.set_log_level(NVIM_LOG_LEVEL)
  if not phase({ name = 'parlance', init_options = { audience = 'peer', language = 'en', maxTokens = MAX_TOKENS } },
    cases) then return end
  -- a client that declares no codeAction.resolveSupport and asks for two tones
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.textDocument.codeAction.resolveSupport = nil
  phase({ name = 'parlance-noresolve', capabilities = caps,
    init_options = { tones = TONES2, audience = 'peer', language = 'en', maxTokens = MAX_TOKENS } }, cases2)
end

if DRY then
  for _, f in ipairs({ 'start_client', 'buf_attach_client', 'stop_client', 'get_client_by_id', 'set_log_level' }) do
    assert(type(vim.lsp[f]) == 'function', 'vim.lsp.' .. f)
  end
  assert(type(vim.lsp.buf.range_code_action) == 'function', 'vim.lsp.buf.range_code_action')
  assert(type(vim.wait) == 'function' and type(vim.str_utfindex) == 'function')
  emit(string.format('# dry run: %d cases defined', #cases + #cases2 + 2))
  vim.cmd('qall!')
  return
end

local ok, err = xpcall(main, debug.traceback)
if not ok then
  failed = failed + 1
  emit('not ok - test script: ' .. tostring(err):gsub('\n', ' | '))
end
pcall(vim.lsp.stop_client, client_id or 0, true)
finish()
